package rules

import (
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// protoUDP is UDP's IP protocol number, as Conn.Protocol reports it.
const protoUDP = 17

// registerUDP adds the UDP:: commands. On a UDP virtual server every
// datagram is an event of its own (CLIENT_DATA, SERVER_DATA): the payload
// is that datagram, UDP::respond sends one more, UDP::drop loses the
// current one. On a flow that is not UDP they are Tcl errors, as BIG-IP
// refuses them on a virtual without a udp profile.
func registerUDP(t *tcl.Commands) {
	t.Register("UDP::payload", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := udpSess(in, "UDP::payload")
		if err != nil {
			return tcl.Empty, err
		}
		return payloadCmd(c, s.side, "UDP::payload", args)
	})
	t.Register("UDP::respond", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := udpSess(in, "UDP::respond")
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("UDP::respond data")
		}
		return tcl.Empty, tclErr(c.Respond(s.side, tcl.BytesOf(args[1])))
	})
	t.Register("UDP::drop", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := udpSess(in, "UDP::drop")
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("UDP::drop")
		}
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideDiscard}))
	})
	t.Register("UDP::hold", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		h, err := udpHolder(in, "UDP::hold", args, ClientAccepted)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(h.UDPHold())
	})
	t.Register("UDP::release", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		h, err := udpHolder(in, "UDP::release", args, LBSelected, ServerConnected)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(h.UDPRelease())
	})
	port := func(name string, end func(Side) Endpoint) {
		inner := portCmd(name, end)
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if _, _, err := udpSess(in, name); err != nil {
				return tcl.Empty, err
			}
			return inner(in, args)
		})
	}
	port("UDP::local_port", func(s Side) Endpoint {
		if s == ServerSide {
			return EndServerLocal
		}
		return EndVirtual
	})
	port("UDP::remote_port", func(s Side) Endpoint {
		if s == ServerSide {
			return EndServer
		}
		return EndClient
	})
	port("UDP::client_port", func(Side) Endpoint { return EndClient })
	port("UDP::server_port", func(Side) Endpoint { return EndServer })
}

// UDPHolder is implemented by the Conn of a UDP flow (found by type
// assertion, as SSLConn is): UDP::hold in CLIENT_ACCEPTED holds the
// client's datagrams back, the first one included, while the flow's
// server is chosen and connected (LB_SELECTED, SERVER_CONNECTED), until
// UDP::release in one of those lets them go on through CLIENT_DATA to the
// server, as on BIG-IP 14.1+.
type UDPHolder interface {
	UDPHold() error
	UDPRelease() error
}

// udpHolder checks a hold or release command: no arguments, a UDP flow,
// one of the events BIG-IP allows it in.
func udpHolder(in *tcl.Interp, cmd string, args []tcl.Value, valid ...Event) (UDPHolder, error) {
	s, c, err := udpSess(in, cmd)
	if err != nil {
		return nil, err
	}
	if len(args) != 1 {
		return nil, tcl.WrongArgs(cmd)
	}
	ok := false
	var names []string
	for _, ev := range valid {
		ok = ok || s.event == ev
		names = append(names, ev.String())
	}
	if !ok {
		return nil, tcl.Errorf("%s: not valid in %s (valid in %s)", cmd, s.event, strings.Join(names, ", "))
	}
	h, isHolder := c.(UDPHolder)
	if !isHolder {
		return nil, tcl.Errorf("%s: this flow cannot hold datagrams", cmd)
	}
	return h, nil
}

// udpSess is sess for the UDP:: commands: a Tcl error unless the flow is
// UDP.
func udpSess(in *tcl.Interp, cmd string) (*ConnState, Conn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return s, c, err
	}
	if c.Protocol() != protoUDP {
		return s, c, tcl.Errorf("%s: the virtual server is not UDP (ip-protocol udp with a udp profile)", cmd)
	}
	return s, c, nil
}
