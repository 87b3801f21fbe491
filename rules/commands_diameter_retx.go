package rules

import (
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/rules/tcl"
)

// The diameter profile's retransmission, answers and connection state
// as rules see them: DIAMETER_RETRANSMISSION, DIAMETER::retransmission
// (this request's settings), retransmission_default (the connection's),
// retransmission_reason, retransmit, retry, respond, message, state and
// skip_capabilities_exchange. route_status, dynamic_route_insertion and
// dynamic_route_lookup belong to the message routing (diameter session)
// profile's route table, which the classic profile has none of: there
// they fail with a Tcl error saying so (the last two act on a message
// routing virtual's connection: commands_diameter_dyn.go).

// DiameterContext is what the host knows of a DIAMETER_ event's message
// beyond its bytes.
type DiameterContext struct {
	// ClientSide: the event runs on the client's side of the flow
	// (DIAMETER::respond's message then goes to the client, else to the
	// member the message came from or goes to).
	ClientSide bool
	// Reason is why the request in hand is being retransmitted
	// (DIAMETER::retransmission_reason: timeout, error_code, irule; ""
	// is none).
	Reason string
	// Pending: the message is an answer whose request waits for it in the
	// retransmission queue, so that DIAMETER::retransmit can act.
	Pending bool
	// State is DIAMETER::state: the peer connection's state (IOPEN,
	// WAIT_ICEA, CLOSING, CLOSED).
	State string
	// Profile is the profile's retransmission settings, what
	// DIAMETER::retransmission reads where neither the rule nor the
	// connection set one.
	Profile DiameterRetx
	// PersistKey is the key the session profile persists the message by
	// (message routing's persist-avp value; "" none), what
	// DIAMETER::persist reads where the rule set none.
	PersistKey string
	// PersistTTL is the session profile's persist-timeout, what
	// DIAMETER::persist timeout reads where the rule set none.
	PersistTTL time.Duration
	// Routed: the message is routed by message routing (a diameter
	// session profile), whose persistence records the v14.1+
	// DIAMETER::persist modes, timeout and delete actions act on; the
	// diameter profile's flows have no such records, and the commands
	// are Tcl errors there rather than settings that do nothing.
	Routed bool
}

// DiameterRetx is a request's retransmission settings
// (DIAMETER::retransmission, retransmission_default): an empty field
// leaves the one below it (the connection's, then the profile's).
type DiameterRetx struct {
	// Action is disabled (the request is not kept), busy (answered
	// DIAMETER_TOO_BUSY when it would be retransmitted), unable
	// (DIAMETER_UNABLE_TO_DELIVER) or retransmit; "" leaves it.
	Action string
	// Timeout is how long the request waits for its answer before it is
	// retransmitted; 0 leaves it.
	Timeout time.Duration
	// ErrorCodes are the answers' Result-Codes that retransmit the
	// request instead of reaching the client; CodesSet says they were
	// set (to none, perhaps).
	ErrorCodes []uint32
	CodesSet   bool
}

// Over lays r's set fields over below.
func (r *DiameterRetx) Over(below DiameterRetx) DiameterRetx {
	if r == nil {
		return below
	}
	out := below
	if r.Action != "" {
		out.Action = r.Action
	}
	if r.Timeout > 0 {
		out.Timeout = r.Timeout
	}
	if r.CodesSet {
		out.ErrorCodes, out.CodesSet = r.ErrorCodes, true
	}
	return out
}

// DiameterDefaults is the connection's DIAMETER::retransmission_default
// settings; nil when the rules set none.
func (s *ConnState) DiameterDefaults() *DiameterRetx {
	if s.diameter == nil {
		return nil
	}
	return s.diameter.defaults
}

// DiameterSkipCER says whether a rule asked the connection to go without
// the capabilities exchange (DIAMETER::skip_capabilities_exchange), and
// the peer's Origin-Host it gave ("" none).
func (s *ConnState) DiameterSkipCER() (bool, string) {
	if s.diameter == nil {
		return false, ""
	}
	return s.diameter.skipCER, s.diameter.skipHost
}

// diameterConn is the session's Diameter state, made for commands that
// act on the connection rather than a message (valid in CLIENT_ACCEPTED).
func diameterConn(in *tcl.Interp, cmd string) (*DiameterState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.diameter == nil {
		s.diameter = &DiameterState{}
	}
	return s.diameter, nil
}

func diameterRetxCommands() map[string]tcl.CmdFunc {
	mrf := func(cmd string) tcl.CmdFunc {
		return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("%s: only a message routing virtual (diameter session profile) has a route table; a virtual with the diameter profile balances messages without one", cmd)
		}
	}
	return map[string]tcl.CmdFunc{
		"DIAMETER::retransmission":             cmdDiameterRetransmission,
		"DIAMETER::retransmission_default":     cmdDiameterRetransmissionDefault,
		"DIAMETER::retransmission_reason":      cmdDiameterRetransmissionReason,
		"DIAMETER::retransmit":                 cmdDiameterRetransmit,
		"DIAMETER::retry":                      cmdDiameterRetry,
		"DIAMETER::respond":                    cmdDiameterRespond,
		"DIAMETER::message":                    cmdDiameterMessage,
		"DIAMETER::state":                      cmdDiameterState,
		"DIAMETER::skip_capabilities_exchange": cmdDiameterSkipCER,
		"DIAMETER::route_status":               mrf("DIAMETER::route_status"),
		"DIAMETER::dynamic_route_insertion":    cmdDiameterDynamic("DIAMETER::dynamic_route_insertion", "insertion"), // commands_diameter_dyn.go
		"DIAMETER::dynamic_route_lookup":       cmdDiameterDynamic("DIAMETER::dynamic_route_lookup", "lookup"),
	}
}

// retxArgs applies `action|timeout|error-codes ?VALUE?` to *r (getting
// from eff, the settings in force, without a value).
func retxArgs(cmd string, args []tcl.Value, r *DiameterRetx, eff DiameterRetx) (tcl.Value, error) {
	usage := cmd + " action ?disabled|busy|unable|retransmit? | timeout ?SECONDS? | error-codes ?CODES?"
	if len(args) != 1 && len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	set := len(args) == 2
	switch args[0].String() {
	case "action":
		if !set {
			a := eff.Action
			if a == "" {
				a = "retransmit"
			}
			return tcl.Str(a), nil
		}
		switch v := args[1].String(); v {
		case "disabled", "busy", "unable", "retransmit":
			r.Action = v
		default:
			return tcl.Empty, tcl.Errorf("%s: bad action %q: must be disabled, busy, unable or retransmit", cmd, v)
		}
	case "timeout":
		if !set {
			return tcl.Int(int64(eff.Timeout / time.Second)), nil
		}
		n, err := strconv.Atoi(strings.TrimSpace(args[1].String()))
		if err != nil || n <= 0 {
			return tcl.Empty, tcl.Errorf("%s: bad timeout %q: must be a number of seconds above 0", cmd, args[1].String())
		}
		r.Timeout = time.Duration(n) * time.Second
	case "error-codes":
		if !set {
			out := make([]tcl.Value, len(eff.ErrorCodes))
			for i, c := range eff.ErrorCodes {
				out[i] = tcl.Int(int64(c))
			}
			return tcl.List(out...), nil
		}
		l, err := tcl.AsList(args[1])
		if err != nil {
			return tcl.Empty, err
		}
		codes := make([]uint32, 0, len(l))
		for _, v := range l {
			n, err := strconv.ParseUint(v.String(), 10, 32)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s: bad error code %q: must be a Result-Code number", cmd, v.String())
			}
			codes = append(codes, uint32(n))
		}
		r.ErrorCodes, r.CodesSet = codes, true
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	return tcl.Empty, nil
}

// cmdDiameterRetransmission is `DIAMETER::retransmission action|timeout|
// error-codes ?VALUE?`: the request in hand's retransmission settings.
// Set in DIAMETER_INGRESS they go with the request; set in
// DIAMETER_RETRANSMISSION they change the decision about to be carried
// out (busy or unable answer the client instead, disabled drops the
// request) [M: F5 documents the command in DIAMETER_INGRESS only].
func cmdDiameterRetransmission(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::retransmission"
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if !st.msg.Request() {
		return tcl.Empty, tcl.Errorf("%s: the message is an answer; only requests are retransmitted", cmd)
	}
	eff := st.out.Retx.Over(st.defaults.Over(st.ctx.Profile))
	r := st.out.Retx
	if r == nil {
		r = &DiameterRetx{}
	}
	v, err := retxArgs(cmd, args[1:], r, eff)
	if err == nil && len(args) == 3 {
		st.out.Retx = r
	}
	return v, err
}

// cmdDiameterRetransmissionDefault is `DIAMETER::retransmission_default
// action|timeout|error-codes ?VALUE?`: the connection's settings, which
// every later request of the client starts from (valid in
// CLIENT_ACCEPTED too). Read before any Diameter message, an unset value
// is the profile's: action retransmit, timeout 0 [M].
func cmdDiameterRetransmissionDefault(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::retransmission_default"
	st, err := diameterConn(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	eff := st.defaults.Over(st.ctx.Profile)
	r := st.defaults
	if r == nil {
		r = &DiameterRetx{}
	}
	v, err := retxArgs(cmd, args[1:], r, eff)
	if err == nil && len(args) == 3 {
		st.defaults = r
	}
	return v, err
}

// cmdDiameterRetransmissionReason is `DIAMETER::retransmission_reason`:
// why the request in hand is sent again — timeout (its member did not
// answer in time, or its connection ended [M]), error_code (the answer's
// Result-Code was one of the error codes), irule (DIAMETER::retransmit)
// — or none.
func cmdDiameterRetransmissionReason(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::retransmission_reason"
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(cmd)
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if st.ctx.Reason == "" {
		return tcl.Str("none"), nil
	}
	return tcl.Str(st.ctx.Reason), nil
}

// cmdDiameterRetransmit is `DIAMETER::retransmit`: the request the answer
// in hand answers is sent again (to another member, T flag set) and the
// answer goes no further. It fails on a request, and on an answer whose
// request is not in the retransmission queue.
func cmdDiameterRetransmit(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::retransmit"
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(cmd)
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if st.msg.Request() {
		return tcl.Empty, tcl.Errorf("%s: the message is a request, not an answer", cmd)
	}
	if !st.ctx.Pending {
		return tcl.Empty, tcl.Errorf("%s: no request in the retransmission queue awaits this answer", cmd)
	}
	st.out.Retransmit = true
	return tcl.Empty, nil
}

// diameterMessageArg reads a whole Diameter message a rule gives.
func diameterMessageArg(cmd string, v tcl.Value) ([]byte, error) {
	raw := append([]byte(nil), tcl.BytesOf(v)...)
	if _, err := diammsg.Parse(raw); err != nil {
		return nil, tcl.Errorf("%s: not a Diameter message: %v", cmd, err)
	}
	return raw, nil
}

// cmdDiameterRetry is `DIAMETER::retry MESSAGE ?ACROSS?`: MESSAGE (a
// whole request, as DIAMETER::message returned it) is sent toward the
// members as one of the client's requests; with ACROSS 1 it goes through
// persistence and DIAMETER_EGRESS, otherwise straight to the member the
// pool chooses [M: F5's hold-and-retry use; answers from members come
// back to the client].
func cmdDiameterRetry(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::retry"
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs(cmd + " MESSAGE ?ACROSS?")
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	raw, err := diameterMessageArg(cmd, args[1])
	if err != nil {
		return tcl.Empty, err
	}
	if !(diammsg.Msg{Raw: raw}).Request() {
		return tcl.Empty, tcl.Errorf("%s: the message is an answer; only requests are sent again", cmd)
	}
	across := false
	if len(args) == 3 {
		if across, err = args[2].Truth(); err != nil {
			return tcl.Empty, err
		}
	}
	st.out.Retry = append(st.out.Retry, DiameterRetry{Raw: raw, Across: across})
	return tcl.Empty, nil
}

// cmdDiameterRespond is `DIAMETER::respond VERSION R P E T COMMAND APPID
// HOPID ENDID PAYLOAD`: a new message, PAYLOAD its AVPs (as DIAMETER::avp
// create makes them), sent to the peer on the side the event runs on —
// the client in DIAMETER_INGRESS over the client's message, in
// DIAMETER_EGRESS toward the client and in DIAMETER_RETRANSMISSION; the
// member otherwise. The message in hand goes on unless the rule drops it.
func cmdDiameterRespond(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::respond"
	if len(args) != 11 {
		return tcl.Empty, tcl.WrongArgs(cmd + " VERSION RFLAG PFLAG EFLAG TFLAG COMMAND APPID HOPID ENDID PAYLOAD")
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	var n [9]uint64
	for i := range n {
		bits := 32
		switch {
		case i == 0:
			bits = 8
		case i <= 4:
			bits = 1
		case i == 5:
			bits = 24
		}
		v, err := strconv.ParseUint(strings.TrimSpace(args[1+i].String()), 0, bits)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: bad %s %q", cmd, [...]string{"version", "R flag", "P flag", "E flag", "T flag", "command code", "application id", "hop-by-hop id", "end-to-end id"}[i], args[1+i].String())
		}
		n[i] = v
	}
	var flags byte
	for i, f := range []byte{diammsg.FlagRequest, diammsg.FlagProxiable, diammsg.FlagError, diammsg.FlagRetransmit} {
		if n[1+i] == 1 {
			flags |= f
		}
	}
	raw := diammsg.Build(flags, uint32(n[5]), uint32(n[6]), uint32(n[7]), uint32(n[8]), tcl.BytesOf(args[10]))
	raw[0] = byte(n[0])
	if _, err := diammsg.Parse(raw); err != nil {
		return tcl.Empty, tcl.Errorf("%s: the payload is not a list of AVPs: %v", cmd, err)
	}
	st.out.Respond = append(st.out.Respond, raw)
	return tcl.Empty, nil
}

// cmdDiameterMessage is `DIAMETER::message ?MESSAGE?`: the whole message
// in hand, header and AVPs; with MESSAGE (a whole Diameter message) the
// message in hand becomes it [M: F5 documents the read].
func cmdDiameterMessage(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::message"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?MESSAGE?")
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		return tcl.Bytes(st.msg.Raw), nil
	}
	raw, err := diameterMessageArg(cmd, args[1])
	if err != nil {
		return tcl.Empty, err
	}
	st.msg, st.out.Edited = diammsg.Msg{Raw: raw}, true
	return tcl.Empty, nil
}

// cmdDiameterState is `DIAMETER::state`: the state of the peer connection
// the message in hand came from or goes to — WAIT_ICEA before its
// capabilities exchange is done, IOPEN after, CLOSING once the flow is
// ending, CLOSED for a member connection gone (a classic profile's
// connection is never reopened: no ROPEN).
func cmdDiameterState(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::state"
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(cmd)
	}
	st, err := diameterMsg(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.ctx.State), nil
}

// cmdDiameterSkipCER is `DIAMETER::skip_capabilities_exchange
// ?HOSTNAME?` (CLIENT_ACCEPTED): the client will send no CER; its first
// message is balanced like any request and no handshake-timeout applies.
// HOSTNAME is the client's Origin-Host, which the virtual then gives the
// members in the watchdog messages it sends and answers for it.
func cmdDiameterSkipCER(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::skip_capabilities_exchange"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?HOSTNAME?")
	}
	st, err := diameterConn(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	st.skipCER = true
	if len(args) == 2 {
		st.skipHost = args[1].String()
	}
	return tcl.Empty, nil
}

// diameterAVPCreate is `DIAMETER::avp create CODE V M P VENDOR DATA
// ?TYPE?`: a new AVP's bytes (header, data, padding) for
// DIAMETER::respond's payload or DIAMETER::avp insert; V is set whenever
// VENDOR is not 0.
func diameterAVPCreate(a []tcl.Value) (tcl.Value, error) {
	const cmd = "DIAMETER::avp create"
	if len(a) != 6 && len(a) != 7 {
		return tcl.Empty, tcl.WrongArgs(cmd + " CODE V M P VENDOR DATA ?TYPE?")
	}
	code, err := avpCodeArg(cmd, a[0])
	if err != nil {
		return tcl.Empty, err
	}
	var flags byte
	for i, f := range []byte{diammsg.AVPFlagVendor, diammsg.AVPFlagMandatory, diammsg.AVPFlagProtected} {
		on, err := a[1+i].Truth()
		if err != nil {
			return tcl.Empty, err
		}
		if on {
			flags |= f
		}
	}
	vendor, err := strconv.ParseUint(strings.TrimSpace(a[4].String()), 0, 32)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: bad vendor id %q", cmd, a[4].String())
	}
	typ := ""
	if len(a) == 7 {
		typ = strings.ToLower(a[6].String())
	}
	data, err := avpValue(cmd, typ, a[5])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Bytes(diammsg.AppendAVP(nil, code, flags, uint32(vendor), data)), nil
}
