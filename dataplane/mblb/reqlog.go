package mblb

import (
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/reqlog"
)

// RequestLog is an HTTP virtual's request-log profile as the engine
// applies it: a line per request when it is sent to its member, and per
// response when it arrives, each to its pool over high-speed logging.
// Logging never holds a message up: a line the sender cannot queue is
// dropped (and counted by the sender).
type RequestLog struct {
	// Request and Response are the templates; nil: that logging is
	// disabled.
	Request, Response *reqlog.Template
	// SendRequest and SendResponse queue a line for the logging pool.
	SendRequest, SendResponse func([]byte) bool
	// VirtualName, PoolName (the virtual's default pool) and Hostname
	// fill $VIRTUAL_NAME, $VIRTUAL_POOL_NAME and $BIGIP_HOSTNAME.
	VirtualName, PoolName, Hostname string
}

// logRequest writes the request line of m, about to go to sc.
func (s *ClientConn) logRequest(rl *RequestLog, m *msg, sc *serverConn) {
	now := time.Now()
	m.hx.logAt = now.UnixNano()
	if rl.Request == nil || rl.SendRequest == nil {
		return
	}
	r := reqlog.Record{Client: s.client, Virtual: s.local, Server: sc.leg.Remote, SNAT: sc.leg.Local,
		VirtualName: rl.VirtualName, PoolName: rl.PoolName, Hostname: rl.Hostname,
		Request: m.b[:m.hx.hlen], KeepAlive: !m.httpClose, Start: now, Now: now}
	rl.SendRequest(rl.Request.Append(make([]byte, 0, 256), &r))
}

// logResponse writes the response line of the response b (h) to req,
// which came on sc.
func (sc *serverConn) logResponse(rl *RequestLog, req *msg, b []byte, h *httpx.Head) {
	if rl.Response == nil || rl.SendResponse == nil {
		return
	}
	s := req.sess
	size := int64(len(b) - h.Start)
	if sc.strm.head && h.ContentLength > 0 {
		// A streamed answer: its length as it says [M].
		size = int64(h.HeaderEnd-h.Start) + h.ContentLength
	}
	now := time.Now()
	r := reqlog.Record{Client: s.client, Virtual: s.local, Server: sc.leg.Remote, SNAT: sc.leg.Local,
		VirtualName: rl.VirtualName, PoolName: rl.PoolName, Hostname: rl.Hostname,
		Request: req.b[:req.hx.hlen], Response: b[h.Start:h.HeaderEnd], KeepAlive: !req.httpClose,
		ResponseSize: size, Now: now}
	if req.hx.logAt != 0 {
		r.Start = time.Unix(0, req.hx.logAt)
	}
	rl.SendResponse(rl.Response.Append(make([]byte, 0, 256), &r))
}
