package rules

import (
	"github.com/openltm/openltm/rules/tcl"
)

// tcpProfileOnly are the TCP:: settings BIG-IP's own TCP stack changes per
// connection and Linux keeps for the whole host (a sysctl) or does not
// have: a rule reads the tcp profile's value for the event's side, and a
// change is a Tcl error saying why, so that a rule never believes it
// changed what it did not.
var tcpProfileOnly = []struct {
	cmd, attr, why string
}{
	{"TCP::abc", "abc", "Linux counts appropriate bytes for every connection (RFC 3465 is built in)"},
	{"TCP::dsack", "dsack", "Linux sets D-SACK for the whole host (net.ipv4.tcp_dsack)"},
	{"TCP::ecn", "ecn", "Linux negotiates ECN for the whole host (net.ipv4.tcp_ecn)"},
	{"TCP::earlyrxmit", "early-retransmit", "Linux sets early retransmit for the whole host (net.ipv4.tcp_early_retrans)"},
	{"TCP::enhanced_loss_recovery", "enhanced-loss-recovery", "Linux's loss recovery (RACK) is set for the whole host (net.ipv4.tcp_recovery)"},
	{"TCP::limxmit", "limited-transmit", "Linux always uses limited transmit (RFC 3042)"},
	{"TCP::rexmt_thresh", "rexmt-thresh", "Linux adapts the duplicate-ACK threshold itself (net.ipv4.tcp_reordering for the whole host)"},
	{"TCP::rt_metrics_timeout", "cmetrics-cache-timeout", "Linux keeps route metrics for the whole host (net.ipv4.tcp_no_metrics_save)"},
	{"TCP::push_flag", "push-flag", "Linux sets PSH on its own segments; no socket option chooses it"},
	{"TCP::lossfilterrate", "pkt-loss-ignore-rate", "Linux has no loss filter"},
	{"TCP::lossfilterburst", "pkt-loss-ignore-burst", "Linux has no loss filter"},
	{"TCP::autowin", "auto-receive-window-size", "Linux tunes the receive window of every socket that has not fixed its buffer (TCP::recvwnd), and cannot give a fixed one back"},
	{"TCP::proxybufferlow", "proxy-buffer-low", "the resume mark is the profile's (the event loops move TCP_NOTSENT_LOWAT to it while waiting)"},
}

func registerTCPSettings(t *tcl.Commands) {
	// A value written in the rule is known when it is compiled: the rule
	// is then kept from running, with a warning naming the form, as for
	// TCP::sendbuf auto; a value computed at run time is a Tcl error.
	anyValue := func(string) bool { return true }
	for _, p := range tcpProfileOnly {
		t.Register(p.cmd, profileSettingCmd(p.cmd, p.why, p.attr)).Compile = markHook(1, p.cmd, anyValue)
	}
	t.Register("TCP::lossfilter", profileSettingCmd("TCP::lossfilter", "Linux has no loss filter", "pkt-loss-ignore-rate", "pkt-loss-ignore-burst")).Compile = markHook(1, "TCP::lossfilter", anyValue)
	t.Register("TCP::naglemode", cmdTCPNaglemode)
	t.Register("TCP::proxybufferhigh", cmdTCPProxyBufferHigh)
	t.Register("TCP::proxybuffer", sockReadCmd("TCP::proxybuffer", func(fd int) (tcl.Value, error) {
		n, err := unsentBytes(fd)
		return tcl.Int(int64(n)), err
	}))
}

// tcpSetting reads attr of the tcp profile of the event's side.
func tcpSetting(in *tcl.Interp, cmd, attr string) (tcl.Value, error) {
	s, refs, err := virtualProfiles(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	p := sideProfile(refs, "tcp", s.side)
	if p == nil {
		return tcl.Empty, tcl.Errorf("%s: the virtual server has no tcp profile", cmd)
	}
	return profileAttr(cmd, p, attr)
}

// profileSettingCmd is a TCP:: setting read from the tcp profile (one
// attribute, or a list of several); any value given is refused with why.
func profileSettingCmd(cmd, why string, attrs ...string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 1 {
			return tcl.Empty, tcl.Errorf("%s: cannot be changed per connection: %s; the tcp profile's value stands", cmd, why)
		}
		if len(attrs) == 1 {
			return tcpSetting(in, cmd, attrs[0])
		}
		out := make([]tcl.Value, len(attrs))
		for i, a := range attrs {
			v, err := tcpSetting(in, cmd, a)
			if err != nil {
				return tcl.Empty, err
			}
			out[i] = v
		}
		return tcl.List(out...), nil
	}
}

// cmdTCPNaglemode is TCP::naglemode ?enable|disable|auto?: the side's
// Nagle mode, or sets it. enable clears TCP_NODELAY; disable and auto set
// it (auto leaves coalescing to Linux's autocorking, as the tcp profile's
// nagle auto does). Reading answers enable when TCP_NODELAY is clear,
// else auto when the side's tcp profile says auto, else disable [M].
func cmdTCPNaglemode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::naglemode"
	switch len(args) {
	case 1:
		var nodelay bool
		err := onSide(in, name, func(fd int) error {
			var err error
			nodelay, err = getNoDelay(fd)
			return err
		})
		if err != nil {
			return tcl.Empty, err
		}
		if !nodelay {
			return tcl.Str("enable"), nil
		}
		if v, err := tcpSetting(in, name, "nagle"); err == nil && v.String() == "auto" {
			return tcl.Str("auto"), nil
		}
		return tcl.Str("disable"), nil
	case 2:
		var nodelay bool
		switch args[1].String() {
		case "enable", "enabled":
		case "disable", "disabled", "auto":
			nodelay = true
		default:
			return tcl.Empty, tcl.Errorf("%s: %q is not enable, disable or auto", name, args[1].String())
		}
		return tcl.Empty, onSide(in, name, func(fd int) error { return setNoDelay(fd, nodelay) })
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?enable|disable|auto?")
}

// maxProxyBuffer bounds TCP::proxybufferhigh as the profile's
// proxy-buffer-high is bounded.
const maxProxyBuffer = 1 << 30

// cmdTCPProxyBufferHigh is TCP::proxybufferhigh ?BYTES?: how many bytes
// the side's socket may hold unsent before the proxy stops reading the
// other side (TCP_NOTSENT_LOWAT, what the profile's proxy-buffer-high
// sets), or sets it for this connection. Reading a socket the profile
// left at the kernel's bound answers the profile's value. With the
// profile's proxy-buffer-low set, the event loops put the profile's mark
// back after each wait they make on the socket [M].
func cmdTCPProxyBufferHigh(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "TCP::proxybufferhigh"
	switch len(args) {
	case 1:
		var n int
		err := onSide(in, name, func(fd int) error {
			var err error
			n, err = getNotSentLowat(fd)
			return err
		})
		if err != nil {
			return tcl.Empty, err
		}
		if n <= 0 || n >= maxProxyBuffer {
			return tcpSetting(in, name, "proxy-buffer-high")
		}
		return tcl.Int(int64(n)), nil
	case 2:
		n, err := args[1].Int64()
		if err != nil || n < 1 || n > maxProxyBuffer {
			return tcl.Empty, tcl.Errorf("%s: %q is not a size in bytes from 1 to %d", name, args[1].String(), maxProxyBuffer)
		}
		return tcl.Empty, onSide(in, name, func(fd int) error { return setNotSentLowat(fd, int(n)) })
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?size?")
}
