package daemon

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A tcp profile's socket settings, per side of the virtual, and a pool's
// IP ToS: the virtual's tcp profiles are read by their context
// (clientside: the client's socket, serverside: the member connections',
// all: both), the default pool's ip-tos-to-client joins the client side
// and each pool's ip-tos-to-server marks its member connections.

var (
	tcpNagle          = profileTCP.MustProp("nagle")
	tcpDelayedAcks    = profileTCP.MustProp("delayed-acks")
	tcpSendBuffer     = profileTCP.MustProp("send-buffer-size")
	tcpReceiveWindow  = profileTCP.MustProp("receive-window-size")
	tcpCongestion     = profileTCP.MustProp("congestion-control")
	tcpResetOnTimeout = common("reset-on-timeout", profileTCP, profileFastL4)
	poolToSClient     = ltmPool.MustProp("ip-tos-to-client")
	poolToSServer     = ltmPool.MustProp("ip-tos-to-server")
)

// congestionAvailable is the kernel's loaded congestion controls (nil:
// unknown, none left out); tests replace it.
var congestionAvailable = dataplane.CongestionAvailable

// tcpOptions fills the virtual's per-side socket settings from its tcp
// profiles, and reset-on-timeout from idle, the profile its idle timeout
// comes from.
func (t *translator) tcpOptions(o *objects.Object, v *dataplane.Virtual, idle *objects.Object) {
	v.IdleFIN = tcpResetOnTimeout.Effective(t.cfg, idle) == "disabled"
	client, server := t.tcpProfiles(o)
	t.closeCheck(o, client, server) // translate_tcpclose.go
	avail := congestionAvailable()
	v.ClientTCP = t.tcpSide(client, avail)
	v.ServerTCP = t.tcpSide(server, avail)
	if client != nil {
		v.ClientTCP = t.listenSide(client, v.ClientTCP) // translate_sockopts.go
	}
	t.synSides(client, server, v)           // translate_synopts.go
	v.TCPClose = t.tcpClose(client, server) // translate_tcpclose.go
	if client == nil && server == nil {
		if f := t.profile(o, profileFastL4); f != nil {
			v.ClientTCP, v.ServerTCP = t.fastL4Sides(f) // translate_sockopts.go
			t.fastL4Close(f, v)                         // translate_tcpclose.go
		}
	}
	if v.Pool == "" {
		return
	}
	if p := t.cfg.Get(ltmPool, v.Pool); p != nil {
		if tos, ok := parseToS(poolToSClient.Effective(t.cfg, p)); ok && tos.Set {
			if v.ClientTCP == nil {
				v.ClientTCP = &dataplane.TCPSide{}
			}
			v.ClientTCP.TOS, v.ClientTCP.SetTOS = tos.Value, true
		}
	}
}

// tcpProfiles finds the virtual's tcp profile of each side. A side with
// no profile of its own takes the other's, so one clientside profile
// alone applies to both, as one profile of context all does.
func (t *translator) tcpProfiles(o *objects.Object) (client, server *objects.Object) {
	pv := virtualProfiles.Get(o)
	if pv == nil {
		return nil, nil
	}
	for _, it := range pv.Items {
		p := t.cfg.Get(profileTCP, it.Name)
		if p == nil {
			p = t.cfg.Lookup(t.s, []string{profileTCP.Key()}, it.Name)
		}
		if p == nil {
			continue
		}
		ctx := "all"
		if c := it.Props["context"]; c != nil && c.Str != "" {
			ctx = c.Str
		}
		if ctx != "serverside" && client == nil {
			client = p
		}
		if ctx != "clientside" && server == nil {
			server = p
		}
	}
	if client == nil {
		client = server
	}
	if server == nil {
		server = client
	}
	return client, server
}

// explicit reports whether a profile or one of its defaults-from parents
// sets name: send-buffer-size, receive-window-size and
// congestion-control left at their schema defaults keep Linux's
// autotuning and the system's algorithm.
func (t *translator) explicit(p *objects.Object, name string) bool {
	return p.Props[name] != nil || objects.Inherited(p, name, t.cfg.Get) != nil
}

// tcpSide is one side's settings from its tcp profile; nil when every
// setting keeps the kernel's behaviour.
func (t *translator) tcpSide(p *objects.Object, avail map[string]bool) *dataplane.TCPSide {
	if p == nil {
		return nil
	}
	var s dataplane.TCPSide
	s.Nagle = tcpNagle.Effective(t.cfg, p) == "enabled"
	s.QuickAck = tcpDelayedAcks.Effective(t.cfg, p) == "disabled"
	if t.explicit(p, "send-buffer-size") {
		s.SendBuffer = atoi(tcpSendBuffer.Effective(t.cfg, p))
	}
	if t.explicit(p, "receive-window-size") {
		s.RecvBuffer = atoi(tcpReceiveWindow.Effective(t.cfg, p))
	}
	if t.explicit(p, "congestion-control") {
		if linux, ok := dataplane.CongestionLinux[tcpCongestion.Effective(t.cfg, p)]; ok && (avail == nil || avail[linux]) {
			s.Congestion = linux
		}
	}
	t.moreSide(p, &s) // translate_sockopts.go
	if s == (dataplane.TCPSide{}) {
		return nil
	}
	return &s
}

// poolToS fills the pool's ip-tos-to-server.
func (t *translator) poolToS(o *objects.Object, p *dataplane.Pool) {
	p.ToSServer, _ = parseToS(poolToSServer.Effective(t.cfg, o))
}

// parseToS reads ip-tos-to-client / ip-tos-to-server: pass-through
// (and mimic, kept as pass-through) leave the socket untouched; ok is
// false for anything else than those words and 0-255 (the reader has
// refused it already).
func parseToS(s string) (dataplane.TOS, bool) {
	switch s {
	case "", "pass-through", "mimic":
		return dataplane.TOS{}, true
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > 255 {
		return dataplane.TOS{}, false
	}
	return dataplane.TOS{Value: uint8(n), Set: true}, true
}

// tcpWarnings are the settings a configuration's virtual servers use
// that the kernel cannot follow: a congestion control it lacks (the
// connections keep the system's default), and ip-tos mimic (acted on as
// pass-through).
func tcpWarnings(s *objects.Schema, cfg *objects.Config, avail map[string]bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	t := &translator{s: s, cfg: cfg}
	for _, o := range cfg.Of(ltmVirtual) {
		c, sv := t.tcpProfiles(o)
		t.ipWarnings(c, add) // translate_sockopts.go
		if sv != c {
			t.ipWarnings(sv, add)
		}
		if c == nil && sv == nil {
			t.ipWarnings(t.profile(o, profileFastL4), add)
		}
		for _, p := range []*objects.Object{c, sv} {
			if p == nil || !t.explicit(p, "congestion-control") {
				continue
			}
			alg := tcpCongestion.Effective(cfg, p)
			linux, ok := dataplane.CongestionLinux[alg]
			switch {
			case !ok:
				add(fmt.Sprintf("ltm profile tcp %s: congestion-control %s has no Linux equivalent; its connections use the system's default congestion control", p.Name, alg))
			case avail != nil && !avail[linux]:
				add(fmt.Sprintf("ltm profile tcp %s: congestion-control %s needs the kernel's %s congestion control, which is not loaded (available: %s); its connections use the system's default", p.Name, alg, linux, strings.Join(sortedKeys(avail), " ")))
			}
		}
		pn := virtualPool.Str(o)
		if pn == "" || pn == "none" {
			continue
		}
		if p := cfg.Lookup(s, specPool, pn); p != nil {
			for _, pr := range []*objects.Prop{poolToSClient, poolToSServer} {
				if pr.Effective(cfg, p) == "mimic" {
					add(fmt.Sprintf("ltm pool %s: %s mimic is kept and acted on as pass-through", p.Name, pr.Name))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// warnTCP tells of the tcp settings a commit newly asks for that the
// kernel cannot follow (tcpWarnings), once: what the running
// configuration already asked for is not repeated.
func warnTCP(s *objects.Schema, old, cfg *objects.Config, warn func(string)) {
	avail := congestionAvailable()
	had := map[string]bool{}
	if old != nil {
		for _, w := range tcpWarnings(s, old, avail) {
			had[w] = true
		}
	}
	for _, w := range tcpWarnings(s, cfg, avail) {
		if !had[w] {
			warn(w)
		}
	}
}
