package daemon

import (
	"context"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane"
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
	// dry checks a configuration without serving it: it never has
	// listeners or monitors, so compiling it there binds and probes
	// nothing.
	dry *gslb.Server

	mu  sync.Mutex
	cur *gslb.Config

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
	h := &gslbHook{e: e, s: s, p: p, dry: gslb.New(gslb.Options{Logger: e.Logger()}), stopped: make(chan struct{})}
	if err := e.AddHook(h); err != nil {
		h.dry.Close()
		return nil, err
	}
	registerGSLBShows(e, s)
	ctx, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	go h.run(ctx)
	return func() {
		cancel()
		<-h.stopped
		h.dry.Close()
	}, nil
}

// translate is TranslateGSLB with the skipped objects logged.
func (h *gslbHook) translate(cfg *objects.Config) (*gslb.Config, error) {
	gc, skipped, err := TranslateGSLB(h.e.schema, cfg)
	for _, s := range skipped {
		h.e.log.Info("not in GSLB decisions", "object", s)
	}
	return gc, err
}

// Check implements Hook. An invalid gtm configuration (a value the GSLB
// cannot act on, a mode out of place, two wide IPs with one name, a zone
// that does not parse) is refused whole. An object left out because a
// reference dangles is refused when a change adds it, and kept with a
// warning when it comes from a loaded file, as for LTM objects.
func (h *gslbHook) Check(old, cfg *objects.Config, opts CommitOptions) error {
	gc, skipped, err := TranslateGSLB(h.e.schema, cfg)
	if err != nil {
		return err
	}
	had := map[string]bool{}
	if old != nil {
		_, prev, _ := TranslateGSLB(h.e.schema, old)
		for _, s := range prev {
			had[s] = true
		}
	}
	for _, s := range skipped {
		if had[s] {
			continue
		}
		if !opts.Lenient {
			return objects.Invalid("%s", s)
		}
		if opts.Warn != nil {
			opts.Warn(s + "; kept, and left out of GSLB decisions")
		}
	}
	if err := h.dry.Apply(dryCopy(gc)); err != nil {
		return objects.Invalid("%s", oneLine(err))
	}
	return nil
}

// dryCopy is gc without what would bind sockets or start probes.
func dryCopy(gc *gslb.Config) *gslb.Config {
	c := *gc
	c.Listeners = nil
	c.Servers = make(map[string]*gslb.Host, len(gc.Servers))
	for name, h := range gc.Servers {
		hc := *h
		hc.VirtualServers = nil
		for _, v := range h.VirtualServers {
			vc := *v
			vc.Monitor = gslb.Monitor{}
			hc.VirtualServers = append(hc.VirtualServers, &vc)
		}
		c.Servers[name] = &hc
	}
	return &c
}

// Apply implements Hook. At start (old is nil) a stored configuration the
// server cannot run (a listener address taken) is logged and the hook
// stays, so the next commit can fix it.
func (h *gslbHook) Apply(old, cfg *objects.Config) error {
	gc, err := h.translate(cfg)
	if err == nil {
		err = h.s.Apply(gc)
	}
	if err != nil {
		if old == nil {
			h.e.log.Error("the stored GSLB configuration could not be applied", "err", err)
			return nil
		}
		return objects.Invalid("%s", oneLine(err))
	}
	h.mu.Lock()
	h.cur = gc
	h.mu.Unlock()
	return nil
}

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
