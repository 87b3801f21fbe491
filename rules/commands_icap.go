package rules

import (
	"errors"
	"net/netip"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// ICAPMessage is the ICAP message ICAP_REQUEST and ICAP_RESPONSE work
// on: the request about to go to the ICAP server, or the head of its
// answer. ICAP:: commands read and edit it in place; the host sends (or
// reads) it as they left it.
type ICAPMessage struct {
	// Method is REQMOD or RESPMOD (ICAP::method).
	Method string
	// URI is the request's ICAP URI (ICAP::uri; settable in
	// ICAP_REQUEST).
	URI string
	// Status is the answer's status code (ICAP::status; 0 in a request).
	Status int
	// Fields are the header fields, in order, names as sent.
	Fields [][2]string
	// HTTPRequest and HTTPResponse are the heads of the encapsulated
	// HTTP message (nil: none), which HTTP:: commands read and edit in
	// these events as BIG-IP's do: the response's for RESPMOD (or a
	// page answering a REQMOD), the request's otherwise. ReadOnly: an
	// edit is an error of the rule (the ICAP server left the message
	// as it was).
	HTTPRequest, HTTPResponse *HTTPHead
	ReadOnly                  bool
}

// RunICAP runs ev (ICAPRequest or ICAPResponse) of the internal virtual
// server's rules over m, the exchange with the ICAP server at server.
// Each exchange has a rule state of its own: BIG-IP runs these events
// on the internal virtual's own connection, not the client's. An error
// is the rule's (a Tcl error, reject, drop): the exchange fails.
func (p *Program) RunICAP(ev Event, m *ICAPMessage, server netip.AddrPort) error {
	if len(p.handlers[ev]) == 0 {
		return nil
	}
	s := p.NewConnState(&icapConn{server: server, m: m})
	defer s.Release()
	s.flowStarted = true // FLOW_INIT is the client connection's, not the exchange's
	s.icap = m
	if err := s.Run(ev); err != nil {
		return err
	}
	if s.ended {
		return errICAPEnded
	}
	if m.ReadOnly && (m.HTTPRequest != nil && m.HTTPRequest.Modified() || m.HTTPResponse != nil && m.HTTPResponse.Modified()) {
		return errICAPReadOnly
	}
	return nil
}

// errICAPReadOnly is an HTTP:: edit in ICAP_RESPONSE over a message the
// ICAP server did not send back (204): there is nothing to edit.
var errICAPReadOnly = errors.New("HTTP:: edit of a message the ICAP server left unchanged")

// errICAPEnded is an ICAP event that rejected or dropped: the exchange
// fails as when the ICAP server is down.
var errICAPEnded = errors.New("the rule ended the ICAP exchange")

func registerICAP(t *tcl.Commands) {
	t.Register("ICAP::header", cmdICAPHeader)
	t.Register("ICAP::method", cmdICAPMethod)
	t.Register("ICAP::status", cmdICAPStatus)
	t.Register("ICAP::uri", cmdICAPURI)
}

// icapOf is the ICAP message of the event running, or the error of an
// ICAP:: command outside ICAP_REQUEST and ICAP_RESPONSE.
func icapOf(in *tcl.Interp, cmd string) (*ConnState, *ICAPMessage, error) {
	s := sessionOf(in)
	if s == nil || s.icap == nil || s.event != ICAPRequest && s.event != ICAPResponse {
		ev := "this context"
		if s != nil {
			ev = s.event.String()
		}
		return nil, nil, tcl.Errorf("%s: not valid in %s (valid in ICAP_REQUEST, ICAP_RESPONSE)", cmd, ev)
	}
	return s, s.icap, nil
}

// cmdICAPMethod is `ICAP::method`: REQMOD or RESPMOD.
func cmdICAPMethod(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("ICAP::method")
	}
	_, m, err := icapOf(in, "ICAP::method")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(m.Method), nil
}

// cmdICAPStatus is `ICAP::status`: the ICAP server's status code, in
// ICAP_RESPONSE.
func cmdICAPStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("ICAP::status")
	}
	s, m, err := icapOf(in, "ICAP::status")
	if err != nil {
		return tcl.Empty, err
	}
	if s.event != ICAPResponse {
		return tcl.Empty, tcl.Errorf("ICAP::status: not valid in %s (valid in ICAP_RESPONSE)", s.event)
	}
	return tcl.Int(int64(m.Status)), nil
}

// cmdICAPURI is `ICAP::uri ?uri?`: the ICAP request's URI, after
// setting it (in ICAP_REQUEST only) when given.
func cmdICAPURI(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("ICAP::uri ?uri?")
	}
	s, m, err := icapOf(in, "ICAP::uri")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		if s.event != ICAPRequest {
			return tcl.Empty, tcl.Errorf("ICAP::uri: the URI is set in ICAP_REQUEST only")
		}
		u := args[1].String()
		if u == "" || strings.ContainsAny(u, " \t\r\n") {
			return tcl.Empty, tcl.Errorf("ICAP::uri: %q is not a URI", u)
		}
		m.URI = u
	}
	return tcl.Str(m.URI), nil
}

// icapFramingFields are set by the host from the encapsulated message
// whatever a rule does: a rule edits them to no effect, so it is told.
func icapFraming(name string) bool {
	return strings.EqualFold(name, "Encapsulated") || strings.EqualFold(name, "Preview")
}

// validFieldName: a token (RFC 9110), what a header line can carry.
func validFieldName(n string) bool {
	if n == "" {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte("\"(),/:;<=>?@[\\]{}", c) >= 0 {
			return false
		}
	}
	return true
}

// cmdICAPHeader is `ICAP::header names | count name | exists name |
// value name | insert name value | remove name | replace name value`
// (and `ICAP::header name` for its value), on the ICAP message's own
// header fields, not the encapsulated HTTP message's. As HTTP::header:
// value is the last field of that name ("" when none), replace sets the
// last one (inserts it when there is none), remove removes every one.
func cmdICAPHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "ICAP::header names | count name | exists name | value name | insert name value | remove name | replace name value"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, m, err := icapOf(in, "ICAP::header")
	if err != nil {
		return tcl.Empty, err
	}
	sub, a := args[1].String(), args[2:]
	need := func(n int) error {
		if len(a) != n {
			return tcl.WrongArgs(usage)
		}
		return nil
	}
	last := func(name string) int {
		for i := len(m.Fields) - 1; i >= 0; i-- {
			if strings.EqualFold(m.Fields[i][0], name) {
				return i
			}
		}
		return -1
	}
	edit := func(name string) error {
		if !validFieldName(name) {
			return tcl.Errorf("ICAP::header %s: %q is not a header field name", sub, name)
		}
		if icapFraming(name) {
			return tcl.Errorf("ICAP::header %s: %s is set from the encapsulated message", sub, name)
		}
		if s.event != ICAPRequest && s.event != ICAPResponse {
			return tcl.Errorf("ICAP::header %s: not valid in %s", sub, s.event)
		}
		return nil
	}
	switch sub {
	case "names":
		if err := need(0); err != nil {
			return tcl.Empty, err
		}
		out := make([]tcl.Value, 0, len(m.Fields))
		for _, f := range m.Fields {
			out = append(out, tcl.Str(f[0]))
		}
		return tcl.List(out...), nil
	case "count":
		if err := need(1); err != nil {
			return tcl.Empty, err
		}
		n := 0
		for _, f := range m.Fields {
			if strings.EqualFold(f[0], a[0].String()) {
				n++
			}
		}
		return tcl.Int(int64(n)), nil
	case "exists":
		if err := need(1); err != nil {
			return tcl.Empty, err
		}
		return tcl.Bool(last(a[0].String()) >= 0), nil
	case "value":
		if err := need(1); err != nil {
			return tcl.Empty, err
		}
		if i := last(a[0].String()); i >= 0 {
			return tcl.Str(m.Fields[i][1]), nil
		}
		return tcl.Empty, nil
	case "insert", "replace":
		if err := need(2); err != nil {
			return tcl.Empty, err
		}
		name, v := a[0].String(), a[1].String()
		if err := edit(name); err != nil {
			return tcl.Empty, err
		}
		if strings.ContainsAny(v, "\r\n") {
			return tcl.Empty, tcl.Errorf("ICAP::header %s: a value cannot hold a line break", sub)
		}
		if i := last(name); sub == "replace" && i >= 0 {
			m.Fields[i][1] = v
		} else {
			m.Fields = append(m.Fields, [2]string{name, v})
		}
		return tcl.Empty, nil
	case "remove":
		if err := need(1); err != nil {
			return tcl.Empty, err
		}
		name := a[0].String()
		if err := edit(name); err != nil {
			return tcl.Empty, err
		}
		out := m.Fields[:0]
		for _, f := range m.Fields {
			if !strings.EqualFold(f[0], name) {
				out = append(out, f)
			}
		}
		m.Fields = out
		return tcl.Empty, nil
	}
	if len(a) != 0 {
		return tcl.Empty, tcl.Errorf("bad ICAP::header option %q: must be names, count, exists, value, insert, remove, replace or a header name", sub)
	}
	if i := last(sub); i >= 0 {
		return tcl.Str(m.Fields[i][1]), nil
	}
	return tcl.Empty, nil
}

// icapConn is the rule connection of one ICAP exchange: its server is
// the ICAP server (IP::server_addr); it balances nothing and carries no
// payload, so those commands are errors of the rule.
type icapConn struct {
	server netip.AddrPort
	m      *ICAPMessage
}

var errICAPConn = errors.New("not valid in ICAP_REQUEST or ICAP_RESPONSE")

// HTTPRequest, HTTPResponse, HTTPRequestNum and HTTPDo make the
// encapsulated HTTP message what HTTP:: commands act on; an action (HTTP::respond,
// HTTP::close...) has no client to act on here.
func (c *icapConn) HTTPRequest() *HTTPHead  { return c.m.HTTPRequest }
func (c *icapConn) HTTPResponse() *HTTPHead { return c.m.HTTPResponse }
func (c *icapConn) HTTPRequestNum() int     { return 1 }
func (c *icapConn) HTTPDo(HTTPAction) error { return errICAPConn }

func (c *icapConn) Addr(e Endpoint) netip.AddrPort {
	if e == EndServer {
		return c.server
	}
	return netip.AddrPort{}
}
func (*icapConn) Protocol() int { return 6 }
func (*icapConn) Decide(d Decision) error {
	switch d.Kind {
	case DecideReject, DecideDrop, DecideDiscard:
		return nil // s.ended: the exchange fails
	}
	return errICAPConn
}
func (*icapConn) Collect(Side, int, int) error                        { return errICAPConn }
func (*icapConn) Release(Side, int) error                             { return errICAPConn }
func (*icapConn) Payload(Side) []byte                                 { return nil }
func (*icapConn) ReplacePayload(Side, int, int, []byte) error         { return errICAPConn }
func (*icapConn) Respond(Side, []byte) error                          { return errICAPConn }
func (*icapConn) Close(Side) error                                    { return errICAPConn }
func (*icapConn) Notify(Side, NotifyKind) error                       { return errICAPConn }
func (*icapConn) LBSelect() (string, netip.AddrPort, error)           { return "", netip.AddrPort{}, errICAPConn }
func (*icapConn) LBServer() (string, netip.AddrPort, bool)            { return "", netip.AddrPort{}, false }
func (*icapConn) MemberStatus(string, netip.AddrPort) (string, error) { return "", errICAPConn }
func (*icapConn) ActiveMembers(string) ([]netip.AddrPort, error)      { return nil, errICAPConn }
