package mblb

import (
	"bytes"

	"github.com/openltm/openltm/dataplane/httpx"
)

// ResponseFields is what the http profile removes from the members'
// responses: fields not in response-headers-permitted (when it lists
// any) and, with via-response remove, Via. The fields that frame the
// message (Content-Length, Transfer-Encoding, Connection) always stay,
// whatever the list says [M]: without them the client could not read
// the answer.
type ResponseFields struct {
	// Permitted are the fields kept, in lower case; nil keeps all.
	Permitted map[string]bool
	DropVia   bool
}

// Keep implements httpx.FieldKeeper.
func (f *ResponseFields) Keep(name []byte) bool {
	lower := bytes.ToLower(name) // (short names; the rare path)
	switch string(lower) {
	case "via":
		return !f.DropVia && (f.Permitted == nil || f.Permitted["via"])
	case "content-length", "transfer-encoding", "connection":
		return true
	}
	return f.Permitted == nil || f.Permitted[string(lower)]
}

// filterResponseFields is the response head without the fields the
// profile removes; ok false (and no copy) when it has none of them.
func (sc *serverConn) filterResponseFields(head []byte) ([]byte, bool) {
	rf := sc.e.cfg.Request.HTTP.ResponseFields
	drop := false
	httpx.Fields(head, len(head), func(n, _ []byte, _, _ int) bool {
		drop = !rf.Keep(n)
		return !drop
	})
	if !drop {
		return head, false
	}
	sc.fieldHead = httpx.FilterFields(sc.fieldHead[:0], head, rf)
	return sc.fieldHead, true
}
