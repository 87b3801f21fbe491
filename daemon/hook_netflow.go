package daemon

import (
	"context"
	"io"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/logpub"
	"github.com/openltm/openltm/dataplane/netflow"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
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
		{"show", "sys ipfix destination", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			ds, opts, err := e.ipfixDestinations(words)
			if err != nil {
				return err
			}
			for _, d := range ds {
				st := ipfix.Stats{Pool: d.opts.Pool, TCP: d.opts.TCP, TLS: d.opts.TCP && d.opts.TLS != nil}
				for _, x := range e.ipfixExporters(d.opts) {
					xs := x.Stats()
					st.Records += xs.Records
					st.Dropped += xs.Dropped
					st.Messages += xs.Messages
					st.Templates += xs.Templates
					st.Failures += xs.Failures
				}
				if err := render.IPFIXDestination(w, d.name, st, showOpts(s, opts)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"show", "sys ipfix irules", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			rs, opts, err := e.ipfixRules(words)
			if err != nil {
				return err
			}
			for _, r := range rs {
				st, _ := r.IPFIX()
				if err := render.IPFIXRule(w, r.Name, st, showOpts(s, opts)); err != nil {
					return err
				}
			}
			return nil
		}},
		{"reset-stats", "sys ipfix irules", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			rs, _, err := e.ipfixRules(words)
			if err != nil {
				return err
			}
			for _, r := range rs {
				r.ResetIPFIXStats()
			}
			return nil
		}},
		{"reset-stats", "sys ipfix destination", func(ctx context.Context, s *Session, _, words []string, w io.Writer) error {
			ds, _, err := e.ipfixDestinations(words)
			if err != nil {
				return err
			}
			for _, d := range ds {
				for _, x := range e.ipfixExporters(d.opts) {
					x.ResetStats()
				}
			}
			return nil
		}},
	}
}

// ipfixDest is an ipfix log destination of the running configuration.
type ipfixDest struct {
	name string
	opts ipfix.Options
}

// ipfixDestinations are the running ipfix log destinations the words
// name (every one when they name none), sorted, and the show options
// among the words. `sys ipfix destination` is BIG-IP's statistics of
// the ipfix log destinations: it has no settings of its own.
func (e *Engine) ipfixDestinations(words []string) ([]ipfixDest, []string, error) {
	all := map[string]ipfix.Options{}
	for _, p := range e.rules.rt.hsl.pubs.Load().Publishers() {
		for _, d := range p.Dests {
			if d.IPFIX != nil {
				all[d.Name] = d.IPFIX.Opts
			}
		}
	}
	var names, opts []string
	for _, wd := range words {
		if isShowOption(wd) {
			opts = append(opts, wd)
			continue
		}
		n := objects.FullPath("/Common", wd)
		if _, ok := all[n]; !ok {
			return nil, nil, objects.Invalid("sys ipfix destination %s: no ipfix log destination of that name is used by a log publisher (sys log-config destination ipfix)", n)
		}
		names = append(names, n)
	}
	if len(names) == 0 {
		for n := range all {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	out := make([]ipfixDest, 0, len(names))
	for _, n := range names {
		out = append(out, ipfixDest{name: n, opts: all[n]})
	}
	return out, opts, nil
}

// ipfixExporters are the running exporters of a destination's settings,
// one per version its users asked for.
func (e *Engine) ipfixExporters(o ipfix.Options) []*ipfix.Exporter {
	h := e.rules.rt.hsl.ipfix.Load()
	if h == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []*ipfix.Exporter
	for _, v := range []ipfix.Version{ipfix.IPFIX, ipfix.NetFlowV9, ipfix.NetFlowV5} {
		o.Version = v
		if x := h.exps[ipfixKey(o)]; x != nil {
			out = append(out, x)
		}
	}
	return out
}

// ipfixRules are the running ltm rules the words name (every one when
// they name none) that use IPFIX:: commands, in name order, and the show
// options among the words. `sys ipfix irules` is BIG-IP's statistics of
// its iRules' IPFIX use: it has no settings of its own. The counters
// live with the compiled rule, so a commit that keeps a rule's text
// keeps them.
func (e *Engine) ipfixRules(words []string) ([]*rules.Rule, []string, error) {
	var names, opts []string
	for _, wd := range words {
		if isShowOption(wd) {
			opts = append(opts, wd)
			continue
		}
		names = append(names, objects.FullPath("/Common", wd))
	}
	var out []*rules.Rule
	for _, n := range names {
		rs := e.compiledRules(ltmRule, ruleDefinition, []string{n})
		if len(rs) == 0 {
			return nil, nil, objects.Invalid("sys ipfix irules %s: no ltm rule of that name is running", n)
		}
		if _, ok := rs[0].IPFIX(); !ok {
			return nil, nil, objects.Invalid("sys ipfix irules %s: the rule uses no IPFIX:: command", n)
		}
		out = append(out, rs[0])
	}
	if len(names) == 0 {
		for _, r := range e.compiledRules(ltmRule, ruleDefinition, nil) {
			if _, ok := r.IPFIX(); ok {
				out = append(out, r)
			}
		}
	}
	return out, opts, nil
}
