package rules

import (
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
	"github.com/openltm/openltm/rules/tcl"
)

// SIPState is what the SIP:: commands read and change on a connection of
// a virtual server with a sip profile. The host sets Msg before
// SIP_REQUEST or SIP_RESPONSE and reads the outcome after: Msg again
// when Edited (a header inserted, removed or replaced), Discard
// (SIP::discard: the message goes nowhere) and Reply (SIP::respond: the
// proxy's answer to the request, sent back where it came from; the
// request itself still goes on unless the rule also runs SIP::discard
// [M]). Without the profile it is
// nil and the commands are errors, as BIG-IP refuses such a rule.
type SIPState struct {
	// Msg is the message the event is about, edits applied.
	Msg []byte
	// Edited: Msg is not the message the host gave.
	Edited bool
	// Discard: SIP::discard ran.
	Discard bool
	// Reply is SIP::respond's response, nil when it did not run.
	Reply []byte
	// PersistKey is the key `SIP::persist KEY` set in this event (the
	// host got it through PersistConn.Persist too); PersistSet says it
	// ran.
	PersistKey string
	PersistSet bool

	// persistField is the field SIP::persist reads when the rule set no
	// key: the sip_info profile's, Call-ID when zero.
	persistField sipmsg.Field
	// mr, in an MR_ event of a SIP message router, is the message the
	// commands read and change (sipMR): edits, SIP::discard and
	// SIP::respond act on it at once.
	mr *mrf.Message
}

// Reset readies the state for the next message.
func (st *SIPState) Reset(msg []byte) {
	*st = SIPState{Msg: msg, persistField: st.persistField}
}

// SetSIPPersistField names the field `SIP::persist` reads for a message
// whose rule set no key: the virtual's sip persistence profile's
// sip-info field, which is what its records are keyed on. Called once
// per connection, not per message.
func (s *ConnState) SetSIPPersistField(name string) {
	if s.sip == nil {
		s.sip = &SIPState{}
	}
	s.sip.persistField = sipmsg.NewField(name)
}

// SetSIP gives the connection a SIP state: the virtual server has a sip
// profile.
func (s *ConnState) SetSIP() { s.sip = &SIPState{} }

// SIP is the connection's SIP state; nil without a sip profile. The host
// reads it under the lock its events run under.
func (s *ConnState) SIP() *SIPState { return s.sip }

// BeginSIP binds msg to the SIP:: commands of the SIP_REQUEST or
// SIP_RESPONSE event about to run, so that every transport (a
// message-based TCP client, a UDP flow) binds its messages the same way.
// The host calls it, and EndSIP after the event, under the lock its
// events run under.
func (s *ConnState) BeginSIP(msg []byte) {
	if s.sip == nil {
		s.sip = &SIPState{}
	}
	s.sip.Reset(msg)
}

// EndSIP is what the event did to the message BeginSIP bound; the state
// then forgets the message, whose buffer is the host's, not the rule's
// to keep.
func (s *ConnState) EndSIP() SIPState {
	if s.sip == nil {
		return SIPState{}
	}
	out := *s.sip
	s.sip.Reset(nil)
	return out
}

func registerSIP(t *tcl.Commands) {
	t.Register("SIP::method", cmdSIPStart("SIP::method"))
	t.Register("SIP::uri", cmdSIPStart("SIP::uri"))
	t.Register("SIP::call_id", cmdSIPField("SIP::call_id", sipmsg.CallID))
	t.Register("SIP::from", cmdSIPField("SIP::from", sipmsg.From))
	t.Register("SIP::to", cmdSIPField("SIP::to", sipmsg.To))
	t.Register("SIP::via", cmdSIPVia)
	t.Register("SIP::header", cmdSIPHeader)
	t.Register("SIP::response", cmdSIPResponse)
	t.Register("SIP::respond", cmdSIPRespond)
	t.Register("SIP::discard", cmdSIPDiscard)
	t.Register("SIP::payload", cmdSIPPayload)
	t.Register("SIP::persist", cmdSIPPersist)
	t.Register("SIP::record-route", cmdSIPRecordRoute)
	t.Register("SIP::message", cmdSIPMessage)
	t.Register("SIP::route", cmdSIPRoute).Compile = sipRouteRefs
	t.Register("SIP::route_status", cmdSIPRouteStatus)
}

// sipEvents are the events a SIP message is at hand in.
var sipEvents = []Event{SIPRequest, SIPResponse, SIPRequestSend, SIPRequestDone, SIPResponseSend, SIPResponseDone}

// sipEditEvents are those in which the message may still change: in
// SIP_REQUEST_DONE and SIP_RESPONSE_DONE it has left.
var sipEditEvents = []Event{SIPRequest, SIPResponse, SIPRequestSend, SIPResponseSend}

// sipOf returns the message at hand, parsed, or the command's error.
func sipOf(in *tcl.Interp, cmd string, valid ...Event) (*SIPState, sipmsg.Message, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, sipmsg.Message{}, err
	}
	if s.event == MRIngress || s.event == MREgress || s.event == MRFailed {
		return sipMR(s, cmd, valid)
	}
	if s.sip == nil {
		return nil, sipmsg.Message{}, tcl.Errorf("%s: the virtual server has no sip profile", cmd)
	}
	if len(valid) == 0 {
		valid = sipEvents
	}
	ok := false
	var names []string
	for _, ev := range valid {
		ok = ok || s.event == ev
		names = append(names, ev.String())
	}
	if !ok {
		return nil, sipmsg.Message{}, tcl.Errorf("%s: not valid in %s (valid in %s)", cmd, s.event, strings.Join(names, ", "))
	}
	m, err := sipmsg.Parse(s.sip.Msg)
	if err != nil {
		return nil, m, tcl.Errorf("%s: %v", cmd, err)
	}
	return s.sip, m, nil
}

// cmdSIPStart is SIP::method and SIP::uri: the request line's parts
// (empty in SIP_RESPONSE).
func cmdSIPStart(name string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		_, m, err := sipOf(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if name == "SIP::method" {
			return tcl.Str(string(m.Method)), nil
		}
		return tcl.Str(string(m.URI)), nil
	}
}

// cmdSIPField is SIP::call_id, SIP::from and SIP::to: the field's value
// (long or compact form), empty when absent.
func cmdSIPField(name string, f sipmsg.Field) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		_, m, err := sipOf(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		v, _ := m.Header(f)
		return tcl.Str(string(v)), nil
	}
}

// cmdSIPVia is `SIP::via ?INDEX?`: the Via field at INDEX (0, the top
// one, by default) [M: BIG-IP documents the index; counting fields, not
// the comma-separated values within one, is openltm's reading].
func cmdSIPVia(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SIP::via ?index?")
	}
	n := int64(0)
	if len(args) == 2 {
		var err error
		if n, err = args[1].Int64(); err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("SIP::via: expected an index (0 or more) but got %q", args[1].String())
		}
	}
	_, m, err := sipOf(in, "SIP::via")
	if err != nil {
		return tcl.Empty, err
	}
	v, _ := m.HeaderAt(sipmsg.Via, int(n))
	return tcl.Str(string(v)), nil
}

// cmdSIPHeader is `SIP::header NAME ?INDEX?` (a field's value),
// `SIP::header insert NAME VALUE`, `SIP::header remove NAME` and
// `SIP::header replace NAME VALUE` (the first field of that name, or a
// new one) [M: the edit forms follow HTTP::header's].
func cmdSIPHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "SIP::header name ?index? | insert name value | remove name | replace name value"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch op := args[1].String(); {
	case (op == "insert" || op == "replace") && len(args) == 4, op == "remove" && len(args) == 3:
		st, _, err := sipOf(in, "SIP::header", sipEditEvents...)
		if err != nil {
			return tcl.Empty, err
		}
		name := args[2].String()
		if name == "" || strings.ContainsAny(name, ": \t\r\n") {
			return tcl.Empty, tcl.Errorf("SIP::header %s: %q is not a header field name", op, name)
		}
		value := ""
		if len(args) == 4 {
			value = args[3].String()
			if strings.ContainsAny(value, "\r\n") {
				return tcl.Empty, tcl.Errorf("SIP::header %s: the value of %s may not hold a line break", op, name)
			}
		}
		switch op {
		case "insert":
			st.set(sipmsg.Insert(st.Msg, name, value))
		case "replace":
			st.set(sipmsg.Replace(st.Msg, name, value))
		default:
			st.set(sipmsg.Remove(st.Msg, sipmsg.NewField(name)))
		}
		return tcl.Empty, nil
	case len(args) <= 3 && op != "insert" && op != "replace" && op != "remove":
		n := int64(0)
		if len(args) == 3 {
			var err error
			if n, err = args[2].Int64(); err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("SIP::header: expected an index (0 or more) but got %q", args[2].String())
			}
		}
		_, m, err := sipOf(in, "SIP::header")
		if err != nil {
			return tcl.Empty, err
		}
		v, _ := m.HeaderAt(sipmsg.NewField(op), int(n))
		return tcl.Str(string(v)), nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// cmdSIPResponse is `SIP::response code` and `SIP::response status`
// (the reason phrase), in SIP_RESPONSE.
func cmdSIPResponse(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || (args[1].String() != "code" && args[1].String() != "status") {
		return tcl.Empty, tcl.WrongArgs("SIP::response code|status")
	}
	_, m, err := sipOf(in, "SIP::response", SIPResponse, SIPResponseSend, SIPResponseDone)
	if err != nil {
		return tcl.Empty, err
	}
	if m.Request {
		// An MR_ event's request: nothing, so that a rule tells
		// requests from responses by it.
		return tcl.Empty, nil
	}
	if args[1].String() == "code" {
		return tcl.Int(int64(m.Code)), nil
	}
	return tcl.Str(string(m.Reason)), nil
}

// cmdSIPRespond is `SIP::respond CODE ?REASON? ?NAME VALUE ...?`, in
// SIP_REQUEST: the proxy answers the request itself (its Via, From, To,
// Call-ID and CSeq copied, Content-Length 0); with SIP::discard the
// request goes to no member.
func cmdSIPRespond(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("SIP::respond code ?reason? ?name value ...?")
	}
	code, err := args[1].Int64()
	if err != nil || code < 100 || code > 699 {
		return tcl.Empty, tcl.Errorf("SIP::respond: expected a status code from 100 to 699 but got %q", args[1].String())
	}
	st, m, err := sipOf(in, "SIP::respond", SIPRequest)
	if err != nil {
		return tcl.Empty, err
	}
	reason := sipReason(int(code))
	rest := args[2:]
	if len(rest)%2 == 1 {
		reason, rest = rest[0].String(), rest[1:]
	}
	var b strings.Builder
	b.WriteString("SIP/2.0 ")
	b.WriteString(args[1].String())
	b.WriteByte(' ')
	b.WriteString(reason)
	b.WriteString("\r\n")
	for _, f := range []sipmsg.Field{sipmsg.Via, sipmsg.From, sipmsg.To, sipmsg.CallID, sipmsg.CSeq} {
		for i := 0; ; i++ {
			v, ok := m.HeaderAt(f, i)
			if !ok {
				break
			}
			b.WriteString(sipFieldName(f))
			b.WriteString(": ")
			b.Write(v)
			b.WriteString("\r\n")
		}
	}
	for i := 0; i+1 < len(rest); i += 2 {
		name, value := rest[i].String(), rest[i+1].String()
		if name == "" || strings.ContainsAny(name, ": \t\r\n") || strings.ContainsAny(value, "\r\n") {
			return tcl.Empty, tcl.Errorf("SIP::respond: %q %q is not a header field", name, value)
		}
		b.WriteString(name)
		b.WriteString(": ")
		b.WriteString(value)
		b.WriteString("\r\n")
	}
	b.WriteString("Content-Length: 0\r\n\r\n")
	return tcl.Empty, st.reply([]byte(b.String()))
}

// sipFieldName is how SIP::respond writes a field it copies.
func sipFieldName(f sipmsg.Field) string {
	switch f {
	case sipmsg.Via:
		return "Via"
	case sipmsg.From:
		return "From"
	case sipmsg.To:
		return "To"
	case sipmsg.CallID:
		return "Call-ID"
	}
	return "CSeq"
}

// sipReason is the RFC 3261 reason phrase of the common codes.
func sipReason(code int) string {
	switch code {
	case 100:
		return "Trying"
	case 180:
		return "Ringing"
	case 200:
		return "OK"
	case 302:
		return "Moved Temporarily"
	case 403:
		return "Forbidden"
	case 404:
		return "Not Found"
	case 480:
		return "Temporarily Unavailable"
	case 486:
		return "Busy Here"
	case 488:
		return "Not Acceptable Here"
	case 500:
		return "Server Internal Error"
	case 503:
		return "Service Unavailable"
	case 603:
		return "Decline"
	}
	return "Unknown"
}

// cmdSIPDiscard is SIP::discard: the message goes nowhere.
func cmdSIPDiscard(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SIP::discard")
	}
	st, _, err := sipOf(in, "SIP::discard", sipEditEvents...)
	if err != nil {
		return tcl.Empty, err
	}
	st.Discard = true
	if st.mr != nil {
		st.mr.Drop = true
	}
	return tcl.Empty, nil
}

// cmdSIPPayload is `SIP::payload ?LENGTH?`: the message's body, or its
// first LENGTH bytes.
func cmdSIPPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SIP::payload ?length?")
	}
	_, m, err := sipOf(in, "SIP::payload")
	if err != nil {
		return tcl.Empty, err
	}
	body := m.Body()
	if len(args) == 2 {
		n, err := args[1].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("SIP::payload: expected a length (0 or more) but got %q", args[1].String())
		}
		if int(n) < len(body) {
			body = body[:n]
		}
	}
	return tcl.Str(string(body)), nil
}

// cmdSIPPersist is `SIP::persist` (the key the message persists on: the
// one the rule set, else its sip_info field, Call-ID by default),
// `SIP::persist KEY ?TIMEOUT?` (the request persists on KEY instead, in
// the sip persistence records, for TIMEOUT seconds or the profile's) and
// `SIP::persist reset` (the record of the request's key is deleted, so
// the request is balanced anew and its new member recorded [M]). Setting
// and resetting act before balancing, in SIP_REQUEST.
func cmdSIPPersist(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "SIP::persist ?key ?timeout?? | SIP::persist reset"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if len(args) == 1 {
		st, m, err := sipOf(in, "SIP::persist")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Str(st.persistKey(&m)), nil
	}
	st, m, err := sipOf(in, "SIP::persist", SIPRequest)
	if err != nil {
		return tcl.Empty, err
	}
	if cs, _, _ := sess(in, "SIP::persist"); cs.mr != nil && cs.mr.msg != nil {
		return sipPersistMR(cs.mr, st, &m, args)
	}
	_, c, _ := sess(in, "SIP::persist")
	pc, ok := c.(PersistConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("SIP::persist: this connection has no persistence")
	}
	if args[1].String() == "reset" && len(args) == 2 {
		key := st.persistKey(&m)
		if key == "" {
			return tcl.Empty, nil
		}
		return tcl.Empty, tclErr(pc.PersistDelete(Persist{Method: PersistSIP, Key: key, Timeout: -1}))
	}
	p := Persist{Method: PersistSIP, Key: args[1].String(), Timeout: -1}
	if p.Key == "" {
		return tcl.Empty, tcl.Errorf("SIP::persist: the key may not be empty")
	}
	if len(args) == 3 {
		if p.Timeout, err = persistTimeout(args[2]); err != nil {
			return tcl.Empty, err
		}
	}
	if err := pc.Persist(p); err != nil {
		return tcl.Empty, tclErr(err)
	}
	st.PersistKey, st.PersistSet = p.Key, true
	return tcl.Empty, nil
}

// persistKey is the key message m persists on.
func (st *SIPState) persistKey(m *sipmsg.Message) string {
	if st.PersistSet {
		return st.PersistKey
	}
	f := st.persistField
	if f.IsZero() {
		f = sipmsg.CallID
	}
	v, _ := m.Header(f)
	return string(v)
}

// recordRoute is the Record-Route field.
var recordRoute = sipmsg.NewField("Record-Route")

// cmdSIPRecordRoute is `SIP::record-route ?INDEX|top?`: the
// Record-Route field at INDEX (0, the top one, by default), or with
// `top` the first route of the first field (a field may list several,
// comma-separated), empty when the message has none [M: BIG-IP
// documents INDEX and top; without either, the first field].
func cmdSIPRecordRoute(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("SIP::record-route ?index|top?")
	}
	n, top := int64(0), false
	if len(args) == 2 {
		var err error
		if top = args[1].String() == "top"; !top {
			if n, err = args[1].Int64(); err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("SIP::record-route: expected an index (0 or more) or top but got %q", args[1].String())
			}
		}
	}
	_, m, err := sipOf(in, "SIP::record-route")
	if err != nil {
		return tcl.Empty, err
	}
	v, _ := m.HeaderAt(recordRoute, int(n))
	if top {
		v = sipmsg.FirstValue(v)
	}
	return tcl.Str(string(v)), nil
}

// cmdSIPMessage is `SIP::message` (the whole message: start line,
// header and body) and `SIP::message NEW` (the message becomes NEW, in
// the events that may still edit it). NEW must be a SIP message; its
// Content-Length is set to its body's length when it says otherwise or,
// with a body, is missing, so that a stream transport frames it as the
// rule wrote it [M].
func cmdSIPMessage(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	switch len(args) {
	case 1:
		_, m, err := sipOf(in, "SIP::message")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Str(string(m.B)), nil
	case 2:
		st, _, err := sipOf(in, "SIP::message", sipEditEvents...)
		if err != nil {
			return tcl.Empty, err
		}
		msg := []byte(args[1].String())
		nm, err := sipmsg.Parse(msg)
		if err != nil {
			return tcl.Empty, tcl.Errorf("SIP::message: the new message is not a SIP message (a start line, header fields and an empty line)")
		}
		body := nm.Body()
		cl, err := sipmsg.ContentLength(msg[:nm.HeadEnd])
		if err != nil || cl != int64(len(body)) {
			msg = sipmsg.SetBody(msg, body)
		}
		st.set(msg)
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs("SIP::message ?message?")
}

// cmdSIPRoute is BIG-IP's message-routing `SIP::route`, read with
// openltm's pools for its peers: `SIP::route peer POOL` balances the
// request over POOL, `SIP::route host ADDR ?PORT?` (or ADDR:PORT) sends
// it to that address, as `pool` and `node` would, for this request alone
// (in SIP_REQUEST, before balancing). `virtual NAME` may name the
// virtual server the request arrived on, whose server side carries it;
// transport configurations (`transport`, `config`) do not exist in
// openltm and are refused [M].
func cmdSIPRoute(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "SIP::route ?virtual name? host addr ?port? | SIP::route peer pool"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if _, _, err := sipOf(in, "SIP::route", SIPRequest); err != nil {
		return tcl.Empty, err
	}
	if st, c, _ := sess(in, "SIP::route"); st.mr != nil && st.mr.msg != nil {
		return sipRouteMR(st.mr.msg, c, args[1:], usage)
	}
	_, c, _ := sess(in, "SIP::route")
	var d Decision
	set := false
	for rest := args[1:]; len(rest) > 0; {
		if len(rest) < 2 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		switch kw := rest[0].String(); kw {
		case "virtual":
			name := rest[1].String()
			li, ok := c.(LBInfo)
			if !ok || !sameObject(li.VirtualName(), name) {
				return tcl.Empty, tcl.Errorf("SIP::route: virtual %s: openltm routes a request over the virtual server it arrived on", name)
			}
			rest = rest[2:]
		case "host":
			if set {
				return tcl.Empty, tcl.WrongArgs(usage)
			}
			n := 2
			if len(rest) > 2 && rest[2].String() != "virtual" && rest[2].String() != "peer" && rest[2].String() != "host" {
				n = 3
			}
			ap, err := parseHostPort(rest[1:n])
			if err != nil {
				return tcl.Empty, tcl.Errorf("SIP::route: %v", err)
			}
			d, set = Decision{Kind: DecideNode, Addr: ap}, true
			rest = rest[n:]
		case "peer":
			if set || rest[1].String() == "" {
				return tcl.Empty, tcl.WrongArgs(usage)
			}
			d, set = Decision{Kind: DecidePool, Pool: rest[1].String()}, true
			rest = rest[2:]
		case "transport", "config":
			return tcl.Empty, tcl.Errorf("SIP::route: %s: openltm has no transport configurations; the request leaves from the virtual server it arrived on", kw)
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	if !set {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	return tcl.Empty, tclErr(c.Decide(d))
}

// sipRouteRefs records the pool a literal `SIP::route peer POOL` names
// among the rule's references, as `pool POOL` records its own, for the
// configuration checks that read them.
func sipRouteRefs(c *tcl.Compiler) error {
	for i := 1; i+1 < c.NumWords(); i++ {
		if w, lit := c.Literal(i); lit && w == "peer" {
			return refHook("pool", i+1)(c)
		}
	}
	return nil
}

// sameObject reports whether name (full or in /Common) names full.
func sameObject(full, name string) bool {
	return full == name || full == "/Common/"+name
}

// cmdSIPRouteStatus is SIP::route_status: "unprocessed" in SIP_REQUEST
// and SIP_RESPONSE, where the message is not routed yet; "route found"
// in the send and done events, where it has its peer (a request its
// member, a response the client its Via names); "dropped" once the rule
// ran SIP::discard [M: openltm runs no SIP event for a request it could
// not balance, so BIG-IP's failure statuses do not arise].
func cmdSIPRouteStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SIP::route_status")
	}
	st, _, err := sipOf(in, "SIP::route_status")
	if err != nil {
		return tcl.Empty, err
	}
	s, _, _ := sess(in, "SIP::route_status")
	switch {
	case s.mr != nil && s.mr.msg != nil && !st.Discard:
		return tcl.Str(s.mr.msg.Status), nil // message routing's (MR::message status)
	case st.Discard:
		return tcl.Str("dropped"), nil
	case s.event == SIPRequest || s.event == SIPResponse:
		return tcl.Str("unprocessed"), nil
	}
	return tcl.Str("route found"), nil
}

// sipRouteMR is SIP::route on a virtual with SIP message routing: the
// request goes to the router's peer NAME, or to host ADDR ?PORT? (port
// 5060 when none), as MR::message route would send it; `virtual` names
// the virtual server it arrived on, and `config`/`transport` a
// transport-config, which the peers' own settings make [M].
func sipRouteMR(m *mrf.Message, c Conn, args []tcl.Value, usage string) (tcl.Value, error) {
	set := false
	for rest := args; len(rest) > 0; {
		if len(rest) < 2 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		switch kw := rest[0].String(); kw {
		case "virtual":
			name := rest[1].String()
			if li, ok := c.(LBInfo); !ok || !sameObject(li.VirtualName(), name) {
				return tcl.Empty, tcl.Errorf("SIP::route: virtual %s: openltm routes a request over the virtual server it arrived on", name)
			}
			rest = rest[2:]
		case "config", "transport":
			rest = rest[2:]
		case "host":
			if set {
				return tcl.Empty, tcl.WrongArgs(usage)
			}
			n := 2
			if len(rest) > 2 && !sipRouteWord(rest[2].String()) {
				n = 3
			}
			words := rest[1:n]
			if _, err := netip.ParseAddr(words[0].String()); n == 2 && err == nil {
				words = []tcl.Value{words[0], tcl.Str("5060")}
			}
			ap, err := parseHostPort(words)
			if err != nil {
				return tcl.Empty, tcl.Errorf("SIP::route: %v", err)
			}
			m.RoutePeers, m.RoutePool, m.RouteHost, set = nil, "", ap, true
			rest = rest[n:]
		case "peer":
			if set || rest[1].String() == "" {
				return tcl.Empty, tcl.WrongArgs(usage)
			}
			m.RoutePeers, m.RoutePool, m.RouteHost, set = []string{rest[1].String()}, "", netip.AddrPort{}, true
			rest = rest[2:]
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	if !set {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	return tcl.Empty, nil
}

func sipRouteWord(w string) bool {
	return w == "virtual" || w == "peer" || w == "host" || w == "config" || w == "transport"
}

// sipPersistMR is SIP::persist on a virtual with SIP message routing:
// the request persists on KEY in its router's records (to the peer and
// member KEY's earlier requests went to, for TIMEOUT seconds or 180);
// reset forgets the record of its key [M].
func sipPersistMR(mr *MRState, st *SIPState, m *sipmsg.Message, args []tcl.Value) (tcl.Value, error) {
	if args[1].String() == "reset" && len(args) == 2 {
		key := mr.msg.Persist
		if key == "" {
			key = st.persistKey(m)
		}
		if key != "" && mr.router != nil {
			mr.router.Unpersist(key)
		}
		return tcl.Empty, nil
	}
	key := args[1].String()
	if key == "" {
		return tcl.Empty, tcl.Errorf("SIP::persist: the key may not be empty")
	}
	mr.msg.Persist, mr.msg.PersistTTL = key, 0
	if len(args) == 3 {
		n, err := args[2].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("SIP::persist: expected a timeout in seconds but got %q", args[2].String())
		}
		mr.msg.PersistTTL = time.Duration(n) * time.Second
	}
	st.PersistKey, st.PersistSet = key, true
	return tcl.Empty, nil
}
