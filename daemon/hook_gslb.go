package daemon

import (
	"context"
	"net/netip"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dnssec"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// gslbMetricsInterval is how often the LTM side's figures are handed to
// the GSLB: BIG-IP's big3d reports over iQuery every few seconds; one
// second keeps a transcript's wait for a limit short.
var gslbMetricsInterval = time.Second

// gslbHook keeps the GSLB DNS server in step with the committed gtm
// objects, and feeds it what the local LTM virtual servers measure.
type gslbHook struct {
	e *Engine
	s *gslb.Server
	p *dataplane.Plane // nil: no LTM metrics to feed

	mu sync.Mutex
	// cfg is the configuration the server runs and cur its translation:
	// the next change is judged against what it left out, the metrics
	// feed follows its virtual servers, and an undone commit compiles it
	// again.
	cfg     *objects.Config
	cur     *gslb.Config
	skipped []string

	// ring keeps the DNSSEC keys across commits (and, in the state
	// directory, across restarts).
	ring *dnssec.Keyring

	feed    feedState
	cancel  context.CancelFunc
	stopped chan struct{}
}

// AttachGSLB makes s follow every commit, starting with the running
// configuration, answers the `show gtm` commands from it and, when p is
// not nil, reports the LTM virtual servers' status, connections and
// throughput to it for the gtm virtual servers at the same address and
// port (BIG-IP's discovery of the local virtual servers), and each link's
// throughput as the sum of its discovered virtual servers'. The returned
// function stops the reporting; s itself is the caller's to close.
func (e *Engine) AttachGSLB(s *gslb.Server, p *dataplane.Plane) (stop func(), err error) {
	h := &gslbHook{e: e, s: s, p: p, stopped: make(chan struct{}), ring: dnssec.NewKeyring()}
	if dir := e.StateDir(); dir != "" {
		h.ring.SetDir(filepath.Join(dir, "dnssec"))
	}
	if err := e.AddHook(h); err != nil {
		return nil, err
	}
	if p != nil {
		// Virtuals with a dns profile answer wide IPs and static zones
		// through the same server (dataplane/dnsvs).
		p.SetDNSAnswerer(s)
	}
	registerGSLBRuntime(e, h)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.run(ctx)
	return func() {
		cancel()
		<-h.stopped
		if p != nil {
			p.SetDNSAnswerer(nil)
		}
	}, nil
}

// Prepare implements Hook: the commit's one translation and one
// compilation of the gtm objects. An invalid gtm configuration (a value the
// GSLB cannot act on, a mode out of place, two wide IPs with one name, a
// zone that does not parse) is refused whole. An object left out because a
// reference dangles is refused when a change adds it, and kept with a
// warning when it comes from a loaded file, as for LTM objects; one left
// out for a rule using F5 commands openltm lacks is kept with a warning
// whatever the source. At start
// (old is nil) a stored configuration the server cannot run is logged and
// the hook stays, so the next commit can fix it.
func (h *gslbHook) Prepare(old, cfg *objects.Config, opts CommitOptions) (Change, error) {
	gc, skipped, kept, err := translateGSLB(h.e.schema, cfg, h.e.rules.compile)
	var plan *gslb.Plan
	var sg *dnssec.Signer
	if err == nil {
		// DNS rules share the LTM rules' log, data groups, table and
		// static:: variables, as on a BIG-IP.
		gc.RuleEnv = h.e.rules.rt.sharedEnv(h.e.log)
		gc.Geo = h.e.GeoIP()
		sg, err = h.signer(cfg, gc)
		if err == nil {
			err = listenerLogs(&translator{s: h.e.schema, cfg: cfg, rules: &ruleBinder{e: h.e}}, h.p, gc) // translate_dns.go
		}
	}
	if err == nil {
		if plan, err = gslb.Compile(gc); err != nil {
			err = objects.Invalid("%s", oneLine(err))
		}
	}
	if err != nil {
		if old == nil {
			h.e.log.Error("the stored GSLB configuration could not be applied", "err", err)
			return noChange{}, nil
		}
		return nil, err
	}
	had := map[string]bool{}
	if old != nil {
		h.mu.Lock()
		prev, known := h.skipped, h.cfg == old
		h.mu.Unlock()
		if !known {
			var prevKept []string
			_, prev, prevKept, _ = translateGSLB(h.e.schema, old, h.e.rules.compile)
			prev = append(prev, prevKept...)
		}
		for _, s := range prev {
			had[s] = true
		}
	}
	for _, s := range skipped {
		if !had[s] && !opts.Lenient {
			return nil, objects.Invalid("%s", s)
		}
	}
	// What is left, new, is kept: what a loaded file brings, and what
	// only lacks an F5 feature in openltm whatever the source.
	left := append(skipped[:len(skipped):len(skipped)], kept...)
	for _, s := range left {
		if !had[s] && opts.Warn != nil {
			opts.Warn(s + "; kept, and left out of GSLB decisions")
		}
	}
	return &gslbChange{h: h, start: old == nil, cfg: cfg, gc: gc, skipped: left, plan: plan, keys: sg}, nil
}

// signer gives gc the DNSSEC signer of cfg's ltm dns dnssec zones (nil
// when none is signed) and returns the signer holding every configured
// key, which the commit retains.
func (h *gslbHook) signer(cfg *objects.Config, gc *gslb.Config) (*dnssec.Signer, error) {
	zs, keys, err := dnssecZones(&translator{s: h.e.schema, cfg: cfg, rules: &ruleBinder{e: h.e}})
	if err != nil {
		return nil, objects.Invalid("%s", err)
	}
	if h.ring == nil {
		if len(zs) == 0 && len(keys) == 0 {
			return nil, nil
		}
		h.ring = dnssec.NewKeyring() // a hook made without AttachGSLB
	}
	sg, err := h.ring.Build(zs, keys)
	if err != nil {
		return nil, objects.Invalid("%s", err)
	}
	if !sg.Empty() {
		gc.DNSSEC = sg
	}
	return sg, nil
}

// gslbChange is a compiled gtm configuration for the server.
type gslbChange struct {
	h       *gslbHook
	start   bool // the hook is being added
	cfg     *objects.Config
	gc      *gslb.Config
	skipped []string
	plan    *gslb.Plan
	keys    *dnssec.Signer // every configured DNSSEC key, kept by Commit

	// Set by Commit, for Abort to go back.
	done    bool
	prevCfg *objects.Config
	prevGC  *gslb.Config
	prevSkp []string
}

// Commit implements Change. At start, a configuration the server cannot
// run (a listener address taken) is logged and the hook stays.
func (c *gslbChange) Commit() error {
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	if err := h.s.ApplyPlan(c.plan); err != nil {
		if c.start {
			h.e.log.Error("the stored GSLB configuration could not be applied", "err", err)
			return nil
		}
		return objects.Invalid("%s", oneLine(err))
	}
	for _, s := range c.skipped {
		h.e.log.Info("not in GSLB decisions", "object", s)
	}
	h.ring.Retain(c.keys)
	c.done, c.prevCfg, c.prevGC, c.prevSkp = true, h.cfg, h.cur, h.skipped
	h.cfg, h.cur, h.skipped = c.cfg, c.gc, c.skipped
	return nil
}

// Abort implements Change: after Commit, the server goes back to the
// configuration it ran before, compiled again (a plan goes in service
// once); going back is for a commit that failed to store, rare enough
// not to keep a second plan for.
func (c *gslbChange) Abort() {
	if !c.done {
		return
	}
	h := c.h
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := c.prevGC
	if prev == nil {
		prev = &gslb.Config{}
	}
	if err := h.s.Apply(prev); err != nil {
		h.e.log.Error("the GSLB could not go back to the running configuration", "err", err)
	}
	h.cfg, h.cur, h.skipped = c.prevCfg, c.prevGC, c.prevSkp
	c.done = false
}

// noChange is a Change with nothing to do.
type noChange struct{}

func (noChange) Commit() error { return nil }
func (noChange) Abort()        {}

func (h *gslbHook) config() *gslb.Config {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.cur
}

func (h *gslbHook) run(ctx context.Context) {
	defer close(h.stopped)
	if h.p == nil {
		<-ctx.Done()
		return
	}
	t := time.NewTicker(gslbMetricsInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			h.report(now)
		}
	}
}

// feedState remembers the last sample of each LTM virtual server, to turn
// counters into rates, and what was reported, to withdraw it.
type feedState struct {
	prev  map[string]ltmSample // by LTM virtual name
	vss   map[string][2]string // gtm virtual servers reported: key -> server, vs
	links map[string]bool      // links reported
}

type ltmSample struct {
	at              time.Time
	bitsIn, bitsOut uint64
	pkts            uint64 // in and out, for iQuery's packet rates
}

// ltmFigures is what one LTM virtual server contributes to the GSLB.
type ltmFigures struct {
	metrics       gslb.VSMetrics
	inBps, outBps int64
}

// ltmStatus maps an LTM virtual's show status onto the status the GSLB
// acts on: a disabled virtual, or one that takes no new connections
// (offline, or unavailable at its connection limit), is down; unknown
// (no monitor result yet) leaves the decision to the gtm monitor.
func ltmStatus(st dataplane.Status) gslb.Status {
	if st.State == "disabled" {
		return gslb.StatusDown
	}
	switch st.Availability {
	case dataplane.Available:
		return gslb.StatusUp
	case dataplane.Offline, dataplane.Unavailable:
		return gslb.StatusDown
	}
	return gslb.StatusUnknown
}

// report hands one sample of the LTM virtual servers to the GSLB.
func (h *gslbHook) report(now time.Time) {
	gc := h.config()
	if gc == nil {
		return
	}
	f := &h.feed
	if f.prev == nil {
		f.prev, f.vss, f.links = map[string]ltmSample{}, map[string][2]string{}, map[string]bool{}
	}
	byDest := map[netip.AddrPort]ltmFigures{}
	seen := map[string]bool{}
	for _, v := range h.p.Virtuals() {
		d, err := objects.ParseDest(v.Destination)
		if err != nil {
			continue
		}
		seen[v.Name] = true
		cur := ltmSample{at: now, bitsIn: v.ClientSide.BitsIn, bitsOut: v.ClientSide.BitsOut}
		fig := ltmFigures{metrics: gslb.VSMetrics{Status: ltmStatus(v.Status), Connections: int64(v.ClientSide.CurConns)}}
		if p, ok := f.prev[v.Name]; ok && cur.at.After(p.at) && cur.bitsIn >= p.bitsIn && cur.bitsOut >= p.bitsOut {
			dt := cur.at.Sub(p.at).Seconds()
			fig.inBps = int64(float64(cur.bitsIn-p.bitsIn) / dt)
			fig.outBps = int64(float64(cur.bitsOut-p.bitsOut) / dt)
			fig.metrics.Bps = fig.inBps + fig.outBps
		}
		f.prev[v.Name] = cur
		byDest[d.AddrPort()] = fig
	}
	for name := range f.prev {
		if !seen[name] {
			delete(f.prev, name)
		}
	}
	reported := map[string][2]string{}
	linkIn, linkOut := map[string]int64{}, map[string]int64{}
	for _, server := range sortedHosts(gc) {
		host := gc.Servers[server]
		for _, vs := range host.VirtualServers {
			fig, ok := byDest[netip.AddrPortFrom(vs.Destination.Addr().Unmap(), vs.Destination.Port())]
			if !ok {
				continue
			}
			h.s.SetVirtualServerMetrics(server, vs.Name, fig.metrics)
			reported[gslb.VSKey(server, vs.Name)] = [2]string{server, vs.Name}
			if vs.Link != "" {
				linkIn[vs.Link] += fig.inBps
				linkOut[vs.Link] += fig.outBps
			}
		}
	}
	for key, sv := range f.vss {
		if _, ok := reported[key]; !ok {
			h.s.ClearVirtualServerMetrics(sv[0], sv[1])
		}
	}
	f.vss = reported
	links := map[string]bool{}
	for name := range gc.Links {
		_, in := linkIn[name]
		if !in && !f.links[name] {
			continue
		}
		h.s.SetLinkMetrics(name, gslb.LinkMetrics{InBps: linkIn[name], OutBps: linkOut[name]})
		if in {
			links[name] = true
		}
	}
	f.links = links
}

func sortedHosts(gc *gslb.Config) []string {
	out := make([]string, 0, len(gc.Servers))
	for name := range gc.Servers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}
