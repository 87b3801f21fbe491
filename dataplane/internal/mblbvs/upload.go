package mblbvs

import (
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// A request whose body passes the engine's message limit (an upload) is
// streamed to its member (mblb's upload.go). A rule that collects it
// (HTTP::collect N in HTTP_REQUEST) gets its start: the engine reads N
// bytes of it (at most the limit with the head), and HTTP_REQUEST_DATA
// runs with them, de-chunked, as HTTP::payload; HTTP::collect there reads
// more and runs it again. HTTP::payload replace of that start sends the
// replacement in its place, and the rest of the body streams on
// unchanged behind it (re-framed by the engine). A large response's
// start is collected the same way, once.

var (
	_ mblb.HTTPCollector         = (*httpRules)(nil)
	_ mblb.HTTPResponseCollector = (*httpRules)(nil)
)

// CollectsRequests implements mblb.HTTPCollector.
func (h *httpRules) CollectsRequests() bool {
	prog := irules.Program(h.rules)
	return prog != nil && prog.Handles(rules.HTTPRequestData) || h.handlesJSON&1 != 0 || h.xml != nil // xml.go
}

// CollectsResponses implements mblb.HTTPResponseCollector.
func (h *httpRules) CollectsResponses() bool {
	prog := irules.Program(h.rules)
	return prog != nil && prog.Handles(rules.HTTPResponseData) || h.handlesJSON&2 != 0
}

// partialPayload sets the payload of a DATA event for a streamed body:
// what the engine holds of it, de-chunked, cut to the collect length.
func (h *httpRules) partialPayload(x *mblb.HTTPEvent) error {
	n := h.collectLen
	if n < 0 {
		n = 0
	}
	b := x.Body()
	if x.Head().Chunked {
		var err error
		if h.payload, err = httpx.DechunkPrefix(h.payload[:0], b, n); err != nil {
			return err
		}
		h.partialK = len(h.payload)
		return nil
	}
	if n > 0 && n < len(b) {
		b = b[:n]
	}
	h.payload = append(h.payload[:0], b...)
	h.partialK = len(h.payload)
	return nil
}
