package daemon

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/evloop"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/metrics"
)

// ServeMetrics serves the Prometheus metrics of the engine and its
// dataplane at http://addr/metrics until the returned stop. Each scrape
// reads the dataplane's counters and the device group's state once.
func (e *Engine) ServeMetrics(addr string, p *dataplane.Plane, g *gslb.Server) (stop func(), err error) {
	ex := metrics.New(func() metrics.Snapshot { s := e.snapshot(p); gslbSnapshot(&s, g); return s })
	if h := e.cluster.Load(); h != nil {
		h.mu.Lock()
		h.commits = func(d time.Duration) { ex.ObserveCommit(d, true) }
		h.mu.Unlock()
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", ex.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.log.Error("the metrics endpoint stopped", "err", err)
		}
	}()
	e.log.Info("serving metrics", "address", ln.Addr().String())
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}, nil
}

func traffic(t dataplane.Traffic, requests uint64) metrics.Traffic {
	return metrics.Traffic{BitsIn: t.BitsIn, BitsOut: t.BitsOut, PktsIn: t.PktsIn, PktsOut: t.PktsOut,
		CurConns: t.CurConns, MaxConns: t.MaxConns, TotConns: t.TotConns, TotRequests: requests}
}

func status(s dataplane.Status) metrics.Status {
	return metrics.Status{Availability: string(s.Availability), State: s.State}
}

// snapshot is the state show reports, for one scrape.
func (e *Engine) snapshot(p *dataplane.Plane) metrics.Snapshot {
	s := metrics.Snapshot{Device: e.selfName(), BusyPollOff: evloop.PollingOff(), LoopHolds: evloop.HoldsStarted(), BatchedSends: evloop.BatchedSends()}
	if p != nil {
		s.Connections = uint64(p.ConnectionCount())
		for _, v := range p.Virtuals() {
			s.Virtuals = append(s.Virtuals, metrics.Virtual{Name: v.Name, Destination: v.Destination,
				Status: status(v.Status), Traffic: traffic(v.ClientSide, v.TotRequests)})
		}
		for _, pl := range p.Pools() {
			s.Pools = append(s.Pools, metrics.Pool{Name: pl.Name, Status: status(pl.Status),
				AvailableMembers: pl.AvailableMembers, TotalMembers: pl.TotalMembers,
				Traffic: traffic(pl.ServerSide, pl.TotRequests)})
			for _, m := range pl.Members {
				s.Members = append(s.Members, metrics.Member{Pool: pl.Name, Name: m.Name,
					Status: status(m.Status), Traffic: traffic(m.ServerSide, m.TotRequests)})
			}
		}
		// Persistence records by the profile of the virtual server they
		// were made on, and mode.
		profileOf := map[string]string{}
		cfg := e.Config()
		for _, o := range cfg.Of(ltmVirtual) {
			if n := defaultPersistName(o); n != "" {
				if prof := cfg.Lookup(schema, specPersistence, n); prof != nil {
					profileOf[o.Name] = prof.Name
				}
			}
		}
		type pk struct{ profile, mode string }
		counts := map[pk]uint64{}
		p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
			counts[pk{profileOf[r.Virtual], r.Mode.String()}]++
			return true
		})
		for k, n := range counts {
			s.Persistence = append(s.Persistence, metrics.Persistence{Profile: k.profile, Mode: k.mode, Records: n})
		}
		for _, n := range p.Nodes() {
			s.Nodes = append(s.Nodes, metrics.Node{Name: n.Name, Status: status(n.Status),
				Traffic: traffic(n.ServerSide, n.TotRequests)})
		}
	}
	if h := e.cluster.Load(); h != nil {
		h.mu.Lock()
		m, applied := h.member, h.applied
		h.mu.Unlock()
		switch {
		case m != nil:
			st := m.SyncStatus()
			s.Sync = &metrics.Sync{Group: m.Group().Name, Status: st.Status, Applied: st.Applied, Head: st.Head}
			if e.float.Load() != nil {
				for _, tg := range m.FailoverStatus() {
					s.TrafficGroups = append(s.TrafficGroups, metrics.TrafficGroup{Name: tg.Name, Active: tg.Active})
				}
			}
			for _, p := range m.HeardPeers() {
				s.Peers = append(s.Peers, metrics.Peer{Name: p.Device, Age: p.Age, Etcd: p.Etcd})
			}
		case applied.Group != "":
			s.Sync = &metrics.Sync{Group: applied.Group, Status: "Disconnected", Applied: applied.Generation}
		}
	}
	return s
}

func gslbStatus(s gslb.ObjectStatus) metrics.Status {
	return metrics.Status{Availability: string(s.Availability), State: s.State}
}

// gslbSnapshot adds what show gtm reports: wide IPs and pools with their
// resolutions by load balancing step, the availability of pools, members,
// servers, virtual servers, datacenters and links, and the DNS server's
// counters. Nothing is added for a device with no gtm objects.
func gslbSnapshot(s *metrics.Snapshot, g *gslb.Server) {
	if g == nil {
		return
	}
	for _, w := range g.WideIPs() {
		s.WideIPs = append(s.WideIPs, metrics.WideIP{Name: w.Name, Type: string(w.Type), Status: gslbStatus(w.Status),
			Requests: w.Requests, Preferred: w.Preferred, Alternate: w.Alternate, Fallback: w.Fallback,
			ReturnedToDNS: w.ReturnedToDNS, Dropped: w.Dropped, Persisted: w.Persisted, LastResort: w.LastResort})
	}
	for _, p := range g.Pools() {
		mp := metrics.GSLBPool{Name: p.Name, Type: string(p.Type), Status: gslbStatus(p.Status),
			Preferred: p.Preferred, Alternate: p.AltCount, Fallback: p.FallCount, ReturnedToDNS: p.ReturnToDNS, Dropped: p.Dropped}
		for _, m := range p.Members {
			mp.Members = append(mp.Members, metrics.GSLBPoolMember{Name: m.Member, Status: gslbStatus(m.Status)})
		}
		s.GSLBPools = append(s.GSLBPools, mp)
	}
	for _, sv := range g.Servers() {
		ms := metrics.GSLBServer{Name: sv.Name, Datacenter: sv.Datacenter, Status: gslbStatus(sv.Status), Picks: sv.Picks}
		for _, v := range sv.VirtualServers {
			ms.VirtualServers = append(ms.VirtualServers, metrics.GSLBVirtualServer{Name: v.Name, Destination: v.Destination,
				Status: gslbStatus(v.Status), Picks: v.Picks})
		}
		s.GSLBServers = append(s.GSLBServers, ms)
	}
	for _, d := range g.Datacenters() {
		s.Datacenters = append(s.Datacenters, metrics.GSLBStatus{Name: d.Name, Status: gslbStatus(d.Status)})
	}
	for _, l := range g.Links() {
		s.Links = append(s.Links, metrics.GSLBStatus{Name: l.Name, Status: gslbStatus(l.Status)})
	}
	if len(s.WideIPs) > 0 || len(s.GSLBServers) > 0 {
		c := g.Counters()
		s.DNS = &metrics.GSLBDNS{Queries: c.Queries, WideIP: c.WideIP, Static: c.Static, NXDomain: c.NXDomain,
			Refused: c.Refused, Dropped: c.Dropped, Malformed: c.Malformed}
	}
}
