package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// A request whose body passes the engine's message limit (an upload) is
// streamed to its member (mblb's upload.go). A rule that collects it
// (HTTP::collect in HTTP_REQUEST) gets its start: the engine holds up to
// the limit before HTTP_REQUEST when the rules handle HTTP_REQUEST_DATA,
// and HTTP_REQUEST_DATA runs once with at most the collected length of
// it, de-chunked, as HTTP::payload. The rest of the body streams on
// unchanged; replacing the payload of such a request is refused, since
// most of it has not arrived.

var (
	_ mblb.HTTPCollector         = (*httpRules)(nil)
	_ mblb.HTTPResponseCollector = (*httpRules)(nil)
)

// CollectsRequests implements mblb.HTTPCollector.
func (h *httpRules) CollectsRequests() bool {
	prog := irules.Program(h.rules)
	return prog != nil && prog.Handles(rules.HTTPRequestData)
}

// CollectsResponses implements mblb.HTTPResponseCollector.
func (h *httpRules) CollectsResponses() bool {
	prog := irules.Program(h.rules)
	return prog != nil && prog.Handles(rules.HTTPResponseData)
}

// errPartialReplace refuses HTTP::payload replace on a streamed body.
var errPartialReplace = errors.New("HTTP::payload replace: the body is streamed (over the maximum message size); only its start was collected")

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
		return nil
	}
	if n > 0 && n < len(b) {
		b = b[:n]
	}
	h.payload = append(h.payload[:0], b...)
	return nil
}
