package rules

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules/tcl"
)

// The MR:: commands that act on the connection a message came from and
// on its router's peer connections rather than on the message:
// MR::prime, MR::connect_back_port, MR::equivalent_transport,
// MR::ignore_peer_port, MR::always_match_port, and MR::stream. Like the
// other MR:: commands they run in the GENERICMESSAGE_ and MR_ events
// (and a protocol's message events) of a message-routing virtual and
// raise a Tcl error elsewhere. [M: F5 documents their names and one line
// each; the argument forms are openltm's, after MR::message route's and
// MR::peer's.]

// mrSession is the client connection the event's message came from.
func mrSession(in *tcl.Interp, cmd string) (*MRState, *mrf.Session, error) {
	st, err := mrMsg(in, cmd, true)
	if err != nil {
		return nil, nil, err
	}
	o := st.msg.Originator()
	if o == nil {
		return nil, nil, tcl.Errorf("%s: the message has no client connection", cmd)
	}
	return st, o, nil
}

// cmdMRPrime is MR::prime peer NAME | MR::prime ?virtual V|config C?
// host ADDR:PORT|pool POOL: the peer's connections are opened now, in
// the background, so that the messages routed to it later find them
// open (a per-client peer's for this client connection).
func cmdMRPrime(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::prime"
	const usage = cmd + " peer NAME | " + cmd + " ?virtual V|config C? host ADDR:PORT|pool POOL"
	st, err := mrRouter(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	var p *mrf.Peer
	tr := ""
	a := args[1:]
	for len(a) >= 2 {
		w, v := a[0].String(), a[1].String()
		switch w {
		case "peer":
			if p = st.router.Peer(v); p == nil {
				return tcl.Empty, tcl.Errorf("%s: no peer %q", cmd, v)
			}
		case "virtual", "config":
			tr = v
		case "host":
			ap, err := netip.ParseAddrPort(v)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s: host %q is not address:port", cmd, v)
			}
			p = &mrf.Peer{Name: "host " + ap.String(), Host: ap, Conns: 1}
		case "pool":
			p = &mrf.Peer{Name: "pool " + v, Pool: v, Conns: 1}
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		a = a[2:]
	}
	if len(a) != 0 || p == nil {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if tr != "" && p.Transport == "" {
		p.Transport = tr
	}
	var s *mrf.Session
	if st.msg != nil {
		s = st.msg.Originator()
	}
	if err := st.router.Prime(p, s); err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
	}
	return tcl.Empty, nil
}

// cmdMRConnectBackPort is MR::connect_back_port ?PORT?: the port an
// answer due to this client connection goes to once it has ended and
// the router connects back to it (a UDP virtual's session profile with
// do-not-connect-back disabled); 0, the client's own port.
func cmdMRConnectBackPort(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::connect_back_port"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?PORT?")
	}
	_, s, err := mrSession(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		n, err := strconv.ParseUint(args[1].String(), 10, 16)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %q is not a port (0 to 65535)", cmd, args[1].String())
		}
		s.SetConnectBackPort(uint16(n))
		return tcl.Empty, nil
	}
	return tcl.Int(int64(s.ConnectBackPort())), nil
}

// cmdMREquivalent is MR::equivalent_transport ?none | TRANSPORT ...?: the
// transports (virtual or transport-config names) whose connections this
// connection's messages may use as their own transport's.
func cmdMREquivalent(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::equivalent_transport"
	_, s, err := mrSession(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		var out []tcl.Value
		for _, t := range s.Equivalent() {
			out = append(out, tcl.Str(t))
		}
		return tcl.List(out...), nil
	}
	var ts []string
	if !(len(args) == 2 && args[1].String() == "none") {
		for _, a := range args[1:] {
			// A Tcl list of names counts as its names.
			items, err := tcl.AsList(a)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
			}
			for _, it := range items {
				ts = append(ts, it.String())
			}
		}
	}
	s.SetEquivalent(ts)
	return tcl.Empty, nil
}

// cmdMRPortMatch is MR::ignore_peer_port ?BOOL? (always false) and
// MR::always_match_port ?BOOL? (always true): whether a message routed
// to a host may use an open connection to the host's address on another
// port, the second overriding the first.
func cmdMRPortMatch(cmd string, always bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " ?BOOLEAN?")
		}
		_, s, err := mrSession(in, cmd)
		if err != nil {
			return tcl.Empty, err
		}
		ignore, match := s.PortMatch()
		cur := &ignore
		if always {
			cur = &match
		}
		if len(args) == 1 {
			return tcl.Bool(*cur), nil
		}
		b, err := boolArg(cmd, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		*cur = b
		s.SetPortMatch(ignore, match)
		return tcl.Empty, nil
	}
}

// cmdMRStream is MR::stream ?BOOLEAN?: whether the message's payload
// streams (MR_DATA, MR::collect). openltm reads every message whole
// before its events run, so it never does: the query answers false,
// false is accepted, and asking for streaming is a Tcl error rather
// than a setting that would silently do nothing [M].
func cmdMRStream(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::stream"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?BOOLEAN?")
	}
	if _, err := mrMsg(in, cmd, true); err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		on, err := boolArg(cmd, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		if on {
			return tcl.Empty, tcl.Errorf("%s: not supported: openltm reads each message whole before its events run", cmd)
		}
		return tcl.Empty, nil
	}
	return tcl.Bool(false), nil
}
