package mblb

import (
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/sflow"
)

// sflowPicked marks a request the virtual's sFlow sampler picked as it
// leaves for its member: its answer becomes a flow sample, timed from now
// (the request-log profile's logAt, which it shares).
func (s *ClientConn) sflowPicked(m *msg) {
	m.hx.sflow = true
	if m.hx.logAt == 0 {
		m.hx.logAt = time.Now().UnixNano()
	}
}

// sflowSample sends the flow sample of a picked request whose answer b
// (h) arrived on sc. Only requests sent to members are sampled [M: the
// answers the proxy makes itself (HTTP::respond, the cache, redirects)
// are not]; req_bytes is the request body the proxy held, resp_bytes
// the answer's Content-Length or, without one, its body as read.
func (sc *serverConn) sflowSample(sf *sflow.Sampler, req *msg, b []byte, h *httpx.Head) {
	req.hx.sflow = false
	if sf == nil {
		return
	}
	s := req.sess
	resp := int64(len(b) - h.HeaderEnd)
	if h.ContentLength >= 0 {
		resp = h.ContentLength
	}
	hs := sflow.HTTPSample{Request: req.b[:req.hx.hlen], Response: b[h.Start:h.HeaderEnd], Status: h.Status,
		ReqBytes: uint64(max(len(req.b)-req.hx.hlen, 0)), RespBytes: uint64(max(resp, 0)),
		Local: s.local, Remote: s.client}
	if req.hx.logAt != 0 {
		hs.Duration = time.Since(time.Unix(0, req.hx.logAt))
	}
	sf.Sample(&hs)
}
