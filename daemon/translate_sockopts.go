package daemon

import (
	"fmt"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The tcp and fastl4 profiles' keep-alive, MSS, SYN retry, FIN-WAIT-2,
// TTL, DF, ToS, listener and handshake settings. As with the buffers, a
// setting left at its schema default (in the profile and its parents)
// keeps Linux's behaviour, so a default profile still costs nothing per
// connection.

// deferSeconds and fastOpenQueue are what deferred-accept and fast-open
// enabled put on the listener: BIG-IP has no number for either.
const (
	deferSeconds  = 10
	fastOpenQueue = 1024
	minMSS        = 88  // Linux's TCP_MIN_MSS
	maxSynCount   = 127 // Linux's MAX_TCP_SYNCNT
	maxKeepAlive  = 32767
)

// eff is p's effective value of its kind's setting name.
func (t *translator) eff(p *objects.Object, name string) string {
	return p.Kind.MustProp(name).Effective(t.cfg, p)
}

// ipSide fills the IP header settings both profiles share: ip-ttl-mode
// set with ip-ttl-v4/-v6, ip-df-mode set or clear.
func (t *translator) ipSide(p *objects.Object, s *dataplane.TCPSide) {
	if t.eff(p, "ip-ttl-mode") == "set" {
		s.TTL, s.TTL6 = uint8(atoi(t.eff(p, "ip-ttl-v4"))), uint8(atoi(t.eff(p, "ip-ttl-v6")))
	}
	switch t.eff(p, "ip-df-mode") {
	case "set":
		s.DF = dataplane.DFSet
	case "clear":
		s.DF = dataplane.DFClear
	}
}

// keepAlive fills keep-alive-interval: seconds (capped at Linux's
// largest), or off for 0 and fastl4's disabled.
func keepAlive(v string, s *dataplane.TCPSide) {
	n := atoi(v)
	if v == "disabled" || v == "none" || n <= 0 {
		s.KeepAlive, s.KeepAliveOff = 0, true
		return
	}
	s.KeepAlive = min(n, maxKeepAlive)
}

// mss is a max-segment-size or mss-override for TCP_MAXSEG: 0 leaves the
// route's, below Linux's smallest is raised to it.
func mss(v string) int {
	n := atoi(v)
	if n <= 0 {
		return 0
	}
	return max(n, minMSS)
}

// moreSide fills a tcp profile's side with the settings beyond the
// buffers and congestion control.
func (t *translator) moreSide(p *objects.Object, s *dataplane.TCPSide) {
	if t.explicit(p, "keep-alive-interval") {
		keepAlive(t.eff(p, "keep-alive-interval"), s)
	}
	if t.explicit(p, "max-segment-size") {
		s.MaxSeg = mss(t.eff(p, "max-segment-size"))
	}
	if t.explicit(p, "syn-max-retrans") {
		s.SynRetries = min(max(atoi(t.eff(p, "syn-max-retrans")), 1), maxSynCount)
	}
	if t.explicit(p, "fin-wait-2-timeout") {
		s.Linger2 = atoi(t.eff(p, "fin-wait-2-timeout"))
	}
	t.closeSide(p, s) // translate_tcpclose.go
	t.ipSide(p, s)
}

// listenSide adds the client-side profile's listener settings
// (deferred-accept, fast-open) and its ip-tos-to-client to the client
// side s (nil: none yet).
func (t *translator) listenSide(p *objects.Object, s *dataplane.TCPSide) *dataplane.TCPSide {
	var add dataplane.TCPSide
	if t.explicit(p, "deferred-accept") && t.eff(p, "deferred-accept") == "enabled" {
		add.DeferAccept = deferSeconds
	}
	if t.explicit(p, "fast-open") && t.eff(p, "fast-open") == "enabled" {
		add.FastOpen = fastOpenQueue
	}
	if t.explicit(p, "ip-tos-to-client") {
		if tos, ok := parseToS(t.eff(p, "ip-tos-to-client")); ok && tos.Set {
			add.TOS, add.SetTOS = tos.Value, true
		}
	}
	if add == (dataplane.TCPSide{}) {
		return s
	}
	if s == nil {
		s = &dataplane.TCPSide{}
	}
	s.DeferAccept, s.FastOpen = add.DeferAccept, add.FastOpen
	if add.SetTOS {
		s.TOS, s.SetTOS = add.TOS, true
	}
	return s
}

// fastL4Sides are a fastl4 profile's settings: the same on both sides
// but for the ToS of each and the handshake timeout of member connects.
func (t *translator) fastL4Sides(p *objects.Object) (client, server *dataplane.TCPSide) {
	var both dataplane.TCPSide
	if t.explicit(p, "keep-alive-interval") {
		keepAlive(t.eff(p, "keep-alive-interval"), &both)
	}
	both.MaxSeg = mss(t.eff(p, "mss-override"))
	both.RecvBuffer = atoi(t.eff(p, "receive-window-size"))
	t.ipSide(p, &both)
	c, sv := both, both
	if tos, ok := parseToS(t.eff(p, "ip-tos-to-client")); ok && tos.Set {
		c.TOS, c.SetTOS = tos.Value, true
	}
	if tos, ok := parseToS(t.eff(p, "ip-tos-to-server")); ok && tos.Set {
		sv.TOS, sv.SetTOS = tos.Value, true
	}
	if t.explicit(p, "tcp-handshake-timeout") {
		if n := atoi(t.eff(p, "tcp-handshake-timeout")); n > 0 {
			sv.ConnectTimeout = time.Duration(n) * time.Second
		}
	}
	if c != (dataplane.TCPSide{}) {
		client = &c
	}
	if sv != (dataplane.TCPSide{}) {
		server = &sv
	}
	return client, server
}

// ipWarnings are the ip-ttl-mode and ip-df-mode values a profile asks
// for that a socket proxy cannot follow per packet: acted on as the
// system's TTL (proxy) and path MTU discovery (pmtu).
func (t *translator) ipWarnings(p *objects.Object, add func(string)) {
	if p == nil {
		return
	}
	what := "tcp"
	if p.Kind == profileFastL4 {
		what = "fastl4"
	}
	if m := t.eff(p, "ip-ttl-mode"); t.explicit(p, "ip-ttl-mode") && (m == "preserve" || m == "decrement") {
		add(fmt.Sprintf("ltm profile %s %s: ip-ttl-mode %s is kept and acted on as proxy (the system's TTL): a proxy's connections do not carry the client's packets", what, p.Name, m))
	}
	if t.explicit(p, "ip-df-mode") && t.eff(p, "ip-df-mode") == "preserve" {
		add(fmt.Sprintf("ltm profile %s %s: ip-df-mode preserve is kept and acted on as pmtu", what, p.Name))
	}
	if what == "tcp" && t.eff(p, "mptcp") == "passthrough" {
		add(fmt.Sprintf("ltm profile tcp %s: mptcp passthrough is kept and acted on as disabled: a proxy ends each connection, so MPTCP options cannot pass through it", p.Name))
	}
}

// udpSides are a udp profile's socket settings: TTL, DF, send buffer and
// checksums on both sides, ip-tos-to-client on the client's (the
// virtual's listening sockets, which send the answers).
func (t *translator) udpSides(p *objects.Object) (client, server *dataplane.TCPSide) {
	var both dataplane.TCPSide
	t.ipSide(p, &both)
	if t.explicit(p, "send-buffer-size") {
		both.SendBuffer = atoi(t.eff(p, "send-buffer-size"))
	}
	both.NoChecksum = t.eff(p, "no-checksum") == "enabled"
	c := both
	if t.explicit(p, "ip-tos-to-client") {
		if tos, ok := parseToS(t.eff(p, "ip-tos-to-client")); ok && tos.Set {
			c.TOS, c.SetTOS = tos.Value, true
		}
	}
	if c != (dataplane.TCPSide{}) {
		client = &c
	}
	if both != (dataplane.TCPSide{}) {
		server = &both
	}
	return client, server
}
