package gslb

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// Prober preference and fallback words (gtm server and gtm datacenter
// prober-preference, prober-fallback).
const (
	ProberInherit         = "inherit"
	ProberInsideDC        = "inside-datacenter"
	ProberOutsideDC       = "outside-datacenter"
	ProberPoolChoice      = "pool"
	ProberAnyAvailable    = "any-available"
	ProberNone            = "none"
	ProberPoolRoundRobin  = "round-robin"
	ProberPoolGlobalAvail = "global-availability"
	localProber           = "local"
	reasonNoProber        = "No prober is available to probe the virtual server"
)

// ProberPool is a `gtm prober-pool`: the BIG-IP devices (gtm servers of
// product bigip) that probe the servers whose prober preference or
// fallback is pool, so that a site behind a firewall is probed from where
// it can be reached.
type ProberPool struct {
	Name string
	// Mode is global-availability (the default: the first member up
	// probes) or round-robin (the members up take turns).
	Mode string
	// Members are gtm server full paths, in their order.
	Members  []string
	Disabled bool
}

// MonitorProber runs one probe of a virtual server's monitor on another
// device (device is a gtm server's full path), as BIG-IP DNS has the
// big3d of a chosen BIG-IP probe. The daemon sends it over iQuery.
type MonitorProber func(ctx context.Context, device string, spec *monitor.Spec, dest netip.AddrPort) (monitor.Outcome, error)

// SetMonitorProber lets the servers' prober-preference, prober-fallback
// and prober-pool choose which device probes their virtual servers: this
// one, or a device reached with fn. nil probes everything here, as
// before any iQuery peer is known. The running probes are restarted.
func (s *Server) SetMonitorProber(fn MonitorProber) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if fn == nil {
		s.mprober.Store(nil)
	} else {
		s.mprober.Store(&fn)
	}
	if p := s.plan.Load(); p != nil && !s.closed {
		s.applyMonitors(p)
	}
}

// proberPolicy is a server's resolved prober selection.
type proberPolicy struct {
	pref, fb string
	pool     *proberPoolRT // nil unless pref or fb is pool
	dc       *dc
	sig      string // compared across plans: a changed policy restarts the probes
}

type proberPoolRT struct {
	cfg     *ProberPool
	members []*host
	rr      atomic.Uint64
}

// compileProbers resolves each server's prober selection (inherit takes
// its datacenter's) and checks the prober pools.
func compileProbers(cfg *Config, p *plan) error {
	pools := map[string]*proberPoolRT{}
	for _, name := range sortedKeys(cfg.ProberPools) {
		pc := cfg.ProberPools[name]
		switch pc.Mode {
		case "", ProberPoolRoundRobin, ProberPoolGlobalAvail:
		default:
			return fmt.Errorf("gtm prober-pool %s: load-balancing-mode %q is not round-robin or global-availability", name, pc.Mode)
		}
		rt := &proberPoolRT{cfg: pc}
		for _, m := range pc.Members {
			h := p.hosts[m]
			if h == nil {
				return fmt.Errorf("gtm prober-pool %s: server %q does not exist", name, m)
			}
			if !h.cfg.BigIP {
				return fmt.Errorf("gtm prober-pool %s: server %s is not a BIG-IP (product bigip): only BIG-IP systems probe", name, m)
			}
			rt.members = append(rt.members, h)
		}
		pools[name] = rt
	}
	if cfg.Self != "" {
		p.self = p.hosts[cfg.Self]
		if p.self == nil {
			return fmt.Errorf("gtm server %q (this device) does not exist", cfg.Self)
		}
	}
	for _, h := range p.hostList {
		if h.cfg.BigIP && (h == p.self || !h.cfg.NoServiceCheck) {
			p.probers = append(p.probers, h)
		}
	}
	check := func(what, v string, fallback bool) error {
		switch v {
		case "", ProberInherit, ProberInsideDC, ProberOutsideDC, ProberPoolChoice:
			return nil
		case ProberAnyAvailable, ProberNone:
			if fallback {
				return nil
			}
		}
		words := "inherit, inside-datacenter, outside-datacenter or pool"
		if fallback {
			words = "inherit, any-available, inside-datacenter, outside-datacenter, pool or none"
		}
		return fmt.Errorf("%s %q is not %s", what, v, words)
	}
	for _, d := range p.dcList {
		if err := check("gtm datacenter "+d.name+": prober-preference", d.cfg.ProberPreference, false); err != nil {
			return err
		}
		if err := check("gtm datacenter "+d.name+": prober-fallback", d.cfg.ProberFallback, true); err != nil {
			return err
		}
		if d.cfg.ProberPreference == ProberInherit || d.cfg.ProberFallback == ProberInherit {
			return fmt.Errorf("gtm datacenter %s: a datacenter has nothing to inherit its prober selection from", d.name)
		}
		if x := d.cfg.ProberPool; x != "" && pools[x] == nil {
			return fmt.Errorf("gtm datacenter %s: prober-pool %q does not exist", d.name, x)
		}
	}
	for _, h := range p.hostList {
		c := h.cfg
		if err := check("gtm server "+h.name+": prober-preference", c.ProberPreference, false); err != nil {
			return err
		}
		if err := check("gtm server "+h.name+": prober-fallback", c.ProberFallback, true); err != nil {
			return err
		}
		pol := &proberPolicy{pref: c.ProberPreference, fb: c.ProberFallback, dc: h.dc}
		if pol.pref == "" || pol.pref == ProberInherit {
			pol.pref = h.dc.cfg.ProberPreference
		}
		if pol.fb == "" || pol.fb == ProberInherit {
			pol.fb = h.dc.cfg.ProberFallback
		}
		if pol.pref == "" {
			pol.pref = ProberInsideDC
		}
		if pol.fb == "" {
			pol.fb = ProberAnyAvailable
		}
		poolName := c.ProberPool
		if poolName == "" {
			poolName = h.dc.cfg.ProberPool
		}
		if poolName != "" {
			if pol.pool = pools[poolName]; pol.pool == nil {
				return fmt.Errorf("gtm server %s: prober-pool %q does not exist", h.name, poolName)
			}
		}
		if (pol.pref == ProberPoolChoice || pol.fb == ProberPoolChoice) && pol.pool == nil {
			return fmt.Errorf("gtm server %s: prober selection pool needs a prober-pool (on the server or its datacenter)", h.name)
		}
		var sig strings.Builder
		fmt.Fprintf(&sig, "%s|%s|%s", pol.pref, pol.fb, cfg.Self)
		if pol.pool != nil {
			fmt.Fprintf(&sig, "|%s|%s|%v|%s", poolName, pol.pool.cfg.Mode, pol.pool.cfg.Disabled, strings.Join(pol.pool.cfg.Members, ","))
		}
		for _, x := range p.probers {
			fmt.Fprintf(&sig, "|%s@%s", x.name, x.dc.name)
		}
		pol.sig = sig.String()
		h.probers = pol
	}
	return nil
}

// proberUp says whether a device can probe now: this one always, a peer
// while its iQuery stream reports it up (SetServerStatus).
func (p *plan) proberUp(h *host) bool {
	return h == p.self || Status(h.rt.status.Load()) == StatusUp
}

// candidates are the devices of one selection word, in the order they are
// tried: this device first (its probes cost no round trip), then the
// others by name; a prober pool's members in their order.
func (p *plan) candidates(pol *proberPolicy, word string) []*host {
	var out []*host
	switch word {
	case ProberPoolChoice:
		if pol.pool == nil || pol.pool.cfg.Disabled {
			return nil
		}
		for _, h := range pol.pool.members {
			if !h.cfg.Disabled && p.proberUp(h) && (h == p.self || !h.cfg.NoServiceCheck) {
				out = append(out, h)
			}
		}
		return out
	case ProberNone:
		return nil
	}
	in := func(h *host) bool {
		switch word {
		case ProberInsideDC:
			return h.dc == pol.dc
		case ProberOutsideDC:
			return h.dc != pol.dc
		}
		return true // any-available
	}
	if p.self != nil && in(p.self) && !p.self.cfg.Disabled {
		out = append(out, p.self)
	}
	for _, h := range p.probers {
		if h != p.self && in(h) && !h.cfg.Disabled && p.proberUp(h) {
			out = append(out, h)
		}
	}
	return out
}

// pickProber chooses the device that runs the next probe of a virtual
// server on a server with policy pol: one of the preferred kind, else one
// of the fallback kind. ok is false when none is available (fallback
// none, or nothing of its kind up). A nil host is this device when the
// configuration names none (Config.Self), which counts as outside every
// datacenter.
func (p *plan) pickProber(pol *proberPolicy) (h *host, local, ok bool) {
	for _, word := range []string{pol.pref, pol.fb} {
		c := p.candidates(pol, word)
		if p.self == nil && (word == ProberOutsideDC || word == ProberAnyAvailable) {
			return nil, true, true
		}
		if len(c) == 0 {
			continue
		}
		h = c[0]
		if word == ProberPoolChoice && pol.pool.cfg.Mode == ProberPoolRoundRobin {
			h = c[int((pol.pool.rr.Add(1)-1)%uint64(len(c)))]
		}
		return h, h == p.self, true
	}
	return nil, false, false
}

// usesProbers says whether a virtual server's probes go through prober
// selection: only when another device can probe (a MonitorProber is set
// and the configuration has BIG-IP servers besides this one).
func (s *Server) usesProbers(p *plan, v *vs) bool {
	if s.mprober.Load() == nil || v.host.probers == nil {
		return false
	}
	for _, h := range p.probers {
		if h != p.self {
			return true
		}
	}
	return false
}

// runSelected probes a virtual server every interval from the device its
// server's prober selection picks at that moment: here, or on a peer
// through the MonitorProber. Up at a success; down at a failing answer
// under ignore-down-response disabled, or once nothing succeeded for the
// timeout; unknown while no prober is available (prober-fallback none).
func (s *Server) runSelected(ctx context.Context, m *probeRun, w wantedProbe) {
	spec := w.key.spec
	if spec == nil {
		spec = &monitor.Spec{Type: monitor.TCPHalfOpen, Name: "tcp", Interval: w.key.interval, Timeout: w.key.timeout}
	}
	interval, timeout := spec.Interval, spec.Timeout
	if interval <= 0 {
		interval = 5 * time.Second
	}
	if timeout <= 0 {
		timeout = 3*interval + time.Second
	}
	each := spec.ProbeTimeout
	if each <= 0 || each > timeout {
		each = min(timeout, max(interval, time.Second))
	}
	lastOK := time.Now()
	t := time.NewTicker(interval)
	defer t.Stop()
	last := "\x00"
	for {
		// The policy of the plan in service: a plan that keeps the policy
		// keeps this probe, and its hosts are the plan's own.
		p := s.plan.Load()
		pol := w.pol
		if x := p.hosts[w.host]; x != nil && x.probers != nil {
			pol = x.probers
		}
		h, local, ok := p.pickProber(pol)
		who := localProber
		if h != nil {
			who = h.name
		}
		if !ok {
			who = ""
		}
		if who != last {
			if who == "" {
				s.log.Info("gslb: no prober available", "name", w.name, "preference", pol.pref, "fallback", pol.fb)
			} else {
				s.log.Info("gslb: prober chosen", "name", w.name, "prober", who, "preference", pol.pref, "fallback", pol.fb)
			}
			last = who
		}
		m.prober.Store(&who)
		next := Status(m.status.Load())
		var why string
		if !ok {
			next, why = StatusUnknown, reasonNoProber
			lastOK = time.Now()
		} else {
			pctx, cancel := context.WithTimeout(ctx, each)
			var out monitor.Outcome
			var err error
			if local {
				out, err = monitor.Probe(pctx, spec, w.key.dest)
			} else if fn := s.mprober.Load(); fn != nil {
				out, err = (*fn)(pctx, h.name, spec, w.key.dest)
			} else {
				err = errors.New("no iQuery prober")
			}
			cancel()
			if ctx.Err() != nil {
				return
			}
			switch {
			case err == nil && out.Up:
				next, lastOK = StatusUp, time.Now()
			case spec.DownOnResponse && err != nil && monitor.IsDownResponse(err):
				next = StatusDown
			case time.Since(lastOK) >= timeout:
				next = StatusDown
			}
			if err != nil {
				why = spec.Name + " from " + who + ": " + err.Error()
			} else if !out.Up {
				why = spec.Name + " from " + who + ": down"
			}
		}
		if next == StatusDown || next == StatusUnknown && why != "" {
			m.why.Store(&why)
		} else {
			m.why.Store(nil)
		}
		prev := Status(m.status.Swap(int32(next)))
		wentDown(prev, next, m.downs)
		if prev != next {
			s.availChanged()
			s.log.Info("gslb: "+w.what+" status changed", "name", w.name, "prober", who, "from", prev.String(), "to", next.String(), "err", why)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// ProbeFrom runs one probe of spec at dest from the local address src
// (invalid: any): what a device runs when a GSLB picks it as prober.
func ProbeFrom(ctx context.Context, src netip.Addr, spec *monitor.Spec, dest netip.AddrPort) (monitor.Outcome, error) {
	if src.IsValid() {
		ctx = monitor.WithSource(ctx, src)
	}
	return monitor.Probe(ctx, spec, dest)
}
