package rules

import (
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/rules/tcl"
)

// SYNConn is implemented by a Conn that can say what its client's SYN
// carried, found by type assertion. Linux keeps a SYN's headers only
// for a listener that asked before the connection came, so the virtual
// asks when its rules read them (Program.ReadsSYN) or its tcp profile
// names tcp-options; TCP::option get, IP::ttl, IP::hops and IP::tos
// (reading) answer from it.
type SYNConn interface {
	// ClientSYN is the client's SYN (nil when it was not kept) and the
	// tcp profile's tcp-options: the kinds TCP::option get may read.
	ClientSYN() (*synhdr.SYN, synhdr.Picks)
}

func registerSYN(t *tcl.Commands) {
	t.Register("TCP::option", cmdTCPOption).Compile = optionHook
	t.Register("IP::ttl", synIPCmd("IP::ttl", func(s *synhdr.SYN) int64 { return int64(s.TTL) })).Compile = synHook
	t.Register("IP::hops", synIPCmd("IP::hops", hops)).Compile = synHook
	t.Register("TCP::setmss", cmdSetMSS).Compile = setMSSHook
}

// synHook marks a rule that reads the client's SYN.
func synHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.readsSYN = true
	}
	return nil
}

// optionHook marks a rule with TCP::option get as reading the SYN, and
// keeps one with TCP::option set or noset from running: those add or
// strip options of the segments sent, which Linux gives a program no
// way to do.
func optionHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	switch v, lit := c.Literal(1); {
	case lit && (v == "set" || v == "noset"):
		line, col := c.Pos(0)
		r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: "TCP::option " + v + " (Linux cannot add or strip the options of the segments it sends)", Line: line, Col: col})
	default:
		r.readsSYN = true
	}
	return nil
}

// setMSSHook keeps a rule with TCP::setmss from running: Linux fixes a
// connection's MSS in its handshake (TCP_MAXSEG changes only a socket
// not yet connected), and the rule runs after it. The tcp profile's
// max-segment-size and proxy-mss set the MSS before the handshake.
func setMSSHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		line, col := c.Pos(0)
		r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: "TCP::setmss (Linux fixes a connection's MSS in its handshake)", Line: line, Col: col})
	}
	return nil
}

// cmdSetMSS is never run (setMSSHook keeps its rules out); it says why
// should a script build the call at run time.
func cmdSetMSS(*tcl.Interp, []tcl.Value) (tcl.Value, error) {
	return tcl.Empty, tcl.Errorf("TCP::setmss: Linux fixes a connection's MSS in its handshake; use the tcp profile's max-segment-size or proxy-mss")
}

// clientSYN is the client's SYN for cmd, run on the client side; nil
// with no error when the SYN was not kept.
func clientSYN(in *tcl.Interp, cmd string, side Side) (*synhdr.SYN, synhdr.Picks, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, synhdr.Picks{}, err
	}
	if side == ServerSide {
		return nil, synhdr.Picks{}, tcl.Errorf("%s: openltm reads the client's SYN only; the server side's packets are not kept", cmd)
	}
	sc, ok := c.(SYNConn)
	if !ok {
		return nil, synhdr.Picks{}, tcl.Errorf("%s: the connection did not keep its SYN", cmd)
	}
	s, p := sc.ClientSYN()
	return s, p, nil
}

// cmdTCPOption is TCP::option get KIND: the value of option KIND (2 to
// 255) in the client's SYN, which the tcp profile's tcp-options must
// name (first or last occurrence), as on BIG-IP: an error when it does
// not, empty when the SYN had no such option. A value of 1, 2 or 4
// bytes is the unsigned number it holds in network order, any other a
// binary string (binary scan reads it) [M].
func cmdTCPOption(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("TCP::option get|set|noset option ?value? ?next|all?")
	}
	if op := args[1].String(); op != "get" {
		return tcl.Empty, tcl.Errorf("TCP::option %s: Linux cannot add or strip the options of the segments it sends", op)
	}
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("TCP::option get option")
	}
	k, err := args[2].Int64()
	if err != nil || k < 2 || k > 255 {
		return tcl.Empty, tcl.Errorf("TCP::option get: %q is not an option kind from 2 to 255", args[2].String())
	}
	s := sessionOf(in)
	side := ClientSide
	if s != nil {
		side = s.side
	}
	syn, picks, err := clientSYN(in, "TCP::option get", side)
	if err != nil {
		return tcl.Empty, err
	}
	named, last := picks.Named(byte(k))
	if !named {
		return tcl.Empty, tcl.Errorf("TCP::option get: option %d is not configured for collection (the tcp profile's tcp-options)", k)
	}
	if syn == nil {
		return tcl.Empty, nil
	}
	v, found := syn.Option(byte(k), last)
	if !found {
		return tcl.Empty, nil
	}
	switch len(v) {
	case 1, 2, 4:
		var n int64
		for _, b := range v {
			n = n<<8 | int64(b)
		}
		return tcl.Int(n), nil
	}
	return tcl.Bytes(v), nil
}

// synIPCmd is an IP:: command reading a figure of the client's SYN, with
// an optional clientside word (serverside is an error: the member's
// packets are not kept) [M]. Empty when the SYN was not kept.
func synIPCmd(name string, of func(*synhdr.SYN) int64) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 || len(args) == 2 && args[1].String() != "clientside" && args[1].String() != "serverside" {
			return tcl.Empty, tcl.WrongArgs(name + " ?clientside|serverside?")
		}
		s := sessionOf(in)
		side := ClientSide
		if s != nil {
			side = sideArg(s, args)
		}
		syn, _, err := clientSYN(in, name, side)
		if err != nil || syn == nil {
			return tcl.Empty, err
		}
		return tcl.Int(of(syn)), nil
	}
}

// hops is IP::hops: how many routers the client's SYN crossed, from its
// TTL and the nearest initial TTL at or above it that systems use (64,
// 128, 255) [M].
func hops(s *synhdr.SYN) int64 {
	for _, start := range []int64{64, 128, 255} {
		if int64(s.TTL) <= start {
			return start - int64(s.TTL)
		}
	}
	return 0
}

// ipTosRead is IP::tos ?clientside|serverside? without a value: the ToS
// (traffic class) of the client's SYN.
func ipTosRead(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	return synIPCmd("IP::tos", func(s *synhdr.SYN) int64 { return int64(s.TOS) })(in, args)
}
