package dataplane

import (
	"net/netip"
	"strings"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// Static NAT (`ltm nat`, Config.NATs). The way in: each enabled NAT is
// served by two virtuals the plane makes itself, TCP and UDP, on every
// port of the translation address (anyport.go's steering), whose one
// member is the originating address at port any: a connection to T:port
// goes to A:port with the client's own address, as an ip-forward
// virtual whose destination address is rewritten to A. A virtual on one
// port of T is more specific and takes that port. The way out:
// state.SNATSource gives a server connection whose client is A the
// source T (natobj).

// natPrefix starts the names of the virtuals, pools and nodes the
// plane makes for NATs: a name with a space, which no tmsh object has.
const natPrefix = "ltm nat "

// NATVirtualName is the name of the virtual that carries the NAT
// name's inbound traffic of one protocol (show sys connection prints
// it).
func NATVirtualName(name string, udp bool) string {
	if udp {
		return natPrefix + name + " udp"
	}
	return natPrefix + name + " tcp"
}

// withNATVirtuals is cfg with the virtuals, pool and node of each
// enabled NAT added; cfg itself when it has no NAT (cfg is not
// changed: the maps are copied).
func withNATVirtuals(cfg *Config) *Config {
	if len(cfg.NATs) == 0 {
		return cfg
	}
	c := *cfg
	c.Virtuals = make(map[string]*Virtual, len(cfg.Virtuals)+2*len(cfg.NATs))
	for k, v := range cfg.Virtuals {
		c.Virtuals[k] = v
	}
	c.Pools = make(map[string]*Pool, len(cfg.Pools)+len(cfg.NATs))
	for k, v := range cfg.Pools {
		c.Pools[k] = v
	}
	for _, n := range cfg.NATs {
		if n.Disabled || n.OutboundOnly || !n.Orig.IsValid() || !n.Xlat.IsValid() {
			continue
		}
		pool := natPrefix + n.Name
		c.Pools[pool] = &Pool{Name: pool, LBMode: RoundRobin,
			Members: []Member{{Node: pool, Addr: netip.AddrPortFrom(n.Orig, 0)}}}
		for _, udp := range []bool{false, true} {
			v := &Virtual{Name: NATVirtualName(n.Name, udp), Destination: netip.AddrPortFrom(n.Xlat, 0), Enabled: true,
				TranslateAddress: true, TranslatePort: true, Pool: pool, SNAT: SNAT{Type: SNATNone}, NAT: n.Name, VLANs: n.VLANs, RouteDomain: n.RouteDomain,
				RouteDomainReach: n.RouteDomainReach, Timers: n.Timers}
			if udp {
				v.Protocol = ProtoUDP
			}
			c.Virtuals[v.Name] = v
		}
	}
	return &c
}

// withoutNAT is xs without the objects the plane made for NATs.
func withoutNAT[S any](xs []S, name func(S) string) []S {
	out := xs[:0]
	for _, x := range xs {
		if !strings.HasPrefix(name(x), natPrefix) {
			out = append(out, x)
		}
	}
	return out
}

// NATStats is one ltm nat's traffic (show ltm nat).
type NATStats struct {
	// In is the connections (and their traffic) to the translation
	// address forwarded to the originating address, TCP and UDP
	// together, as the client side saw them.
	In Traffic
	// Out is the server connections the originating address opened
	// through virtuals that left from the translation address.
	Out uint64
	// Inbound: the way in runs (false for a disabled NAT, or one kept
	// for the way out only).
	Inbound bool
}

// NAT is the ltm nat name's statistics since it was configured; false
// when it is not in the running configuration.
func (p *Plane) NAT(name string) (NATStats, bool) {
	out, ok := p.nats.OutConns(name)
	if !ok {
		return NATStats{}, false
	}
	st := NATStats{Out: out}
	for _, udp := range []bool{false, true} {
		if v, ok := p.Virtual(NATVirtualName(name, udp)); ok {
			st.In.Add(v.ClientSide)
			st.Inbound = true
		}
	}
	p.mu.Lock()
	base := p.natIn[name]
	p.mu.Unlock()
	st.In = st.In.after(base)
	return st, true
}

// after is t, a NAT's running inbound traffic, counted on from base,
// the traffic of its virtuals taken away before: the totals added, the
// maximum the higher of the two, the current connections t's.
func (t Traffic) after(base Traffic) Traffic {
	cur, top := t.CurConns, max(t.MaxConns, base.MaxConns)
	t.Add(base)
	t.CurConns, t.MaxConns = cur, top
	return t
}

// keepNATInbound keeps, for each NAT still configured in cfg, the
// inbound traffic of its virtuals that the commit takes away (removed:
// a NAT disabled, or kept for the way out only), so that its counters
// survive a disable and enable [M: BIG-IP's NAT statistics are the
// NAT's, not its state's; the traffic of a connection still open when
// the NAT is disabled is counted up to that moment]. A NAT no longer
// configured loses it. Called by swap under p.mu.
func (p *Plane) keepNATInbound(cfg *Config, removed map[string]*state.Virtual) {
	if len(cfg.NATs) == 0 {
		p.natIn = nil
		return
	}
	kept := make(map[string]Traffic, len(p.natIn))
	configured := make(map[string]bool, len(cfg.NATs))
	for _, n := range cfg.NATs {
		configured[n.Name] = true
		if t, ok := p.natIn[n.Name]; ok {
			kept[n.Name] = t
		}
	}
	for _, v := range removed {
		s := v.Snap.Load()
		if s == nil || s.Cfg.NAT == "" || !configured[s.Cfg.NAT] {
			continue
		}
		t := kept[s.Cfg.NAT]
		in := trafficOf(&v.Stats)
		in.CurConns = 0
		kept[s.Cfg.NAT] = in.after(t)
	}
	p.natIn = kept
}

// ResetNATStats zeroes the ltm nat name's counters, both ways (reset-stats
// ltm nat); false when it is not in the running configuration.
func (p *Plane) ResetNATStats(name string) bool {
	if !p.nats.Reset(name) {
		return false
	}
	p.mu.Lock()
	delete(p.natIn, name)
	p.mu.Unlock()
	for _, udp := range []bool{false, true} {
		p.ResetStats(StatsVirtual, NATVirtualName(name, udp))
	}
	return true
}
