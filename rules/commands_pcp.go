package rules

import (
	"encoding/hex"
	"errors"
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// The pcp profile's rule (ltm profile pcp `rule`) runs in the PCP
// server of the lsn pools that use the profile, not on a virtual
// server's connections: PCP_REQUEST over each well-formed request
// before the server acts on it, PCP_RESPONSE over each answer about to
// leave, successful or not (a request PCP::reject refused included).
// Each message has a rule state of its own, as a UDP datagram without
// a flow: variables do not outlive the event.
//
// PCP::request reads the request (both events), PCP::response the
// answer (PCP_RESPONSE); both are read-only, as F5 documents.
// PCP::reject CODE (PCP_REQUEST) answers the request with the result
// code and does nothing else. F5's answers: opcode announce, map or
// peer (another opcode as its number); protocol tcp or udp (another as
// its number). [M: PCP::response protocol, internal-port and
// assigned-ext-port/addr answer NA on an answer to anything but a MAP,
// as F5 says of protocol and internal-port; PCP::request answers NA
// only on an ANNOUNCE, which has no such fields, since a PEER request
// carries them; prefer-failure and third-party answer 1 or 0,
// third-party-int-addr and suggested-ext-addr NA when absent; nonce is
// the mapping nonce in hex, options the codes of the request's options
// in order; PCP::reject 0 is an error: 0 is SUCCESS, not a refusal.]

// PCPMessage is one PCP exchange as the pcp profile's rule sees it:
// the request's fields, and in PCP_RESPONSE the answer's. The host
// fills it; PCP::reject sets Rejected and RejectCode.
type PCPMessage struct {
	Version, Opcode uint8
	// Lifetime is the requested lifetime.
	Lifetime uint32
	// Client is the request's PCP client address field.
	Client        netip.Addr
	Nonce         [12]byte
	Protocol      uint8
	InternalPort  uint16
	SuggestedPort uint16
	SuggestedAddr netip.Addr // invalid or unspecified: none
	PreferFailure bool
	ThirdParty    netip.Addr // the THIRD_PARTY option's address; invalid: none
	// Options are the request's option codes, in order.
	Options []uint8

	// The answer (PCP_RESPONSE): its version, result code, lifetime
	// and the external address and port assigned.
	RespVersion  uint8
	Result       uint8
	RespLifetime uint32
	AssignedPort uint16
	AssignedAddr netip.Addr

	// Rejected: PCP::reject ran in PCP_REQUEST, with RejectCode.
	Rejected   bool
	RejectCode uint8
}

// RunPCP runs ev (PCPRequest or PCPResponse) of the pcp profile's rule
// over m, a request from client to the PCP server at server. It does
// nothing when the rule has no handler of ev. An error is the rule's (a
// Tcl error): the caller drops the request, or logs and sends the
// answer (PCP_RESPONSE).
func (p *Program) RunPCP(ev Event, m *PCPMessage, client, server netip.AddrPort) error {
	if len(p.handlers[ev]) == 0 {
		return nil
	}
	s := p.NewConnState(&pcpConn{client: client, server: server})
	defer s.Release()
	s.flowStarted = true // a PCP message has no flow to raise FLOW_INIT for
	s.pcp = m
	return s.Run(ev)
}

func registerPCP(t *tcl.Commands) {
	t.Register("PCP::request", cmdPCPRequest)
	t.Register("PCP::response", cmdPCPResponse)
	t.Register("PCP::reject", cmdPCPReject)
}

// pcpOf is the PCP message of the event running, or the error of a
// PCP:: command outside the events it is valid in.
func pcpOf(in *tcl.Interp, cmd string, evs ...Event) (*PCPMessage, error) {
	s := sessionOf(in)
	if s != nil && s.pcp != nil {
		for _, ev := range evs {
			if s.event == ev {
				return s.pcp, nil
			}
		}
	}
	ev := "this context"
	if s != nil {
		ev = s.event.String()
	}
	valid := evs[0].String()
	if len(evs) > 1 {
		valid += ", " + evs[1].String()
	}
	return nil, tcl.Errorf("%s: not valid in %s (valid in %s)", cmd, ev, valid)
}

var na = tcl.Str("NA")

func pcpOpcode(op uint8) tcl.Value {
	switch op {
	case 0:
		return tcl.Str("announce")
	case 1:
		return tcl.Str("map")
	case 2:
		return tcl.Str("peer")
	}
	return tcl.Int(int64(op))
}

func pcpProtocol(p uint8) tcl.Value {
	switch p {
	case 6:
		return tcl.Str("tcp")
	case 17:
		return tcl.Str("udp")
	}
	return tcl.Int(int64(p))
}

func pcpAddr(a netip.Addr) tcl.Value {
	if !a.IsValid() || a.IsUnspecified() {
		return na
	}
	return tcl.Str(a.Unmap().String())
}

func pcpBool(b bool) tcl.Value {
	if b {
		return tcl.Int(1)
	}
	return tcl.Int(0)
}

const pcpRequestUsage = "PCP::request (version | opcode | lifetime | client-addr | protocol | internal-port | " +
	"suggested-ext-port | suggested-ext-addr | prefer-failure | third-party | third-party-int-addr | nonce | options)"

// cmdPCPRequest is PCP::request FIELD, in PCP_REQUEST and PCP_RESPONSE.
func cmdPCPRequest(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(pcpRequestUsage)
	}
	m, err := pcpOf(in, "PCP::request", PCPRequest, PCPResponse)
	if err != nil {
		return tcl.Empty, err
	}
	hasPorts := m.Opcode == 1 || m.Opcode == 2
	switch f := args[1].String(); f {
	case "version":
		return tcl.Int(int64(m.Version)), nil
	case "opcode":
		return pcpOpcode(m.Opcode), nil
	case "lifetime":
		return tcl.Int(int64(m.Lifetime)), nil
	case "client-addr":
		return pcpAddr(m.Client), nil
	case "protocol":
		if !hasPorts {
			return na, nil
		}
		return pcpProtocol(m.Protocol), nil
	case "internal-port":
		if !hasPorts {
			return na, nil
		}
		return tcl.Int(int64(m.InternalPort)), nil
	case "suggested-ext-port":
		if !hasPorts {
			return na, nil
		}
		return tcl.Int(int64(m.SuggestedPort)), nil
	case "suggested-ext-addr":
		if !hasPorts {
			return na, nil
		}
		return pcpAddr(m.SuggestedAddr), nil
	case "prefer-failure":
		return pcpBool(m.PreferFailure), nil
	case "third-party":
		return pcpBool(m.ThirdParty.IsValid()), nil
	case "third-party-int-addr":
		return pcpAddr(m.ThirdParty), nil
	case "nonce":
		if !hasPorts {
			return na, nil
		}
		return tcl.Str(hex.EncodeToString(m.Nonce[:])), nil
	case "options":
		l := make([]tcl.Value, len(m.Options))
		for i, o := range m.Options {
			l[i] = tcl.Int(int64(o))
		}
		return tcl.List(l...), nil
	default:
		return tcl.Empty, tcl.Errorf("PCP::request: unknown field %q: must be %s", f, pcpRequestUsage[len("PCP::request ("):len(pcpRequestUsage)-1])
	}
}

const pcpResponseUsage = "PCP::response (version | opcode | lifetime | protocol | result | client-addr | " +
	"internal-port | assigned-ext-port | assigned-ext-addr)"

// cmdPCPResponse is PCP::response FIELD, in PCP_RESPONSE: the answer
// about to leave, read-only as F5 has it.
func cmdPCPResponse(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(pcpResponseUsage)
	}
	m, err := pcpOf(in, "PCP::response", PCPResponse)
	if err != nil {
		return tcl.Empty, err
	}
	isMap := m.Opcode == 1
	switch f := args[1].String(); f {
	case "version":
		return tcl.Int(int64(m.RespVersion)), nil
	case "opcode":
		return pcpOpcode(m.Opcode), nil
	case "lifetime":
		return tcl.Int(int64(m.RespLifetime)), nil
	case "result":
		return tcl.Int(int64(m.Result)), nil
	case "client-addr":
		return pcpAddr(m.Client), nil
	case "protocol":
		if !isMap {
			return na, nil
		}
		return pcpProtocol(m.Protocol), nil
	case "internal-port":
		if !isMap {
			return na, nil
		}
		return tcl.Int(int64(m.InternalPort)), nil
	case "assigned-ext-port":
		if !isMap {
			return na, nil
		}
		return tcl.Int(int64(m.AssignedPort)), nil
	case "assigned-ext-addr":
		if !isMap {
			return na, nil
		}
		return pcpAddr(m.AssignedAddr), nil
	default:
		return tcl.Empty, tcl.Errorf("PCP::response: unknown field %q: must be %s", f, pcpResponseUsage[len("PCP::response ("):len(pcpResponseUsage)-1])
	}
}

// cmdPCPReject is PCP::reject RESULT_CODE, in PCP_REQUEST: the request
// is answered with the code (1 to 255) and not acted on.
func cmdPCPReject(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("PCP::reject result_code")
	}
	m, err := pcpOf(in, "PCP::reject", PCPRequest)
	if err != nil {
		return tcl.Empty, err
	}
	code, perr := strconv.Atoi(args[1].String())
	if perr != nil || code < 1 || code > 255 {
		return tcl.Empty, tcl.Errorf("PCP::reject: result code %q is not a number from 1 to 255 (0 is SUCCESS, not a refusal)", args[1].String())
	}
	m.Rejected, m.RejectCode = true, uint8(code)
	return tcl.Empty, nil
}

// pcpConn is the rule connection of one PCP message: the client is the
// PCP client (IP::client_addr, UDP::client_port), the local end the PCP
// server's address and port (IP::local_addr); it balances nothing and
// carries no payload a rule may touch.
type pcpConn struct {
	client, server netip.AddrPort
}

var errPCPConn = errors.New("not valid in PCP_REQUEST or PCP_RESPONSE (a PCP server's message, not a connection)")

func (c *pcpConn) Addr(e Endpoint) netip.AddrPort {
	switch e {
	case EndClient:
		return c.client
	case EndVirtual:
		return c.server
	}
	return netip.AddrPort{}
}
func (*pcpConn) Protocol() int                                       { return 17 }
func (*pcpConn) Decide(Decision) error                               { return errPCPConn }
func (*pcpConn) Collect(Side, int, int) error                        { return errPCPConn }
func (*pcpConn) Release(Side, int) error                             { return errPCPConn }
func (*pcpConn) Payload(Side) []byte                                 { return nil }
func (*pcpConn) ReplacePayload(Side, int, int, []byte) error         { return errPCPConn }
func (*pcpConn) Respond(Side, []byte) error                          { return errPCPConn }
func (*pcpConn) Close(Side) error                                    { return errPCPConn }
func (*pcpConn) Notify(Side, NotifyKind) error                       { return errPCPConn }
func (*pcpConn) LBSelect() (string, netip.AddrPort, error)           { return "", netip.AddrPort{}, errPCPConn }
func (*pcpConn) LBServer() (string, netip.AddrPort, bool)            { return "", netip.AddrPort{}, false }
func (*pcpConn) MemberStatus(string, netip.AddrPort) (string, error) { return "", errPCPConn }
func (*pcpConn) ActiveMembers(string) ([]netip.AddrPort, error)      { return nil, errPCPConn }
