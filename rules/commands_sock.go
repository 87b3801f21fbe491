package rules

import (
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// SocketConn is implemented by a Conn whose TCP connections are kernel
// sockets, found by type assertion: TCP::rtt, TCP::rttvar, TCP::mss,
// TCP::snd_cwnd, TCP::rto and TCP::nagle, and IP::tos with a value, read
// or set a side's socket through it. Without it, or for a side it has no
// socket for (not connected yet; a message-based virtual's server side,
// which is many connections), those commands are Tcl errors.
type SocketConn interface {
	// Socket runs fn with the side's socket descriptor, which fn must
	// not keep.
	Socket(s Side, fn func(fd int) error) error
}

// TCPInfo is the kernel's view of one TCP connection (TCP_INFO).
type TCPInfo struct {
	// RTT and RTTVar are the smoothed round-trip time and its variance.
	RTT, RTTVar time.Duration
	// RTO is the retransmission timeout.
	RTO time.Duration
	// MSS is the segment size the connection sends; Cwnd the congestion
	// window in segments.
	MSS, Cwnd int
}

func registerSock(t *tcl.Commands) {
	t.Register("TCP::rtt", tcpInfoCmd("TCP::rtt", func(ti TCPInfo) int64 { return ti.RTT.Microseconds() * 32 / 1000 }))
	t.Register("TCP::rttvar", tcpInfoCmd("TCP::rttvar", func(ti TCPInfo) int64 { return ti.RTTVar.Microseconds() * 16 / 1000 }))
	t.Register("TCP::rto", tcpInfoCmd("TCP::rto", func(ti TCPInfo) int64 { return ti.RTO.Milliseconds() }))
	t.Register("TCP::mss", tcpInfoCmd("TCP::mss", func(ti TCPInfo) int64 { return int64(ti.MSS) }))
	t.Register("TCP::snd_cwnd", tcpInfoCmd("TCP::snd_cwnd", func(ti TCPInfo) int64 { return int64(ti.Cwnd) * int64(ti.MSS) }))
	t.Register("TCP::nagle", cmdTCPNagle)
	t.Register("IP::tos", cmdIPTos).Compile = tosReadHook
}

// socketOf runs fn on the socket of the command's side.
func socketOf(in *tcl.Interp, cmd string, side func(s *ConnState) Side, fn func(fd int) error) error {
	s, c, err := sess(in, cmd)
	if err != nil {
		return err
	}
	sc, ok := c.(SocketConn)
	if !ok {
		return tcl.Errorf("%s: the connection has no TCP socket", cmd)
	}
	if err := sc.Socket(side(s), fn); err != nil {
		return tcl.Errorf("%s: %v", cmd, err)
	}
	return nil
}

// tcpInfoCmd is a TCP:: command that reads one figure of the side's
// connection, in F5's units: TCP::rtt in 1/32 ms and TCP::rttvar in 1/16
// ms (F5's pages), TCP::rto in ms, TCP::mss and TCP::snd_cwnd in bytes
// [M]. It takes an optional clientside or serverside word.
func tcpInfoCmd(name string, of func(TCPInfo) int64) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(name + " ?clientside|serverside?")
		}
		var v int64
		err := socketOf(in, name, func(s *ConnState) Side { return sideArg(s, args) }, func(fd int) error {
			ti, err := tcpInfo(fd)
			v = of(ti)
			return err
		})
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(v), nil
	}
}

// cmdTCPNagle is TCP::nagle enable|disable: Nagle's algorithm on the
// side's connection (disable sends small writes at once; the proxy's
// sockets start with it disabled).
func cmdTCPNagle(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || args[1].String() != "enable" && args[1].String() != "disable" {
		return tcl.Empty, tcl.WrongArgs("TCP::nagle enable|disable")
	}
	on := args[1].String() == "enable"
	return tcl.Empty, socketOf(in, "TCP::nagle", func(s *ConnState) Side { return s.side }, func(fd int) error { return setNoDelay(fd, !on) })
}

// cmdIPTos is IP::tos ?clientside|serverside? ?VALUE?: with a value,
// the ToS byte (IPv4) or traffic class (IPv6) of the packets openltm
// sends on that side from then on, 0 to 255 (DSCP 46 is 184); without,
// the ToS of the client's SYN (ipTosRead, commands_syn.go).
func cmdIPTos(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) == 1 || len(args) == 2 && (args[1].String() == "clientside" || args[1].String() == "serverside") {
		return ipTosRead(in, args)
	}
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("IP::tos ?clientside|serverside? ?value?")
	}
	v, err := args[len(args)-1].Int64()
	if err != nil || v < 0 || v > 255 {
		return tcl.Empty, tcl.Errorf("IP::tos: %q is not a ToS value from 0 to 255", args[len(args)-1].String())
	}
	side := func(s *ConnState) Side { return s.side }
	if len(args) == 3 {
		switch args[1].String() {
		case "clientside":
			side = func(*ConnState) Side { return ClientSide }
		case "serverside":
			side = func(*ConnState) Side { return ServerSide }
		default:
			return tcl.Empty, tcl.WrongArgs("IP::tos ?clientside|serverside? ?value?")
		}
	}
	return tcl.Empty, socketOf(in, "IP::tos", side, func(fd int) error { return setTOS(fd, int(v)) })
}

// tosReadHook marks a rule that reads IP::tos (no value after the
// optional side) as reading the client's SYN. BIG-IP answers with the
// ToS of the packet that brought the event; openltm, reading sockets and
// not packets, answers with the SYN's [M].
func tosReadHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	n := c.NumWords()
	if n == 2 {
		// A value, or a word only known when the rule runs (taken for
		// a value: a side there is read at run time).
		if v, lit := c.Literal(1); !lit || v != "clientside" && v != "serverside" {
			return nil
		}
	}
	if n == 1 || n == 2 {
		r.readsSYN = true
	}
	return nil
}
