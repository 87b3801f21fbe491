package gslb

import (
	"context"
	"net"
	"net/netip"
	"reflect"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// probeRun is one monitor running against one destination: a virtual
// server's own monitor, or a gtm pool's (or pool member's) monitor for
// one of the pool's members. It writes its verdict into status, which the
// load balancer reads: a plain TCP connect probe of its own, or one of
// the LTM's probes (dataplane/monitor) when the monitor has a Spec, so an
// http monitor's send and recv strings are judged as they are for pool
// members.
type probeRun struct {
	key    monitorKey
	status *atomic.Int32
	why    *atomic.Pointer[string]
	prober *atomic.Pointer[string] // set when prober selection runs it
	downs  *atomic.Uint64
	cancel context.CancelFunc
	done   chan struct{}
	inst   *monitor.Instance
}

type monitorKey struct {
	dest     netip.AddrPort
	typ      MonitorType
	interval time.Duration
	timeout  time.Duration
	spec     *monitor.Spec
	probers  string // the prober policy's signature; "" probes here
}

// same reports whether two keys probe the same way: a fresh translation
// of an unchanged monitor compiles an equal Spec, and its probes go on.
func (k monitorKey) same(o monitorKey) bool {
	if k.dest != o.dest || k.typ != o.typ || k.interval != o.interval || k.timeout != o.timeout || k.probers != o.probers {
		return false
	}
	return k.spec == o.spec || (k.spec != nil && o.spec != nil && reflect.DeepEqual(*k.spec, *o.spec))
}

func (m Monitor) active() bool { return m.Spec != nil || m.Type == MonitorTCP }

func monitorKeyOf(m Monitor, dest netip.AddrPort) monitorKey {
	if a := m.Destination.Addr(); a.IsValid() && !a.IsUnspecified() {
		dest = netip.AddrPortFrom(a, dest.Port())
	}
	if p := m.Destination.Port(); p != 0 {
		dest = netip.AddrPortFrom(dest.Addr(), p)
	}
	k := monitorKey{dest: dest, typ: m.Type, interval: m.Interval, timeout: m.Timeout, spec: m.Spec}
	if k.spec != nil {
		return k
	}
	if k.interval <= 0 {
		k.interval = 30 * time.Second
	}
	if k.timeout <= 0 {
		k.timeout = 3*k.interval + time.Second
	}
	return k
}

// wantedProbe is a probe the plan needs: what to run and where its
// verdict goes.
type wantedProbe struct {
	key    monitorKey
	status *atomic.Int32
	why    *atomic.Pointer[string] // the monitor's name and error while it finds the target down
	downs  *atomic.Uint64          // counts the transitions to down (manual-resume)
	what   string                  // for the log: "virtual server" or "pool member"
	name   string
	pol    *proberPolicy // non-nil: prober selection picks who probes
	host   string        // the server whose policy it follows, by name
	prober *atomic.Pointer[string]
}

// applyMonitors starts the probes the plan needs, keeps the unchanged
// ones and stops the rest. The caller holds s.mu.
func (s *Server) applyMonitors(p *plan) {
	want := map[string]wantedProbe{}
	// Disabled objects are not probed unless monitor-disabled-objects
	// says so.
	off := func(v *vs) bool {
		return !p.settings.MonitorDisabled && (v.cfg.Disabled || v.host.cfg.Disabled || v.host.dc.cfg.Disabled)
	}
	for name, v := range p.vss {
		if v.cfg.Monitor.active() && !off(v) {
			w := wantedProbe{key: monitorKeyOf(v.cfg.Monitor, v.cfg.Destination), status: &v.rt.probe, why: &v.rt.why, downs: &v.rt.downs, what: "virtual server", name: name, prober: &v.rt.prober}
			if s.usesProbers(p, v) {
				w.pol, w.key.probers, w.host = v.host.probers, v.host.probers.sig, v.host.name
			}
			want["vs "+name] = w
		}
	}
	// A link's monitor probes its router addresses, from here [M].
	for _, l := range p.linkList {
		if (l.cfg.Disabled || l.dc.cfg.Disabled) && !p.settings.MonitorDisabled {
			continue
		}
		for _, r := range l.routers {
			want["link "+l.name+" "+r.addr.String()] = wantedProbe{key: monitorKeyOf(l.cfg.Monitor, netip.AddrPortFrom(r.addr, 0)), status: &r.rt.probe, why: &r.rt.why,
				downs: &r.rt.downs, what: "link router address", name: l.name + " " + r.addr.String(), prober: &r.rt.prober}
		}
	}
	for _, pl := range p.poolList {
		for _, m := range pl.members {
			if m.cfg.Monitor.active() && !off(m.vs) && (!m.cfg.Disabled || p.settings.MonitorDisabled) {
				w := wantedProbe{key: monitorKeyOf(m.cfg.Monitor, m.vs.cfg.Destination), status: &m.rt.probe, why: &m.rt.why, downs: &m.rt.downs, what: "pool member", name: pl.full + " " + m.name, prober: new(atomic.Pointer[string])}
				if s.usesProbers(p, m.vs) {
					w.pol, w.key.probers, w.host = m.vs.host.probers, m.vs.host.probers.sig, m.vs.host.name
				}
				want["member "+pl.name+" "+m.name] = w
			}
		}
	}
	for id, w := range want {
		if m := s.monitors[id]; m != nil {
			if m.key.same(w.key) && m.status == w.status {
				continue
			}
			m.stop()
			m.status.Store(int32(StatusUnknown))
			s.availChanged()
			m.why.Store(nil)
			m.prober.Store(nil)
		}
		s.monitors[id] = s.startMonitor(w)
	}
	for id, m := range s.monitors {
		if _, ok := want[id]; !ok {
			m.stop()
			m.status.Store(int32(StatusUnknown))
			s.availChanged()
			m.why.Store(nil)
			m.prober.Store(nil)
			delete(s.monitors, id)
		}
	}
}

func (s *Server) startMonitor(w wantedProbe) *probeRun {
	ctx, cancel := context.WithCancel(s.ctx)
	m := &probeRun{key: w.key, status: w.status, why: w.why, prober: w.prober, downs: w.downs, cancel: cancel, done: make(chan struct{})}
	if w.pol != nil {
		if !s.goBackground(func() { defer close(m.done); s.runSelected(ctx, m, w) }) {
			close(m.done)
		}
		return m
	}
	if w.key.spec != nil {
		close(m.done)
		m.inst = monitor.Start(w.key.spec, w.key.dest, func(st monitor.State) {
			next := StatusUnknown
			switch st.Status {
			case monitor.Up:
				next = StatusUp
			case monitor.Down:
				next = StatusDown
			}
			if next == StatusDown {
				why := w.key.spec.Name + ": " + st.LastError
				m.why.Store(&why)
			} else {
				m.why.Store(nil)
			}
			prev := Status(m.status.Swap(int32(next)))
			wentDown(prev, next, m.downs)
			if prev != next {
				s.availChanged()
				s.log.Info("gslb: "+w.what+" status changed", "name", w.name, "monitor", w.key.spec.Name, "from", prev.String(), "to", next.String(), "err", st.LastError)
			}
		})
		return m
	}
	if !s.goBackground(func() { defer close(m.done); s.runMonitor(ctx, m, w) }) {
		close(m.done)
	}
	return m
}

func (m *probeRun) stop() {
	m.cancel()
	if m.inst != nil {
		m.inst.Stop()
	}
	<-m.done
}

// runMonitor is the TCP connect probe: up on a successful connect, down
// once none has succeeded for the timeout, as a BIG-IP monitor does.
func (s *Server) runMonitor(ctx context.Context, m *probeRun, w wantedProbe) {
	lastOK := time.Now()
	t := time.NewTicker(m.key.interval)
	defer t.Stop()
	attempt := min(m.key.interval, m.key.timeout)
	for {
		d := net.Dialer{Timeout: attempt}
		c, err := d.DialContext(ctx, "tcp", m.key.dest.String())
		if ctx.Err() != nil {
			return
		}
		prev := Status(m.status.Load())
		next := prev
		if err == nil {
			c.Close()
			lastOK = time.Now()
			next = StatusUp
		} else if time.Since(lastOK) >= m.key.timeout {
			next = StatusDown
		}
		if next != prev {
			m.status.Store(int32(next))
			wentDown(prev, next, m.downs)
			s.availChanged()
			s.log.Info("gslb: "+w.what+" status changed", "name", w.name, "from", prev.String(), "to", next.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
