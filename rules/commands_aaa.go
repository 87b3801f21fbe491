package rules

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/aaa"
	"github.com/openltm/openltm/dataplane/radius"
	"github.com/openltm/openltm/rules/tcl"
)

// The AAA:: commands send RADIUS requests of a rule's own through an
// internal virtual server with a `pem profile radius-aaa` (dataplane/aaa),
// as BIG-IP's do: AAA::auth_send VIRTUAL USER ?PASSWORD? an
// Access-Request, AAA::acct_send VIRTUAL NAME VALUE ... an
// Accounting-Request. Each returns a request id at once, the request
// leaving on a goroutine of its own; AAA::auth_result and
// AAA::acct_result ID give its outcome: OK, FAIL or ERROR. Where BIG-IP
// answers INPROGRESS until the answer is in (a rule polls with `after`),
// openltm parks the rule in the result command until it is [M]: the
// connection's events run on a goroutine of their own (waitHook), so the
// wait holds up no other client; INPROGRESS is still the answer where
// the event may not wait that long (an event loop's connection, its
// deadline nearer than the answer).
//
// The internal virtual's rules see the exchange: RADIUS_AAA_AUTH_REQUEST
// or RADIUS_AAA_ACCT_REQUEST over the request about to leave,
// RADIUS_AAA_AUTH_RESPONSE or RADIUS_AAA_ACCT_RESPONSE over the answer,
// where RADIUS::avp, RADIUS::code and RADIUS::id read and edit the
// packet (an edit is signed again with the profile's secret), and
// reject, drop or discard end the exchange (ERROR).

// AAAService finds the internal virtual server AAA::auth_send names (its
// full path, or its name in /Common) with a radius-aaa profile.
type AAAService func(virtual string) (*aaa.Service, bool)

// maxAAARequests bounds the AAA requests one connection may have
// open.
const maxAAARequests = 64

// aaaCall is one AAA::auth_send or AAA::acct_send: done closes when
// res is set.
type aaaCall struct {
	acct   bool
	done   chan struct{}
	cancel context.CancelFunc
	res    aaa.Result
	wait   time.Duration
}

// aaaState is a connection's AAA requests.
type aaaState struct {
	seq   int
	calls map[int]*aaaCall
}

func registerAAA(t *tcl.Commands) {
	t.Register("AAA::auth_send", cmdAAASend(false)).Compile = waitHook
	t.Register("AAA::acct_send", cmdAAASend(true)).Compile = waitHook
	t.Register("AAA::auth_result", cmdAAAResult(false)).Compile = waitHook
	t.Register("AAA::acct_result", cmdAAAResult(true)).Compile = waitHook
}

// aaaAcctAttrs are the attributes AAA::acct_send takes, as F5 lists
// them: their RADIUS type (RFC 2865, 2866, 2869, 3162; 3GPP's under
// Vendor-Specific, vendor 10415, TS 29.061) and value type.
var aaaAcctAttrs = map[string]struct {
	typ    uint8
	vtype  uint8 // 3GPP vendor type, 0 for a standard attribute
	format string
}{
	"user-name":               {1, 0, radius.TypeString},
	"framed-ip-address":       {8, 0, radius.TypeIP4},
	"framed-ipv6-prefix":      {97, 0, "prefix"},
	"event-timestamp":         {55, 0, radius.TypeInteger},
	"acct-status-type":        {40, 0, radius.TypeInteger},
	"acct-session-id":         {44, 0, radius.TypeString},
	"acct-input-octets":       {42, 0, radius.TypeInteger},
	"acct-output-octets":      {43, 0, radius.TypeInteger},
	"3gpp-imsi":               {26, 1, radius.TypeString},
	"3gpp-imeisv":             {26, 20, radius.TypeString},
	"3gpp-user-location-info": {26, 22, radius.TypeString},
}

// cmdAAASend is AAA::auth_send VIRTUAL USER ?PASSWORD? and
// AAA::acct_send VIRTUAL NAME VALUE ?NAME VALUE ...?.
func cmdAAASend(acct bool) tcl.CmdFunc {
	cmd, use := "AAA::auth_send", "AAA::auth_send virtual_server username ?password?"
	if acct {
		cmd, use = "AAA::acct_send", "AAA::acct_send virtual_server attribute value ?attribute value ...?"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if !acct && (len(args) < 3 || len(args) > 4) || acct && (len(args) < 4 || len(args)%2 != 0) {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		var attrs []aaa.Attr
		if acct {
			var err error
			if attrs, err = aaaAttrs(args[2:]); err != nil {
				return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
			}
		}
		s, _, err := sess(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		find := s.prog.env.aaaService()
		name := args[1].String()
		var svc *aaa.Service
		ok := false
		if find != nil {
			svc, ok = find(name)
		}
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: %q is not an internal virtual server with a radius-aaa profile", cmd, name)
		}
		st := s.aaa
		if st == nil {
			st = &aaaState{calls: map[int]*aaaCall{}}
			s.aaa = st
		}
		if len(st.calls) >= maxAAARequests {
			return tcl.Empty, tcl.Errorf("%s: %d AAA requests are already open on this connection (at most %d)", cmd, len(st.calls), maxAAARequests)
		}
		wait := svc.Transaction
		if wait <= 0 {
			wait = 30 * time.Second
		}
		ctx, cancel := context.WithTimeout(context.Background(), wait+time.Second)
		call := &aaaCall{acct: acct, done: make(chan struct{}), cancel: cancel, wait: wait + 2*time.Second}
		st.seq++
		st.calls[st.seq] = call
		user, password := args[2].String(), ""
		if len(args) == 4 {
			password = args[3].String()
		}
		log := s.prog.env.log
		go func() {
			defer close(call.done)
			defer cancel()
			if acct {
				call.res = svc.Acct(ctx, attrs)
			} else {
				call.res = svc.Auth(ctx, user, password)
			}
			if call.res.Outcome == aaa.Error && call.res.Err != nil {
				log("local0.notice", fmt.Sprintf("AAA: %s through %s: %v", cmd, svc.Name, call.res.Err))
			}
		}()
		return tcl.Int(int64(st.seq)), nil
	}
}

// aaaAttrs reads AAA::acct_send's name value pairs.
func aaaAttrs(a []tcl.Value) ([]aaa.Attr, error) {
	var out []aaa.Attr
	for i := 0; i+1 < len(a); i += 2 {
		name := strings.ToLower(a[i].String())
		d, ok := aaaAcctAttrs[name]
		if !ok {
			names := make([]string, 0, len(aaaAcctAttrs))
			for n := range aaaAcctAttrs {
				names = append(names, n)
			}
			slices.Sort(names)
			return nil, fmt.Errorf("unknown attribute %q (expected one of %s)", a[i].String(), strings.Join(names, ", "))
		}
		var v []byte
		var err error
		switch d.format {
		case radius.TypeString:
			v = tcl.BytesOf(a[i+1])
		case "prefix":
			v, err = ipv6Prefix(a[i+1].String())
		default:
			v, err = radius.Encode(a[i+1].String(), d.format)
		}
		if err != nil {
			return nil, fmt.Errorf("%s %q: %v", name, a[i+1].String(), err)
		}
		if d.vtype != 0 {
			vsa := binary.BigEndian.AppendUint32(nil, 10415)
			vsa = append(vsa, d.vtype, byte(2+len(v)))
			v = append(vsa, v...)
		}
		out = append(out, aaa.Attr{Type: d.typ, Value: v})
	}
	return out, nil
}

// ipv6Prefix is Framed-IPv6-Prefix's value (RFC 3162): reserved, the
// prefix length, the prefix.
func ipv6Prefix(s string) ([]byte, error) {
	p, err := netip.ParsePrefix(s)
	if err != nil || !p.Addr().Is6() {
		return nil, errors.New("expected an IPv6 prefix (2001:db8::/64)")
	}
	a := p.Masked().Addr().As16()
	n := (p.Bits() + 7) / 8
	return append([]byte{0, byte(p.Bits())}, a[:n]...), nil
}

// cmdAAAResult is AAA::auth_result and AAA::acct_result ID.
func cmdAAAResult(acct bool) tcl.CmdFunc {
	cmd := "AAA::auth_result"
	if acct {
		cmd = "AAA::acct_result"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " request_id")
		}
		s, _, err := sess(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		n, err := strconv.Atoi(args[1].String())
		var call *aaaCall
		if err == nil && s.aaa != nil {
			call = s.aaa.calls[n]
		}
		if call == nil || call.acct != acct {
			kind := "AAA::auth_send"
			if acct {
				kind = "AAA::acct_send"
			}
			return tcl.Empty, tcl.Errorf("%s: %q is not the id of an %s request on this connection", cmd, args[1].String(), kind)
		}
		start := time.Now()
		t := time.NewTimer(waitFor(in, call.wait))
		defer t.Stop()
		select {
		case <-call.done:
		case <-t.C:
			waited(in, start)
			return tcl.Str(aaa.InProgress.String()), nil
		}
		waited(in, start)
		return tcl.Str(call.res.Outcome.String()), nil
	}
}

// endAAA drops the connection's AAA requests (it ended): those in
// flight are stopped.
func (s *ConnState) endAAA() {
	if s.aaa == nil {
		return
	}
	for _, c := range s.aaa.calls {
		c.cancel()
	}
	s.aaa = nil
}

func (e *Env) aaaService() AAAService {
	if e == nil {
		return nil
	}
	return e.AAA
}

// AAAMessage is the RADIUS packet the RADIUS_AAA_* events work on: the
// request about to leave, or the answer. RADIUS:: commands read and edit
// Packet in place.
type AAAMessage struct {
	Packet []byte
	// Server is the RADIUS server that answered (zero in a request).
	Server netip.AddrPort
}

// errAAAEnded is a RADIUS_AAA_* event that rejected or dropped: the
// exchange ends in ERROR.
var errAAAEnded = errors.New("the rule ended the AAA exchange")

// RunAAA runs ev (one of the RADIUS_AAA_* events) of the internal
// virtual server's rules over m. Each exchange has a rule state of its
// own, as ICAP's do. An error is the rule's: the exchange fails.
func (p *Program) RunAAA(ev Event, m *AAAMessage) error {
	if len(p.handlers[ev]) == 0 {
		return nil
	}
	s := p.NewConnState(&aaaConn{m: m})
	defer s.Release()
	s.flowStarted = true
	s.radius = true
	if err := s.Run(ev); err != nil {
		return err
	}
	if s.ended {
		return errAAAEnded
	}
	return nil
}

// aaaConn is the rule connection of one AAA exchange: a UDP message
// whose payload is the RADIUS packet (either side), its server the
// RADIUS server; it balances nothing.
type aaaConn struct {
	m *AAAMessage
}

var errAAAConn = errors.New("not valid in the RADIUS_AAA_* events")

func (c *aaaConn) Addr(e Endpoint) netip.AddrPort {
	if e == EndServer {
		return c.m.Server
	}
	return netip.AddrPort{}
}
func (*aaaConn) Protocol() int { return protoUDP }
func (*aaaConn) Decide(d Decision) error {
	switch d.Kind {
	case DecideReject, DecideDrop, DecideDiscard:
		return nil // s.ended: the exchange fails
	}
	return errAAAConn
}
func (*aaaConn) Collect(Side, int, int) error { return errAAAConn }
func (*aaaConn) Release(Side, int) error      { return errAAAConn }
func (c *aaaConn) Payload(Side) []byte        { return c.m.Packet }
func (c *aaaConn) ReplacePayload(_ Side, off, n int, data []byte) error {
	p := c.m.Packet
	if off < 0 || n < 0 || off+n > len(p) {
		return errors.New("replace outside the packet")
	}
	out := make([]byte, 0, len(p)-n+len(data))
	out = append(out, p[:off]...)
	out = append(out, data...)
	c.m.Packet = append(out, p[off+n:]...)
	return nil
}
func (*aaaConn) Respond(Side, []byte) error                          { return errAAAConn }
func (*aaaConn) Close(Side) error                                    { return errAAAConn }
func (*aaaConn) Notify(Side, NotifyKind) error                       { return errAAAConn }
func (*aaaConn) LBSelect() (string, netip.AddrPort, error)           { return "", netip.AddrPort{}, errAAAConn }
func (*aaaConn) LBServer() (string, netip.AddrPort, bool)            { return "", netip.AddrPort{}, false }
func (*aaaConn) MemberStatus(string, netip.AddrPort) (string, error) { return "", errAAAConn }
func (*aaaConn) ActiveMembers(string) ([]netip.AddrPort, error)      { return nil, errAAAConn }
