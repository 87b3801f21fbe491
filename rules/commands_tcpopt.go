package rules

import (
	"math/bits"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// tcpExtra is what the socket commands beyond TCPInfo read of TCP_INFO.
type tcpExtra struct {
	// MSS is the sending segment size, Cwnd the congestion window and
	// Ssthresh the slow-start threshold (both in segments), RTTMicros
	// the smoothed round trip.
	MSS, Cwnd, Ssthresh, RTTMicros int64
	// PeerScale is the window scale the peer advertised, OwnScale the
	// one this end advertised.
	PeerScale, OwnScale int64
	// SndWnd is the peer's advertised receive window in bytes; -1 when
	// the kernel does not report it.
	SndWnd int64
}

// f5InitialSsthresh is BIG-IP's slow-start threshold before any loss
// (F5's TCP::snd_ssthresh page: 1,073,725,440 bytes, 65535 << 14, the
// largest window TCP can advertise); Linux's "none yet" is reported as it.
const f5InitialSsthresh = 1073725440

// linuxInfiniteSsthresh is Linux's TCP_INFINITE_SSTHRESH.
const linuxInfiniteSsthresh = 0x7fffffff

// congestionLinux maps BIG-IP's congestion control names to Linux's
// modules of the same algorithm. Linux's reno is NewReno, so both of
// F5's names choose it.
var congestionLinux = map[string]string{
	"reno": "reno", "newreno": "reno", "cubic": "cubic", "highspeed": "highspeed",
	"high-speed": "highspeed", "scalable": "scalable", "vegas": "vegas",
	"illinois": "illinois", "westwood": "westwood", "cdg": "cdg", "bbr": "bbr",
}

// congestionF5Only are BIG-IP's algorithms Linux has no module for.
var congestionF5Only = map[string]bool{"none": true, "woodside": true, "chd": true}

// maxKeepalive is Linux's largest TCP_KEEPIDLE (MAX_TCP_KEEPIDLE).
const maxKeepalive = 32767

// unusedPortTries bounds TCP::unused_port's search from its hint.
const unusedPortTries = 1024

func registerTCPOpt(t *tcl.Commands) {
	t.Register("TCP::keepalive", cmdTCPKeepalive)
	t.Register("TCP::idletime", cmdTCPIdletime)
	t.Register("TCP::congestion", cmdTCPCongestion)
	t.Register("TCP::delayed_ack", cmdTCPDelayedAck)
	t.Register("TCP::sendbuf", bufCmd("TCP::sendbuf", true)).Compile = unsupportedHook(1, "TCP::sendbuf", "auto")
	t.Register("TCP::recvwnd", bufCmd("TCP::recvwnd", false)).Compile = unsupportedHook(1, "TCP::recvwnd", "auto")
	t.Register("TCP::rcv_size", sockReadCmd("TCP::rcv_size", func(fd int) (tcl.Value, error) {
		n, err := getWindowClamp(fd)
		return tcl.Int(int64(n)), err
	}))
	t.Register("TCP::snd_wnd", detailCmd("TCP::snd_wnd", func(x tcpExtra) (int64, error) {
		if x.SndWnd < 0 {
			return 0, tcl.Errorf("TCP::snd_wnd: this kernel does not report the peer's window (Linux 5.19 or later does)")
		}
		return x.SndWnd, nil
	}))
	t.Register("TCP::snd_ssthresh", detailCmd("TCP::snd_ssthresh", func(x tcpExtra) (int64, error) {
		if x.Ssthresh >= linuxInfiniteSsthresh {
			return f5InitialSsthresh, nil
		}
		return min(x.Ssthresh*x.MSS, f5InitialSsthresh), nil
	}))
	t.Register("TCP::rcv_scale", detailCmd("TCP::rcv_scale", func(x tcpExtra) (int64, error) { return x.PeerScale, nil }))
	t.Register("TCP::snd_scale", detailCmd("TCP::snd_scale", func(x tcpExtra) (int64, error) { return x.OwnScale, nil }))
	t.Register("TCP::bandwidth", detailCmd("TCP::bandwidth", func(x tcpExtra) (int64, error) {
		if x.RTTMicros <= 0 {
			return 0, nil
		}
		// cwnd / RTT, as F5 defines it, in kilobits per second:
		// bytes per µs × 8 is Mbit/s, × 1000 kbit/s.
		return x.Cwnd * x.MSS * 8000 / x.RTTMicros, nil
	}))
	t.Register("TCP::pacing", cmdTCPPacing)
	t.Register("TCP::naglestate", sockReadCmd("TCP::naglestate", func(fd int) (tcl.Value, error) {
		nodelay, err := getNoDelay(fd)
		if nodelay {
			return tcl.Str("disabled"), err
		}
		return tcl.Str("enabled"), err
	}))
	t.Register("TCP::unused_port", unusedPortCmd("TCP::unused_port", false))
	t.Register("htonl", byteOrderCmd("htonl", 32))
	t.Register("ntohl", byteOrderCmd("ntohl", 32))
	t.Register("htons", byteOrderCmd("htons", 16))
	t.Register("ntohs", byteOrderCmd("ntohs", 16))
	t.Register("uptime", cmdUptime)
	t.Register("FLOWTABLE::count", flowtableCmd("FLOWTABLE::count")).Compile = unsupportedHook(1, "FLOWTABLE::count", "route_domain")
	t.Register("FLOWTABLE::limit", flowtableCmd("FLOWTABLE::limit")).Compile = unsupportedHook(1, "FLOWTABLE::limit", "route_domain")
}

// sideOf is the side a reading socket command acts on: the event's, or
// the one its optional clientside|serverside word names (as TCP::rtt
// takes it); ok is false for any other word or count.
func sideOf(s *ConnState, args []tcl.Value) (Side, bool) {
	switch {
	case len(args) == 1:
		return s.side, true
	case len(args) == 2 && args[1].String() == "clientside":
		return ClientSide, true
	case len(args) == 2 && args[1].String() == "serverside":
		return ServerSide, true
	}
	return 0, false
}

// sockReadCmd is a command that reads one thing of the side's socket,
// with an optional clientside or serverside word.
func sockReadCmd(name string, read func(fd int) (tcl.Value, error)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, _, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		side, ok := sideOf(s, args)
		if !ok {
			return tcl.Empty, tcl.WrongArgs(name + " ?clientside|serverside?")
		}
		var v tcl.Value
		err = socketOf(in, name, func(*ConnState) Side { return side }, func(fd int) error {
			var err error
			v, err = read(fd)
			return err
		})
		return v, err
	}
}

// detailCmd is sockReadCmd over one figure of TCP_INFO; of may refuse
// with a Tcl error of its own.
func detailCmd(name string, of func(tcpExtra) (int64, error)) tcl.CmdFunc {
	return sockReadCmd(name, func(fd int) (tcl.Value, error) {
		x, err := tcpDetail(fd)
		if err != nil {
			return tcl.Empty, err
		}
		n, err := of(x)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(n), nil
	})
}

// onSide runs fn on the socket of the event's side (setters take no side
// word on BIG-IP; `clientside {}` and `serverside {}` choose one).
func onSide(in *tcl.Interp, name string, fn func(fd int) error) error {
	return socketOf(in, name, func(s *ConnState) Side { return s.side }, fn)
}

// cmdTCPKeepalive is TCP::keepalive ?SECONDS?: the side's keep-alive
// interval in seconds (0: none sent), or sets it. Linux's TCP_KEEPIDLE
// and TCP_KEEPINTVL both take the value, so a probe goes after that long
// idle and again every that long; at most 32767 (Linux's limit).
func cmdTCPKeepalive(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::keepalive"
	switch len(args) {
	case 1:
		var n int
		err := onSide(in, name, func(fd int) error {
			var err error
			n, err = getKeepalive(fd)
			return err
		})
		return tcl.Int(int64(n)), err
	case 2:
		n, err := args[1].Int64()
		if err != nil || n < 0 || n > maxKeepalive {
			return tcl.Empty, tcl.Errorf("%s: %q is not a number of seconds from 0 to %d", name, args[1].String(), maxKeepalive)
		}
		return tcl.Empty, onSide(in, name, func(fd int) error { return setKeepalive(fd, int(n)) })
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?interval?")
}

// cmdTCPIdletime is TCP::idletime SECONDS: how long the connection may
// carry nothing before it is closed (0: no limit). openltm keeps one
// idle timer per connection, which both sides' traffic restarts, so the
// value is the connection's, whichever side sets it (IP::idle_timeout
// reads it).
func cmdTCPIdletime(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::idletime"
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(name + " idle_time")
	}
	n, err := args[1].Int64()
	if err != nil || n < 0 || n > maxIdleTimeout {
		return tcl.Empty, tcl.Errorf("%s: %q is not a number of seconds from 0 to %d", name, args[1].String(), maxIdleTimeout)
	}
	_, c, err := sess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	it, ok := c.(IdleTimer)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: this virtual server's connections have no idle timeout", name)
	}
	it.SetFlowIdleTimeout(time.Duration(n) * time.Second)
	return tcl.Empty, nil
}

// cmdTCPCongestion is TCP::congestion ?ALGORITHM?: the side's congestion
// control, as Linux names it (reno, cubic, bbr, ...), or changes it to
// the Linux module of F5's algorithm (congestionLinux). F5's none,
// woodside and chd have no Linux module and are Tcl errors, as is an
// algorithm whose module the kernel lacks or does not allow.
func cmdTCPCongestion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::congestion"
	switch len(args) {
	case 1:
		var cc string
		err := onSide(in, name, func(fd int) error {
			var err error
			cc, err = getCongestion(fd)
			return err
		})
		return tcl.Str(cc), err
	case 2:
		alg := args[1].String()
		linux, ok := congestionLinux[alg]
		if !ok {
			if congestionF5Only[alg] {
				return tcl.Empty, tcl.Errorf("%s: BIG-IP's %s congestion control has no Linux equivalent", name, alg)
			}
			names := make([]string, 0, len(congestionLinux))
			for n := range congestionLinux {
				names = append(names, n)
			}
			sort.Strings(names)
			return tcl.Empty, tcl.Errorf("%s: unknown algorithm %q: must be one of %s", name, alg, strings.Join(names, ", "))
		}
		return tcl.Empty, onSide(in, name, func(fd int) error { return setCongestion(fd, linux) })
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?algorithm?")
}

// enableArg reads enable|disable, or a Tcl boolean (F5's pages write
// BOOL_VALUE).
func enableArg(v tcl.Value) (bool, bool) {
	switch v.String() {
	case "enable", "enabled":
		return true, true
	case "disable", "disabled":
		return false, true
	}
	b, err := v.Truth()
	return b, err == nil
}

// cmdTCPDelayedAck is TCP::delayed_ack enable|disable. disable sets
// TCP_QUICKACK, enable clears it. Linux treats quick-ACK mode as a
// phase, not a setting: it may return to delayed ACKs on its own (when
// the connection turns interactive), so disable is the state from now
// until the kernel's own heuristics next change it.
func cmdTCPDelayedAck(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::delayed_ack"
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(name + " enable|disable")
	}
	on, ok := enableArg(args[1])
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: %q is neither enable nor disable", name, args[1].String())
	}
	return tcl.Empty, onSide(in, name, func(fd int) error { return setQuickAck(fd, !on) })
}

// bufCmd is TCP::sendbuf ?SIZE? (send) and TCP::recvwnd ?SIZE?: the
// side's send buffer or receive buffer, which bounds the window it
// advertises, in bytes, or sets it (SO_SNDBUF, SO_RCVBUF). Linux clamps
// a size to net.core.wmem_max or rmem_max and turns its own tuning of
// that buffer off for the socket; the reading is what it kept. `auto`
// (give the buffer back to the kernel's tuning) cannot be done on
// Linux and keeps the rule from running (unsupportedHook).
func bufCmd(name string, send bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		switch len(args) {
		case 1:
			var n int
			err := onSide(in, name, func(fd int) error {
				var err error
				n, err = getBuf(fd, send)
				return err
			})
			return tcl.Int(int64(n)), err
		case 2:
			if args[1].String() == "auto" {
				return tcl.Empty, tcl.Errorf("%s auto: Linux cannot give a buffer back to its tuning once set", name)
			}
			n, err := args[1].Int64()
			if err != nil || n < 1 || n > 1<<30 {
				return tcl.Empty, tcl.Errorf("%s: %q is not a size in bytes from 1 to %d", name, args[1].String(), 1<<30)
			}
			return tcl.Empty, onSide(in, name, func(fd int) error { return setBuf(fd, send, int(n)) })
		}
		return tcl.Empty, tcl.WrongArgs(name + " ?auto|size?")
	}
}

// cmdTCPPacing is TCP::pacing ?enable|disable?: whether the side's
// sending is paced (1 or 0), or asks for it. enable turns on the
// kernel's pacing at the rate TCP computes (SO_MAX_PACING_RATE set, with
// no cap); reading is 1 once asked, or when the congestion control is
// bbr, which paces. An fq qdisc paces every socket and is not seen here.
// Linux cannot unpace a paced socket: disable then is a Tcl error.
func cmdTCPPacing(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::pacing"
	switch len(args) {
	case 1:
		var on bool
		err := onSide(in, name, func(fd int) error {
			var err error
			on, err = getPacing(fd)
			return err
		})
		return tcl.Bool(on), err
	case 2:
		on, ok := enableArg(args[1])
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: %q is neither enable nor disable", name, args[1].String())
		}
		return tcl.Empty, onSide(in, name, func(fd int) error { return setPacing(fd, on) })
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?enable|disable?")
}

// unusedPortCmd is TCP::unused_port (and UDP::unused_port, udp) REMOTE_ADDR
// REMOTE_PORT LOCAL_ADDR ?HINT_PORT?: a local port no connection (no
// socket of the protocol) from LOCAL_ADDR holds (the first from HINT_PORT,
// up to 1024 tried, or the kernel's pick), 0 when none; what a rule gives
// `connect -myport` or a SNAT. The remote end is checked and not
// otherwise needed: a port free on the local address is free towards
// every peer.
func unusedPortCmd(name string, udp bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return unusedPortRun(name, udp, args)
	}
}

func unusedPortRun(name string, udp bool, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 4 && len(args) != 5 {
		return tcl.Empty, tcl.WrongArgs(name + " remote_addr remote_port local_addr ?hint_port?")
	}
	addr := func(v tcl.Value) (netip.Addr, error) {
		a, err := netip.ParseAddr(v.String())
		if err != nil {
			return a, tcl.Errorf("%s: %q is not an IP address", name, v.String())
		}
		return a, nil
	}
	port := func(v tcl.Value) (int, error) {
		p, err := v.Int64()
		if err != nil || p < 0 || p > 65535 {
			return 0, tcl.Errorf("%s: %q is not a port", name, v.String())
		}
		return int(p), nil
	}
	remote, err := addr(args[1])
	if err != nil {
		return tcl.Empty, err
	}
	if _, err := port(args[2]); err != nil {
		return tcl.Empty, err
	}
	local, err := addr(args[3])
	if err != nil {
		return tcl.Empty, err
	}
	if remote.Unmap().Is4() != local.Unmap().Is4() {
		return tcl.Empty, tcl.Errorf("%s: %s and %s are not of one address family", name, remote, local)
	}
	hint := 0
	if len(args) == 5 {
		if hint, err = port(args[4]); err != nil {
			return tcl.Empty, err
		}
	}
	p, err := unusedPortOf(local, hint, unusedPortTries, udp)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", name, err)
	}
	return tcl.Int(int64(p)), nil
}

// byteOrderCmd is htonl, ntohl (width 32) and htons, ntohs (16): BIG-IP
// runs on little-endian x86, so each swaps the bytes of the number's low
// 32 or 16 bits, as C's functions do there, whatever openltm's host is.
// The result is unsigned.
func byteOrderCmd(name string, width int) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(name + " number")
		}
		n, err := args[1].Int64()
		if err != nil {
			return tcl.Empty, err
		}
		if width == 16 {
			return tcl.Int(int64(bits.ReverseBytes16(uint16(n)))), nil
		}
		return tcl.Int(int64(bits.ReverseBytes32(uint32(n)))), nil
	}
}

// cmdUptime is uptime: how long the host has been up, in whole seconds
// (F5's GTM command; here in every event).
func cmdUptime(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("uptime")
	}
	n, err := systemUptime()
	if err != nil {
		return tcl.Empty, tcl.Errorf("uptime: %v", err)
	}
	return tcl.Int(n), nil
}

// FlowTable is the connection table as FLOWTABLE::count and
// FLOWTABLE::limit read it, so that a rule can shed or divert load
// before a virtual server's connection limit refuses clients. The
// daemon gives the dataplane's; nil makes those commands Tcl errors.
type FlowTable interface {
	// Flows is the number of client connections in the system.
	Flows() int
	// VirtualFlows is a virtual server's current client connections
	// and its connection limit (0: none); ok is false when there is no
	// virtual server of that full name.
	VirtualFlows(name string) (count, limit int, ok bool)
}

// flowtableCmd is FLOWTABLE::count ?virtual ?NAME?? and FLOWTABLE::limit
// virtual ?NAME?: the connections of the whole system (count alone), of
// a virtual server (the connection's own without a name), or its
// connection limit (0: none). The route_domain forms are F5's too;
// openltm has one routing table and does not take them (unsupportedHook).
func flowtableCmd(name string) tcl.CmdFunc {
	limit := name == "FLOWTABLE::limit"
	usage := name + " ?virtual ?virtual_server??"
	if limit {
		usage = name + " virtual ?virtual_server?"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s := sessionOf(in)
		var ft FlowTable
		if s != nil && s.prog.env != nil {
			ft = s.prog.env.FlowTable
		}
		if len(args) >= 2 && args[1].String() == "route_domain" {
			return tcl.Empty, tcl.Errorf("%s route_domain: openltm has no route domains", name)
		}
		if len(args) > 3 || len(args) >= 2 && args[1].String() != "virtual" || limit && len(args) == 1 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		if ft == nil {
			return tcl.Empty, tcl.Errorf("%s: the connection table is not available here", name)
		}
		if len(args) == 1 {
			return tcl.Int(int64(ft.Flows())), nil
		}
		var vs string
		if len(args) == 3 {
			vs = FullName(args[2].String())
		} else {
			_, c, err := sess(in, name)
			if err != nil {
				return tcl.Empty, err
			}
			li, ok := c.(LBInfo)
			if !ok {
				return tcl.Empty, tcl.Errorf("%s: this connection does not know its virtual server", name)
			}
			vs = li.VirtualName()
		}
		n, lim, ok := ft.VirtualFlows(vs)
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: no virtual server %s", name, vs)
		}
		if limit {
			return tcl.Int(int64(lim)), nil
		}
		return tcl.Int(int64(n)), nil
	}
}
