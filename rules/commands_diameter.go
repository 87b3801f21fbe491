package rules

import (
	"encoding/binary"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/rules/tcl"
)

// DiameterState is the message DIAMETER_INGRESS and DIAMETER_EGRESS run
// over and what the rule asked of it. The host binds the message with
// BeginDiameter, runs the event, and reads the outcome with EndDiameter,
// under the lock its events run under.
type DiameterState struct {
	msg diammsg.Msg
	out DiameterOutcome
	ctx DiameterContext
	// The connection's settings, kept across messages:
	// DIAMETER::retransmission_default's (nil: the profile's) and
	// DIAMETER::skip_capabilities_exchange's.
	defaults *DiameterRetx
	skipCER  bool
	skipHost string
}

// DiameterOutcome is what a DIAMETER_ event did to its message.
type DiameterOutcome struct {
	// Raw is the message as the rule left it (the one bound when it
	// did not change it).
	Raw []byte
	// Edited: an AVP or the header changed.
	Edited bool
	// Drop: DIAMETER::drop; the message goes no further.
	Drop bool
	// Disconnect: DIAMETER::disconnect; the connection is closed.
	Disconnect bool
	// Persist is DIAMETER::persist's key ("" none): the message goes to
	// the member that key persists to, instead of persist-avp's.
	Persist string
	// PersistReset: DIAMETER::persist reset; the persistence record of
	// the message's key is forgotten, so that the message is balanced
	// anew (message routing and the diameter profile's flows).
	PersistReset bool
	// The v14.1+ sub-commands (commands_diameter_persist.go):
	// PersistMode is use, replace, bypass or ignore ("" none said);
	// PersistTimeout is timeout's seconds (0 none); PersistDelete is
	// delete-none, delete-on-success, delete-on-failure or delete-on-any
	// ("" none said); PersistBidir and PersistDirection are
	// bidirectional's and direction's ("" none said).
	PersistMode      string
	PersistTimeout   time.Duration
	PersistDelete    string
	PersistBidir     string
	PersistDirection string
	// Retx is what DIAMETER::retransmission set for this message in the
	// event (nil: nothing; the connection's and the profile's settings
	// apply).
	Retx *DiameterRetx
	// Retransmit: DIAMETER::retransmit; the request this answer answers
	// is sent again and the answer goes no further.
	Retransmit bool
	// Respond are the messages DIAMETER::respond built, for the peer on
	// the side the event runs on (DiameterContext.ClientSide).
	Respond [][]byte
	// Retry are the messages DIAMETER::retry sends toward the members as
	// the client's requests.
	Retry []DiameterRetry
}

// DiameterRetry is one message DIAMETER::retry sends.
type DiameterRetry struct {
	Raw []byte
	// Across: it goes through the rules' events and persistence as a
	// client's request does; otherwise straight to a member.
	Across bool
}

// BeginDiameter binds raw (a whole message the host checked) to the
// DIAMETER:: commands of the event about to run.
func (s *ConnState) BeginDiameter(raw []byte) {
	s.BeginDiameterWith(raw, DiameterContext{ClientSide: true})
}

// BeginDiameterWith binds raw as BeginDiameter does, with what the host
// knows of it beyond its bytes.
func (s *ConnState) BeginDiameterWith(raw []byte, ctx DiameterContext) {
	if s.diameter == nil {
		s.diameter = &DiameterState{}
	}
	st := s.diameter
	st.msg, st.out, st.ctx = diammsg.Msg{Raw: raw}, DiameterOutcome{}, ctx
}

// EndDiameter is what the event did; the state forgets the message. Raw
// stays valid until the next BeginDiameter.
func (s *ConnState) EndDiameter() DiameterOutcome {
	st := s.diameter
	if st == nil {
		return DiameterOutcome{}
	}
	out := st.out
	out.Raw = st.msg.Raw
	st.msg, st.out, st.ctx = diammsg.Msg{}, DiameterOutcome{}, DiameterContext{}
	return out
}

func registerDiameter(t *tcl.Commands) {
	for name, fn := range map[string]tcl.CmdFunc{
		"DIAMETER::avp":               cmdDiameterAVP,
		"DIAMETER::command":           diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Int(int64(m.Code())) }),
		"DIAMETER::is_request":        diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Bool(m.Request()) }),
		"DIAMETER::is_response":       diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Bool(!m.Request()) }),
		"DIAMETER::is_retransmission": diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Bool(m.Flags()&diammsg.FlagRetransmit != 0) }),
		"DIAMETER::length":            diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Int(int64(len(m.Raw))) }),
		"DIAMETER::payload":           diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Bytes(m.Raw) }),
		"DIAMETER::session":           diameterGetter(func(m diammsg.Msg) tcl.Value { return tcl.Str(string(m.Get(diammsg.AVPSessionID))) }),
		"DIAMETER::header":            cmdDiameterHeader,
		"DIAMETER::host":              diameterIdentity("DIAMETER::host", diammsg.AVPOriginHost, diammsg.AVPDestinationHost),
		"DIAMETER::realm":             diameterIdentity("DIAMETER::realm", diammsg.AVPOriginRealm, diammsg.AVPDestinationRealm),
		"DIAMETER::result":            cmdDiameterResult,
		"DIAMETER::persist":           cmdDiameterPersist,
		"DIAMETER::drop":              diameterFlag("DIAMETER::drop", func(o *DiameterOutcome) { o.Drop = true }),
		"DIAMETER::disconnect":        diameterFlag("DIAMETER::disconnect", func(o *DiameterOutcome) { o.Disconnect = true }),
	} {
		t.Register(name, fn)
	}
	for name, fn := range diameterRetxCommands() { // commands_diameter_retx.go
		t.Register(name, fn)
	}
}

// diameterMsg is the message in hand, or an error naming cmd where there
// is none.
func diameterMsg(in *tcl.Interp, cmd string) (*DiameterState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.diameter == nil || s.diameter.msg.Raw == nil {
		return nil, tcl.Errorf("%s: no Diameter message in %s (valid in DIAMETER_INGRESS, DIAMETER_EGRESS and DIAMETER_RETRANSMISSION)", cmd, s.event)
	}
	return s.diameter, nil
}

func diameterGetter(get func(diammsg.Msg) tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		cmd := args[0].String()
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		st, err := diameterMsg(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		return get(st.msg), nil
	}
}

func diameterFlag(cmd string, set func(*DiameterOutcome)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		st, err := diameterMsg(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		set(&st.out)
		return tcl.Empty, nil
	}
}

// edit replaces the message with what fn appends to a new buffer (the
// bound message may be the host's read buffer).
func (st *DiameterState) edit(fn func(dst []byte) []byte) {
	st.msg = diammsg.Msg{Raw: fn(nil)}
	st.out.Edited = true
}

// avpNames are the AVP names DIAMETER:: commands and persist-avp accept
// beside numeric codes [M: BIG-IP takes codes; the base protocol's names
// are accepted too].
var avpNames = map[string]uint32{
	"user-name": 1, "class": 25, "session-timeout": 27, "host-ip-address": 257, "auth-application-id": 258,
	"acct-application-id": 259, "vendor-specific-application-id": 260, "session-id": 263, "origin-host": 264,
	"supported-vendor-id": 265, "vendor-id": 266, "firmware-revision": 267, "result-code": 268, "product-name": 269,
	"disconnect-cause": 273, "auth-request-type": 274, "origin-state-id": 278, "error-message": 281,
	"destination-realm": 283, "destination-host": 293, "origin-realm": 296, "subscription-id": 443,
	"subscription-id-data": 444, "subscription-id-type": 450,
}

// AVPCode reads an AVP code: a number, or a base protocol AVP's name
// (Session-Id).
func AVPCode(s string) (uint32, bool) {
	if n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 32); err == nil {
		return uint32(n), true
	}
	c, ok := avpNames[strings.ToLower(strings.TrimSpace(s))]
	return c, ok
}

func avpCodeArg(cmd string, v tcl.Value) (uint32, error) {
	c, ok := AVPCode(v.String())
	if !ok {
		return 0, tcl.Errorf("%s: %q is not an AVP code or name", cmd, v.String())
	}
	return c, nil
}

// avpValue encodes a rule's value as an AVP of type typ: string or
// octetstring (the bytes), integer32/unsigned32, integer64/unsigned64,
// address (IPv4 or IPv6).
func avpValue(cmd, typ string, v tcl.Value) ([]byte, error) {
	switch typ {
	case "", "string", "octetstring", "utf8string":
		return tcl.BytesOf(v), nil
	case "integer32", "unsigned32", "integer64", "unsigned64":
		n, err := strconv.ParseInt(v.String(), 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(v.String(), 0, 64)
			if uerr != nil {
				return nil, tcl.Errorf("%s: %q is not an integer", cmd, v.String())
			}
			n = int64(u)
		}
		if strings.HasSuffix(typ, "32") {
			return binary.BigEndian.AppendUint32(nil, uint32(n)), nil
		}
		return binary.BigEndian.AppendUint64(nil, uint64(n)), nil
	case "address":
		a, err := netip.ParseAddr(v.String())
		if err != nil {
			return nil, tcl.Errorf("%s: %q is not an IP address", cmd, v.String())
		}
		return diammsg.Address(a), nil
	}
	return nil, tcl.Errorf("%s: bad type %q: must be string, octetstring, integer32, unsigned32, integer64, unsigned64 or address", cmd, typ)
}

// avpText decodes an AVP's data as typ for a rule (see avpValue).
func avpText(typ string, d []byte) tcl.Value {
	switch typ {
	case "integer32":
		if len(d) == 4 {
			return tcl.Int(int64(int32(binary.BigEndian.Uint32(d))))
		}
	case "unsigned32":
		if len(d) == 4 {
			return tcl.Int(int64(binary.BigEndian.Uint32(d)))
		}
	case "integer64", "unsigned64":
		if len(d) == 8 {
			return tcl.Int(int64(binary.BigEndian.Uint64(d)))
		}
	case "address":
		if a, ok := diammsg.AddressOf(d); ok {
			return tcl.Str(a.String())
		}
	default:
		return tcl.Bytes(d)
	}
	return tcl.Empty
}

// cmdDiameterAVP is DIAMETER::avp over the message's top-level AVPs:
//
//	DIAMETER::avp CODE                    the first AVP's data
//	DIAMETER::avp codes                   the codes, in order
//	DIAMETER::avp count CODE              how many there are
//	DIAMETER::avp exists CODE             1 or 0
//	DIAMETER::avp data get CODE ?TYPE?    the first one's data as TYPE
//	DIAMETER::avp data set CODE VALUE ?TYPE?
//	DIAMETER::avp replace CODE VALUE ?TYPE?
//	DIAMETER::avp insert CODE VALUE ?TYPE?
//	DIAMETER::avp delete CODE
//	DIAMETER::avp create CODE V M P VENDOR DATA ?TYPE?   a new AVP's bytes
//
// CODE is a number or a base protocol AVP's name; set and replace add
// the AVP when the message has none [M: F5's data get/set forms with the
// types named as in the RFC's AVP formats].
func cmdDiameterAVP(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::avp"
	const usage = "DIAMETER::avp CODE | codes | count CODE | exists CODE | data get CODE ?TYPE? | data set CODE VALUE ?TYPE? | replace CODE VALUE ?TYPE? | insert CODE VALUE ?TYPE? | delete CODE | create CODE V M P VENDOR DATA ?TYPE?"
	a := args[1:]
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if a[0].String() == "create" {
		return diameterAVPCreate(a[1:]) // commands_diameter_retx.go
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	m := st.msg
	op := a[0].String()
	if op == "data" && len(a) >= 2 {
		op = "data " + a[1].String()
		a = a[1:]
	}
	opt := func(i int) string {
		if i < len(a) {
			return strings.ToLower(a[i].String())
		}
		return ""
	}
	switch op {
	case "codes":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("DIAMETER::avp codes")
		}
		var out []tcl.Value
		m.Each(func(x diammsg.AVP) bool { out = append(out, tcl.Int(int64(x.Code))); return true })
		return tcl.List(out...), nil
	case "count", "exists":
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("DIAMETER::avp " + op + " CODE")
		}
		code, err := avpCodeArg(cmd, a[1])
		if err != nil {
			return tcl.Empty, err
		}
		n := 0
		m.Each(func(x diammsg.AVP) bool {
			if x.Code == code {
				n++
			}
			return true
		})
		if op == "exists" {
			return tcl.Bool(n > 0), nil
		}
		return tcl.Int(int64(n)), nil
	case "data get":
		if len(a) != 2 && len(a) != 3 {
			return tcl.Empty, tcl.WrongArgs("DIAMETER::avp data get CODE ?TYPE?")
		}
		code, err := avpCodeArg(cmd, a[1])
		if err != nil {
			return tcl.Empty, err
		}
		x, ok := m.Find(code, 0)
		if !ok {
			return tcl.Empty, nil
		}
		return avpText(opt(2), x.Data), nil
	case "data set", "replace", "insert":
		if len(a) != 3 && len(a) != 4 {
			return tcl.Empty, tcl.WrongArgs("DIAMETER::avp " + op + " CODE VALUE ?TYPE?")
		}
		code, err := avpCodeArg(cmd, a[1])
		if err != nil {
			return tcl.Empty, err
		}
		data, err := avpValue(cmd, opt(3), a[2])
		if err != nil {
			return tcl.Empty, err
		}
		if op == "insert" {
			st.edit(func(dst []byte) []byte { return m.Insert(dst, code, diammsg.AVPFlagMandatory, 0, data) })
		} else {
			st.edit(func(dst []byte) []byte { return m.Set(dst, code, data) })
		}
		return tcl.Empty, nil
	case "delete":
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("DIAMETER::avp delete CODE")
		}
		code, err := avpCodeArg(cmd, a[1])
		if err != nil {
			return tcl.Empty, err
		}
		for range 64 { // every AVP of the code, within reason
			x, ok := st.msg.Find(code, 0)
			if !ok {
				break
			}
			cur := st.msg
			st.edit(func(dst []byte) []byte { return cur.Delete(dst, x) })
		}
		return tcl.Empty, nil
	}
	if len(a) == 1 {
		if code, ok := AVPCode(a[0].String()); ok {
			return tcl.Bytes(m.Get(code)), nil
		}
	}
	return tcl.Empty, tcl.Errorf("bad option %q: must be codes, count, exists, data, replace, insert, delete or an AVP code", a[0].String())
}

// cmdDiameterHeader is `DIAMETER::header version|flags|command|appid|
// hopbyhop|endtoend|length`: one field of the message's header.
func cmdDiameterHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "DIAMETER::header version|flags|command|appid|hopbyhop|endtoend|length"
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	st, err := diameterMsg(in, "DIAMETER::header")
	if err != nil {
		return tcl.Empty, err
	}
	m := st.msg
	switch strings.ToLower(args[1].String()) {
	case "version":
		return tcl.Int(int64(m.Raw[0])), nil
	case "flags":
		return tcl.Int(int64(m.Flags())), nil
	case "command", "code":
		return tcl.Int(int64(m.Code())), nil
	case "appid", "application-id":
		return tcl.Int(int64(m.AppID())), nil
	case "hopbyhop", "hop-by-hop", "hopid":
		return tcl.Int(int64(m.HopByHop())), nil
	case "endtoend", "end-to-end", "endid":
		return tcl.Int(int64(m.EndToEnd())), nil
	case "length":
		return tcl.Int(int64(len(m.Raw))), nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// diameterIdentity is DIAMETER::host and DIAMETER::realm: `CMD ?origin|
// destination? ?VALUE?` reads (or, with a value, sets) the message's
// Origin- (default) or Destination- AVP.
func diameterIdentity(cmd string, origin, dest uint32) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a := args[1:]
		code := origin
		if len(a) > 0 {
			switch a[0].String() {
			case "origin":
				a = a[1:]
			case "destination":
				code, a = dest, a[1:]
			}
		}
		if len(a) > 1 {
			return tcl.Empty, tcl.WrongArgs(cmd + " ?origin|destination? ?VALUE?")
		}
		st, err := diameterMsg(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		m := st.msg
		if len(a) == 0 {
			return tcl.Bytes(m.Get(code)), nil
		}
		v := tcl.BytesOf(a[0])
		st.edit(func(dst []byte) []byte { return m.Set(dst, code, v) })
		return tcl.Empty, nil
	}
}

// cmdDiameterResult is `DIAMETER::result ?CODE?`: the answer's
// Result-Code ("" in a message without one), or sets it.
func cmdDiameterResult(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("DIAMETER::result ?CODE?")
	}
	st, err := diameterMsg(in, "DIAMETER::result")
	if err != nil {
		return tcl.Empty, err
	}
	m := st.msg
	if len(args) == 1 {
		d := m.Get(diammsg.AVPResultCode)
		if len(d) != 4 {
			return tcl.Empty, nil
		}
		return tcl.Int(int64(binary.BigEndian.Uint32(d))), nil
	}
	data, err := avpValue("DIAMETER::result", "unsigned32", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	st.edit(func(dst []byte) []byte { return m.Set(dst, diammsg.AVPResultCode, data) })
	return tcl.Empty, nil
}
