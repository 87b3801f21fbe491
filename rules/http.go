package rules

import (
	"bytes"
	"errors"
	"strconv"

	"github.com/openltm/openltm/dataplane/httpx"
)

// HTTPConn is implemented by a Conn on a virtual server with an http
// profile, and found by type assertion as PersistConn is: a Conn without it
// makes every HTTP:: command a Tcl error. The dataplane owns the heads: it
// hands the rules a parsed request or response (HTTPHead.Reset) before the
// event, and after the event writes HTTPHead.AppendTo instead of the
// original head when Modified reports edits, then performs the actions
// recorded with HTTPDo.
type HTTPConn interface {
	// HTTPRequest is the head of the current request: the one HTTP_REQUEST
	// announced, until its response is complete; nil before the first.
	HTTPRequest() *HTTPHead
	// HTTPResponse is the head of the current response, nil until
	// HTTP_RESPONSE (HTTP_RESPONSE_CONTINUE: the interim 100 response).
	HTTPResponse() *HTTPHead
	// HTTPRequestNum is the current request's number on this client
	// connection, from 1.
	HTTPRequestNum() int
	// HTTPDo records an HTTP action, performed when the event returns. An
	// error (an action not valid in this event) becomes a Tcl error.
	HTTPDo(a HTTPAction) error
}

// HTTPServerAgent is implemented by an HTTPConn whose http profile
// names the Server header of the answers rules make (server-agent-name):
// "" sends none. Without it, HTTP::respond says "Server: BigIP", the
// profile's default.
type HTTPServerAgent interface {
	HTTPServerAgent() string
}

// HTTPBasicAuthRealm is implemented by an HTTPConn whose http profile
// names the realm of the 401s rules answer with (basic-auth-realm): a
// 401 without its own WWW-Authenticate (the built-in _sys_auth_ldap and
// _sys_auth_radius send one) asks for Basic credentials in that realm.
// Without it, or with "", the realm is empty, as BIG-IP's default
// profile sends.
type HTTPBasicAuthRealm interface {
	HTTPBasicAuthRealm() string
}

// HTTPActionKind says what an HTTPAction asks of the HTTP proxy.
type HTTPActionKind uint8

// The actions of the HTTP:: and ONECONNECT:: commands.
const (
	// HTTPRespond sends Data, a complete response, to the client instead
	// of the server's (HTTP::respond, HTTP::redirect); the request is not
	// sent to a server. KeepAlive says whether the client connection
	// stays open afterwards; Reset asks for a reset after it instead.
	HTTPRespond HTTPActionKind = iota
	// HTTPClose closes the client connection once the current response is
	// sent (HTTP::close).
	HTTPClose
	// HTTPCollect holds the message body until Length bytes of it (the
	// whole body when Length < 0) are buffered, then raises
	// HTTP_REQUEST_DATA or HTTP_RESPONSE_DATA; Response says which.
	HTTPCollect
	// HTTPRelease lets a collected body go on (HTTP::release).
	HTTPRelease
	// HTTPDisable stops HTTP processing for the rest of the connection,
	// which then passes bytes through; Discard drops the connection's
	// HTTP state without passing through (HTTP::disable discard).
	HTTPDisable
	// HTTPEnable turns HTTP processing back on (HTTP::enable).
	HTTPEnable
	// HTTPRetry sends Data, a complete request, to the server again in
	// place of the request that got this response (HTTP::retry).
	HTTPRetry
	// HTTPFallback sends a redirect to Text when no member can serve the
	// request (HTTP::fallback).
	HTTPFallback
	// OneConnectDetach turns per-request server detaching on or off
	// (Enable) for this client connection (ONECONNECT::detach).
	OneConnectDetach
	// OneConnectReuse says whether the server connection may go back to
	// the reuse pool after this response (ONECONNECT::reuse).
	OneConnectReuse
	// OneConnectLabel tags the server connection with Text, so that only
	// requests with the same label reuse it (ONECONNECT::label).
	OneConnectLabel
	// NTLMSwitch turns the ntlm profile's binding of authenticated member
	// connections on or off (Enable) for this client connection
	// (NTLM::enable, NTLM::disable).
	NTLMSwitch
	// OneConnectSelect keys the client's server connections by each
	// request's persistence key from this request on (Enable:
	// ONECONNECT::select persist), or stops (none).
	OneConnectSelect
)

var httpActionNames = [...]string{"HTTP::respond", "HTTP::close", "HTTP::collect", "HTTP::release", "HTTP::disable", "HTTP::enable", "HTTP::retry", "HTTP::fallback", "ONECONNECT::detach", "ONECONNECT::reuse", "ONECONNECT::label", "NTLM::enable|disable", "ONECONNECT::select"}

func (k HTTPActionKind) String() string {
	if int(k) < len(httpActionNames) {
		return httpActionNames[k]
	}
	return "unknown"
}

// HTTPAction is one HTTP action a rule took. It is a value type, like
// Decision.
type HTTPAction struct {
	Kind HTTPActionKind
	// Status is the status code of a response a rule sends.
	Status int
	// Data is the complete response to send or request to retry.
	Data []byte
	// Text is the fallback host or the OneConnect label.
	Text string
	// Length is how much body to collect (-1: all of it).
	Length int
	// Response: the action is about the response (a collect in
	// HTTP_RESPONSE).
	Response bool
	// KeepAlive: the client connection stays open after a rule's response.
	KeepAlive bool
	// Reset: reset the client connection after a rule's response.
	Reset bool
	// Enable is the on/off of ONECONNECT::detach and reuse; for
	// HTTPDisable it means "discard".
	Enable bool
}

// span is a byte range of HTTPHead.data.
type span struct{ off, end int32 }

func (s span) len() int { return int(s.end - s.off) }

// hfield is one header field of an HTTPHead.
type hfield struct {
	// line is the field's original line without its end, when unchanged;
	// off < 0 once the field was edited or for an inserted field.
	line    span
	name    span
	value   span
	removed bool
}

// HTTPHead is the reference view of one HTTP/1.x message head that HTTP::
// commands read and edit: it holds a copy of the head, indexes its start
// line and fields once, and keeps edits beside the original bytes, so that
// reading allocates nothing and an unedited head is written back as it
// came. One HTTPHead per connection and direction can be reused for every
// message (Reset keeps its buffers).
type HTTPHead struct {
	data     []byte
	head     httpx.Head
	response bool
	// start line: method, target and version of a request; version,
	// status code and reason of a response.
	startLine span
	part      [3]span
	startEdit bool
	fields    []hfield
	edited    bool
	// reframed: an edit may have changed the facts head holds (the start
	// line, a field that frames the message or names its connection's
	// fate) or put a line break in the head (FramingKept).
	reframed bool
	// gen counts edits, so that a dataplane applying edits at several
	// points (HTTP_REQUEST, then LB_SELECTED) sees the ones made since.
	gen uint32
}

// ErrNoHead is returned by Reset for bytes that hold no complete head.
var ErrNoHead = errors.New("rules: no complete HTTP head")

// Reset makes h the view of the message head at the start of b (a request
// unless response is set). Only the head is copied; b may hold the body or
// more. It fails on a malformed head, leaving h empty.
func (h *HTTPHead) Reset(b []byte, response bool) error {
	var head httpx.Head
	var err error
	if response {
		head, err = httpx.ParseResponse(b)
	} else {
		head, err = httpx.ParseRequest(b)
	}
	if err != nil {
		h.data, h.fields, h.head, h.edited = h.data[:0], h.fields[:0], httpx.Head{}, false
		return err
	}
	h.ResetParsed(b, &head, response)
	return nil
}

// ResetParsed is Reset for a head the dataplane's framer has already
// parsed (httpx.RequestFramer.Last, ResponseFramer.Last): b starts with
// the head that head describes. It does not parse again and, once h's
// buffers have grown to the size of the heads seen, allocates nothing.
func (h *HTTPHead) ResetParsed(b []byte, head *httpx.Head, response bool) {
	h.data = h.data[:0]
	h.fields = h.fields[:0]
	h.startEdit, h.edited, h.reframed, h.response = false, false, false, response
	h.head = *head
	h.data = append(h.data, b[:h.head.HeaderEnd]...)
	d := h.data
	le := bytes.IndexByte(d, '\n')
	end := le
	if end > 0 && d[end-1] == '\r' {
		end--
	}
	h.startLine = span{0, int32(end)}
	l := d[:end]
	sp1 := bytes.IndexByte(l, ' ')
	if response {
		// HTTP/1.1 200 Reason
		h.part[0] = span{0, int32(sp1)}
		h.part[1] = span{int32(sp1 + 1), int32(min(sp1+4, end))}
		r := min(sp1+5, end)
		h.part[2] = span{int32(r), int32(end)}
	} else {
		sp2 := bytes.LastIndexByte(l, ' ')
		h.part[0] = span{0, int32(sp1)}
		h.part[1] = span{int32(sp1 + 1), int32(sp2)}
		h.part[2] = span{int32(sp2 + 1), int32(end)}
	}
	// The framer validated the fields: they are indexed without checking
	// them again (no closure, no token test), one pass over the lines.
	for i := le + 1; i < len(d); {
		k := bytes.IndexByte(d[i:], '\n')
		if k < 0 {
			break
		}
		next, stop := i+k+1, i+k
		if stop > i && d[stop-1] == '\r' {
			stop--
		}
		if stop == i {
			break // the blank line
		}
		c := bytes.IndexByte(d[i:stop], ':')
		if c <= 0 {
			break // not reached for a head the framer accepted
		}
		vo, ve := i+c+1, stop
		for vo < ve && (d[vo] == ' ' || d[vo] == '\t') {
			vo++
		}
		for ve > vo && (d[ve-1] == ' ' || d[ve-1] == '\t') {
			ve--
		}
		h.fields = append(h.fields, hfield{
			line:  span{int32(i), int32(stop)},
			name:  span{int32(i), int32(i + c)},
			value: span{int32(vo), int32(ve)},
		})
		i = next
	}
}

// Head returns the framing facts of the message as it arrived.
func (h *HTTPHead) Head() *httpx.Head { return &h.head }

// IsResponse reports whether the head is a response's.
func (h *HTTPHead) IsResponse() bool { return h.response }

// Modified reports whether a rule changed the head.
func (h *HTTPHead) Modified() bool { return h.edited }

// Gen counts the edits made to the head; it only grows (a reset keeps
// it), so a change of Gen means edits since it was last read.
func (h *HTTPHead) Gen() uint32 { return h.gen }

func (h *HTTPHead) bytes(s span) []byte { return h.data[s.off:s.end] }

// add appends text to the working buffer and returns its span.
func (h *HTTPHead) add(parts ...string) span {
	off := len(h.data)
	for _, p := range parts {
		h.data = append(h.data, p...)
	}
	return span{int32(off), int32(len(h.data))}
}

// AppendTo appends the head as it now is, blank line included, to dst.
// An unedited head is its original bytes.
func (h *HTTPHead) AppendTo(dst []byte) []byte {
	if !h.edited {
		return append(dst, h.data[:h.head.HeaderEnd]...)
	}
	if h.startEdit {
		dst = append(dst, h.bytes(h.part[0])...)
		dst = append(dst, ' ')
		dst = append(dst, h.bytes(h.part[1])...)
		if !h.response || h.part[2].len() > 0 {
			dst = append(dst, ' ')
			dst = append(dst, h.bytes(h.part[2])...)
		}
	} else {
		dst = append(dst, h.bytes(h.startLine)...)
	}
	dst = append(dst, "\r\n"...)
	for i := range h.fields {
		f := &h.fields[i]
		if f.removed {
			continue
		}
		if f.line.off >= 0 {
			dst = append(dst, h.bytes(f.line)...)
		} else {
			dst = append(dst, h.bytes(f.name)...)
			dst = append(dst, ": "...)
			dst = append(dst, h.bytes(f.value)...)
		}
		dst = append(dst, "\r\n"...)
	}
	return append(dst, "\r\n"...)
}

// String is the head as it now is.
func (h *HTTPHead) String() string { return string(h.AppendTo(nil)) }

// Method is a request's method.
func (h *HTTPHead) Method() []byte {
	if h.response {
		return nil
	}
	return h.bytes(h.part[0])
}

// URI is a request's target as the request line has it.
func (h *HTTPHead) URI() []byte {
	if h.response {
		return nil
	}
	return h.bytes(h.part[1])
}

// Path is the request target up to the query.
func (h *HTTPHead) Path() []byte {
	u := h.URI()
	if i := bytes.IndexByte(u, '?'); i >= 0 {
		return u[:i]
	}
	return u
}

// Query is the request target after the "?", empty without one.
func (h *HTTPHead) Query() []byte {
	u := h.URI()
	if i := bytes.IndexByte(u, '?'); i >= 0 {
		return u[i+1:]
	}
	return nil
}

// Version is the message's HTTP version, "1.1" or "1.0".
func (h *HTTPHead) Version() []byte {
	v := h.bytes(h.part[0])
	if !h.response {
		v = h.bytes(h.part[2])
	}
	return bytes.TrimPrefix(v, []byte("HTTP/"))
}

// Status is a response's status code.
func (h *HTTPHead) Status() int {
	if !h.response {
		return 0
	}
	n, _ := strconv.Atoi(string(h.bytes(h.part[1])))
	return n
}

// SetURI replaces a request's target.
func (h *HTTPHead) SetURI(u string) {
	h.part[1] = h.add(u)
	h.startEdit, h.edited, h.reframed = true, true, true
	h.gen++
}

// SetPath replaces the target's path, keeping its query.
func (h *HTTPHead) SetPath(p string) {
	q := h.Query()
	if h.hasQuery() {
		h.part[1] = h.add(p, "?", string(q))
	} else {
		h.part[1] = h.add(p)
	}
	h.startEdit, h.edited, h.reframed = true, true, true
	h.gen++
}

// SetQuery replaces the target's query; an empty query drops the "?".
func (h *HTTPHead) SetQuery(q string) {
	p := string(h.Path())
	if q == "" {
		h.part[1] = h.add(p)
	} else {
		h.part[1] = h.add(p, "?", q)
	}
	h.startEdit, h.edited, h.reframed = true, true, true
	h.gen++
}

func (h *HTTPHead) hasQuery() bool { return bytes.IndexByte(h.URI(), '?') >= 0 }

// SetVersion sets the message's version ("1.0" or "1.1").
func (h *HTTPHead) SetVersion(v string) {
	i := 2
	if h.response {
		i = 0
	}
	h.part[i] = h.add("HTTP/", v)
	h.startEdit, h.edited, h.reframed = true, true, true
	h.gen++
}

// NumFields is the number of header fields, removed ones included; use
// Field to read them.
func (h *HTTPHead) NumFields() int { return len(h.fields) }

// Field returns the i-th field; ok is false for a removed one.
func (h *HTTPHead) Field(i int) (name, value []byte, ok bool) {
	f := &h.fields[i]
	if f.removed {
		return nil, nil, false
	}
	return h.bytes(f.name), h.bytes(f.value), true
}

// Header returns the value of the last field called name (ASCII case
// insensitive), as BIG-IP does when a header appears more than once.
func (h *HTTPHead) Header(name string) ([]byte, bool) {
	for i := len(h.fields) - 1; i >= 0; i-- {
		f := &h.fields[i]
		if !f.removed && foldEq(h.bytes(f.name), name) {
			return h.bytes(f.value), true
		}
	}
	return nil, false
}

// HeaderCount counts the fields called name, or all fields when name is
// empty.
func (h *HTTPHead) HeaderCount(name string) int {
	n := 0
	for i := range h.fields {
		f := &h.fields[i]
		if !f.removed && (name == "" || foldEq(h.bytes(f.name), name)) {
			n++
		}
	}
	return n
}

// InsertHeader adds a field after the others.
func (h *HTTPHead) InsertHeader(name, value string) {
	n := h.add(name)
	v := h.add(value)
	h.noteEdit(h.bytes(n), value)
	h.fields = append(h.fields, hfield{line: span{-1, -1}, name: n, value: v})
	h.edited = true
	h.gen++
}

// ReplaceHeader sets the value of the last field called name, or inserts
// the field when there is none.
func (h *HTTPHead) ReplaceHeader(name, value string) {
	for i := len(h.fields) - 1; i >= 0; i-- {
		f := &h.fields[i]
		if !f.removed && foldEq(h.bytes(f.name), name) {
			h.setField(i, value)
			return
		}
	}
	h.InsertHeader(name, value)
}

// setField changes the value of field i, keeping its name.
func (h *HTTPHead) setField(i int, value string) {
	f := &h.fields[i]
	h.noteEdit(h.bytes(f.name), value)
	f.value = h.add(value)
	f.line = span{-1, -1}
	h.edited = true
	h.gen++
}

// RemoveHeader removes every field called name and reports how many.
func (h *HTTPHead) RemoveHeader(name string) int {
	n := 0
	for i := range h.fields {
		f := &h.fields[i]
		if !f.removed && foldEq(h.bytes(f.name), name) {
			f.removed = true
			n++
			h.noteEdit(h.bytes(f.name), "")
		}
	}
	if n > 0 {
		h.edited = true
		h.gen++
	}
	return n
}

// removeField removes field i.
func (h *HTTPHead) removeField(i int) {
	h.noteEdit(h.bytes(h.fields[i].name), "")
	h.fields[i].removed = true
	h.edited = true
	h.gen++
}

// FramingKept reports whether the head as AppendTo writes it frames its
// message as the head that arrived did, so that its facts are Head's
// with only the block's length changed: the rules edited no start line
// and no field among reframingFields, and no edit holds a line break or
// NUL. Why: a dataplane that would otherwise parse every edited head
// again (a rule that only sets a header, the common case) can skip it.
func (h *HTTPHead) FramingKept() bool { return !h.reframed }

// reframingFields are the fields whose edit may change what a parse of the
// head finds: how the body is framed, the connection's fate, an upgrade,
// an expectation.
var reframingFields = []string{"Content-Length", "Transfer-Encoding", "Connection", "Upgrade", "Expect"}

// noteEdit marks the head reframed when setting the field name to value
// (or removing it, value "") may change its facts (FramingKept): a field
// among reframingFields, a name that is not a token, a value holding a
// control character other than a tab.
func (h *HTTPHead) noteEdit(name []byte, value string) {
	if h.reframed {
		return
	}
	if !httpx.IsToken(name) {
		h.reframed = true
		return
	}
	for _, f := range reframingFields {
		if foldEq(name, f) {
			h.reframed = true
			return
		}
	}
	for i := 0; i < len(value); i++ {
		if c := value[i]; (c < ' ' && c != '\t') || c == 0x7f {
			h.reframed = true
			return
		}
	}
}

// framingHeaders are kept by Sanitize whatever the rule lists: without
// them the message's end could not be found.
var framingHeaders = []string{"Content-Length", "Transfer-Encoding", "Connection"}

// Sanitize removes every field but those named in keep and the framing
// fields (Content-Length, Transfer-Encoding, Connection).
func (h *HTTPHead) Sanitize(keep []string) {
	for i := range h.fields {
		f := &h.fields[i]
		if f.removed {
			continue
		}
		n := h.bytes(f.name)
		kept := false
		for _, k := range framingHeaders {
			kept = kept || foldEq(n, k)
		}
		for _, k := range keep {
			kept = kept || foldEq(n, k)
		}
		if !kept {
			h.removeField(i)
		}
	}
}

// KeepAlive reports whether the connection stays open after this message
// as its head says (HTTP/1.1 without Connection: close, or HTTP/1.0 with
// Connection: Keep-Alive), reading the fields as they now are.
func (h *HTTPHead) KeepAlive() bool {
	closeTok, keep := false, false
	for i := range h.fields {
		f := &h.fields[i]
		if f.removed || !foldEq(h.bytes(f.name), "connection") {
			continue
		}
		for _, tok := range bytes.Split(h.bytes(f.value), []byte(",")) {
			tok = bytes.TrimSpace(tok)
			closeTok = closeTok || foldEq(tok, "close")
			keep = keep || foldEq(tok, "keep-alive")
		}
	}
	if closeTok {
		return false
	}
	return string(h.Version()) != "1.0" || keep
}

// foldEq compares ASCII case-insensitively.
func foldEq(a []byte, s string) bool {
	if len(a) != len(s) {
		return false
	}
	for i := range a {
		c, d := a[i], s[i]
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		if d >= 'A' && d <= 'Z' {
			d += 'a' - 'A'
		}
		if c != d {
			return false
		}
	}
	return true
}

// HTTPState is the HTTP half of a Conn, ready for the dataplane to embed:
// it holds the current transaction's heads and queues the actions rules
// take, which the dataplane performs when the event returns (Actions, then
// ClearActions). Its storage is reused from request to request.
type HTTPState struct {
	// Request and Response are the current heads; valid while
	// HasRequest / HasResponse.
	Request, Response       HTTPHead
	HasRequest, HasResponse bool
	// RequestNum counts the requests of the client connection, from 1.
	RequestNum int
	// Actions are the HTTP actions rules took since the last ClearActions.
	Actions []HTTPAction
}

// StartRequest makes the request whose head the framer parsed the current
// one: the request count goes up and the previous response is forgotten.
func (st *HTTPState) StartRequest(b []byte, head *httpx.Head) {
	st.Request.ResetParsed(b, head, false)
	st.HasRequest, st.HasResponse = true, false
	st.RequestNum++
}

// StartResponse makes the response whose head the framer parsed the
// current one (for HTTP_RESPONSE, or the interim 100 response for
// HTTP_RESPONSE_CONTINUE).
func (st *HTTPState) StartResponse(b []byte, head *httpx.Head) {
	st.Response.ResetParsed(b, head, true)
	st.HasResponse = true
}

// ClearActions empties the action queue, keeping its storage.
func (st *HTTPState) ClearActions() {
	clear(st.Actions)
	st.Actions = st.Actions[:0]
}

// HTTPRequest implements HTTPConn.
func (st *HTTPState) HTTPRequest() *HTTPHead {
	if !st.HasRequest {
		return nil
	}
	return &st.Request
}

// HTTPResponse implements HTTPConn.
func (st *HTTPState) HTTPResponse() *HTTPHead {
	if !st.HasResponse {
		return nil
	}
	return &st.Response
}

// HTTPRequestNum implements HTTPConn.
func (st *HTTPState) HTTPRequestNum() int { return st.RequestNum }

// HTTPDo implements HTTPConn by queueing the action.
func (st *HTTPState) HTTPDo(a HTTPAction) error {
	st.Actions = append(st.Actions, a)
	return nil
}
