package gslb

import (
	"context"
	"net"
	"time"
)

// vsMonitor probes one virtual server with TCP connects on an interval.
// It marks the virtual server up on a successful connect and down once no
// connect has succeeded for the timeout, as a BIG-IP monitor does.
type vsMonitor struct {
	key    monitorKey
	rt     *vsRT
	cancel context.CancelFunc
	done   chan struct{}
}

type monitorKey struct {
	dest     string
	typ      MonitorType
	interval time.Duration
	timeout  time.Duration
}

func monitorKeyOf(v *VirtualServer) monitorKey {
	k := monitorKey{dest: v.Destination.String(), typ: v.Monitor.Type, interval: v.Monitor.Interval, timeout: v.Monitor.Timeout}
	if k.interval <= 0 {
		k.interval = 30 * time.Second
	}
	if k.timeout <= 0 {
		k.timeout = 3*k.interval + time.Second
	}
	return k
}

// applyMonitors starts the monitors the plan needs, keeps the unchanged
// ones and stops the rest. The caller holds s.mu.
func (s *Server) applyMonitors(p *plan) {
	want := map[string]bool{}
	for name, v := range p.vss {
		if v.cfg.Monitor.Type != MonitorTCP {
			continue
		}
		want[name] = true
		k := monitorKeyOf(v.cfg)
		if m := s.monitors[name]; m != nil {
			if m.key == k && m.rt == v.rt {
				continue
			}
			m.stop()
			m.rt.probe.Store(int32(StatusUnknown))
		}
		s.monitors[name] = s.startMonitor(k, v.rt, name)
	}
	for name, m := range s.monitors {
		if !want[name] {
			m.stop()
			m.rt.probe.Store(int32(StatusUnknown))
			delete(s.monitors, name)
		}
	}
}

func (s *Server) startMonitor(k monitorKey, rt *vsRT, name string) *vsMonitor {
	ctx, cancel := context.WithCancel(s.ctx)
	m := &vsMonitor{key: k, rt: rt, cancel: cancel, done: make(chan struct{})}
	if !s.goBackground(func() { defer close(m.done); s.runMonitor(ctx, m, name) }) {
		close(m.done)
	}
	return m
}

func (m *vsMonitor) stop() {
	m.cancel()
	<-m.done
}

func (s *Server) runMonitor(ctx context.Context, m *vsMonitor, name string) {
	lastOK := time.Now()
	t := time.NewTicker(m.key.interval)
	defer t.Stop()
	attempt := min(m.key.interval, m.key.timeout)
	for {
		d := net.Dialer{Timeout: attempt}
		c, err := d.DialContext(ctx, "tcp", m.key.dest)
		if ctx.Err() != nil {
			return
		}
		prev := Status(m.rt.probe.Load())
		next := prev
		if err == nil {
			c.Close()
			lastOK = time.Now()
			next = StatusUp
		} else if time.Since(lastOK) >= m.key.timeout {
			next = StatusDown
		}
		if next != prev {
			m.rt.probe.Store(int32(next))
			s.log.Info("gslb: virtual server status changed", "vs", name, "from", prev.String(), "to", next.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
