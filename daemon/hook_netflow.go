package daemon

import (
	"context"
	"io"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/logpub"
	"github.com/openltm/openltm/dataplane/netflow"
)

// netflowStats keeps each netflow profile's counters by full path across
// commits, for `show ltm profile netflow` and reset-stats.
type netflowStats struct {
	mu sync.Mutex
	m  map[string]*netflow.Stats
}

// get is the counters of the named profile, made at first use.
func (n *netflowStats) get(name string) *netflow.Stats {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.m == nil {
		n.m = map[string]*netflow.Stats{}
	}
	s := n.m[name]
	if s == nil {
		s = &netflow.Stats{}
		n.m[name] = s
	}
	return s
}

// netflowSink sends a netflow profile's records to the ipfix
// destinations of its log publisher in the running configuration, each
// through the hub's exporter for the destination's pool and transport
// in the profile's version. The exporters found are kept until the
// running publishers, the hub or the version change, or one of them is
// closed, so a connection's records cost no lookup.
type netflowSink struct {
	sw    *hslSwitch
	pub   string
	cache atomic.Pointer[netflowExporters]
}

type netflowExporters struct {
	set  *logpub.Set
	hub  *ipfixHub
	v    ipfix.Version
	exps []*ipfix.Exporter
}

func (c *netflowExporters) stale(set *logpub.Set, hub *ipfixHub, v ipfix.Version) bool {
	if c == nil || c.set != set || c.hub != hub || c.v != v {
		return true
	}
	for _, x := range c.exps {
		if x.Closed() {
			return true
		}
	}
	return false
}

// Send implements netflow.Sink.
func (k *netflowSink) Send(v ipfix.Version, r *ipfix.Record) bool {
	set, hub := k.sw.pubs.Load(), k.sw.ipfix.Load()
	c := k.cache.Load()
	if c.stale(set, hub, v) {
		c = &netflowExporters{set: set, hub: hub, v: v}
		if p, ok := set.Lookup(k.pub); ok && hub != nil {
			for _, d := range p.Dests {
				if d.IPFIX == nil {
					continue
				}
				o := d.IPFIX.Opts
				o.Version = v
				if x := hub.Exporter(o); x != nil {
					c.exps = append(c.exps, x)
				}
			}
		}
		k.cache.Store(c)
	}
	ok := false
	for _, x := range c.exps {
		if x.Send(r) {
			ok = true
		}
	}
	return ok
}

// netflowCommands answer show and reset-stats ltm profile netflow: the
// counters of each profile named (or all), kept across commits.
func netflowCommands(e *Engine) []RuntimeCommand {
	stats := &e.rules.rt.hsl.netflow
	return []RuntimeCommand{
		{"show", profileNetflow.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileNetflow, names) {
				st := stats.get(name)
				rs := render.NetflowStats{Flows: st.Flows.Load(), Records: st.Records.Load(), Dropped: st.Dropped.Load()}
				if err := render.NetflowProfile(w, name, rs, showOpts(s, words)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", profileNetflow.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			for _, name := range profileNames(e, profileNetflow, names) {
				stats.get(name).Reset()
			}
			return nil
		}},
	}
}
