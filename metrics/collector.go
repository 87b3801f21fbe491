package metrics

import (
	"github.com/prometheus/client_golang/prometheus"
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("openltm_"+name, help, labels, nil)
}

// trafficDescs are the counters of one side of an object.
type trafficDescs struct {
	bitsIn, bitsOut, pktsIn, pktsOut, cur, max, tot, req *prometheus.Desc
}

func newTraffic(prefix, side string, labels ...string) trafficDescs {
	return trafficDescs{
		bitsIn:  desc(prefix+"_"+side+"_bits_in_total", "Bits received on the "+side+" side.", labels...),
		bitsOut: desc(prefix+"_"+side+"_bits_out_total", "Bits sent on the "+side+" side.", labels...),
		pktsIn:  desc(prefix+"_"+side+"_packets_in_total", "Packets received on the "+side+" side.", labels...),
		pktsOut: desc(prefix+"_"+side+"_packets_out_total", "Packets sent on the "+side+" side.", labels...),
		cur:     desc(prefix+"_"+side+"_connections", "Current connections on the "+side+" side.", labels...),
		max:     desc(prefix+"_"+side+"_connections_max", "Most concurrent connections on the "+side+" side.", labels...),
		tot:     desc(prefix+"_"+side+"_connections_total", "Connections on the "+side+" side.", labels...),
		req:     desc(prefix+"_requests_total", "Requests.", labels...),
	}
}

func (t trafficDescs) describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{t.bitsIn, t.bitsOut, t.pktsIn, t.pktsOut, t.cur, t.max, t.tot, t.req} {
		ch <- d
	}
}

func (t trafficDescs) collect(ch chan<- prometheus.Metric, tr Traffic, lv ...string) {
	c := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	g := func(d *prometheus.Desc, v uint64) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), lv...)
	}
	c(t.bitsIn, tr.BitsIn)
	c(t.bitsOut, tr.BitsOut)
	c(t.pktsIn, tr.PktsIn)
	c(t.pktsOut, tr.PktsOut)
	g(t.cur, tr.CurConns)
	g(t.max, tr.MaxConns)
	c(t.tot, tr.TotConns)
	c(t.req, tr.TotRequests)
}

// statusDescs export availability as a state set and enabled as 0/1.
type statusDescs struct{ avail, enabled *prometheus.Desc }

func newStatus(prefix, what string, labels ...string) statusDescs {
	return statusDescs{
		avail:   desc(prefix+"_status", "Availability of the "+what+": 1 for the current state.", append(labels, "availability")...),
		enabled: desc(prefix+"_enabled", "1 when the "+what+" is enabled.", labels...),
	}
}

func (s statusDescs) describe(ch chan<- *prometheus.Desc) { ch <- s.avail; ch <- s.enabled }

func (s statusDescs) collect(ch chan<- prometheus.Metric, st Status, lv ...string) {
	for _, a := range Availabilities {
		ch <- prometheus.MustNewConstMetric(s.avail, prometheus.GaugeValue, b2f(a == st.Availability), append(lv, a)...)
	}
	ch <- prometheus.MustNewConstMetric(s.enabled, prometheus.GaugeValue, b2f(st.State == "enabled"), lv...)
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// collector turns one snapshot per scrape into metrics.
type collector struct {
	snapshot func() Snapshot
}

var (
	connections = desc("connections", "Current client connections of all virtual servers.")
	busyPollOff = desc("busy_poll_off", "1 while the judge of busy-polling (ltmd --busy-poll auto) has the event loops' polling off: loops serving a few exchanges each hold their threads instead.")
	loopHolds   = desc("event_loop_holds_total", "Times an event loop began to hold its thread while serving a few exchanges (ltmd --busy-poll hold; under auto, with polling judged off or while several loops serve one exchange each).")
	loopBatched = desc("event_loop_batched_sends_total", "Writes event loops sent together with the other writes of their batch in one system call (an io_uring; ltmd --send-batch auto).")
	virtualInfo = desc("virtual_info", "A virtual server and its destination (always 1).", "virtual", "destination")
	virtualSt   = newStatus("virtual", "virtual server", "virtual")
	virtualTr   = newTraffic("virtual", "client", "virtual")
	poolSt      = newStatus("pool", "pool", "pool")
	poolTr      = newTraffic("pool", "server", "pool")
	poolAvail   = desc("pool_members_available", "Pool members available.", "pool")
	poolTotal   = desc("pool_members", "Pool members.", "pool")
	memberSt    = newStatus("pool_member", "pool member", "pool", "member")
	memberTr    = newTraffic("pool_member", "server", "pool", "member")
	nodeSt      = newStatus("node", "node", "node")
	nodeTr      = newTraffic("node", "server", "node")
	persistRecs = desc("persistence_records", "Persistence records held.", "profile", "mode")
	wideipSt    = newStatus("gslb_wideip", "wide IP", "wideip", "type")
	wideipReq   = desc("gslb_wideip_requests_total", "DNS requests for the wide IP.", "wideip", "type")
	wideipRes   = desc("gslb_wideip_resolutions_total", "Resolutions by the step that chose the answer (preferred, alternate, fallback), returned to DNS, and dropped.", "wideip", "type", "method")
	wideipPers  = desc("gslb_wideip_persisted_total", "Answers taken from a persistence record.", "wideip", "type")
	wideipLast  = desc("gslb_wideip_last_resort_total", "Answers from the last resort pool.", "wideip", "type")
	gpoolSt     = newStatus("gslb_pool", "gtm pool", "pool", "type")
	gpoolRes    = desc("gslb_pool_resolutions_total", "Pool resolutions by step (preferred, alternate, fallback), returned to DNS, and dropped.", "pool", "type", "method")
	gmemberSt   = newStatus("gslb_pool_member", "gtm pool member", "pool", "type", "member")
	gserverSt   = newStatus("gslb_server", "gtm server", "server", "datacenter")
	gserverPick = desc("gslb_server_picks_total", "Answers that chose one of the server's virtual servers.", "server")
	gvsInfo     = desc("gslb_virtual_server_info", "A gtm virtual server and its destination (always 1).", "server", "virtual_server", "destination")
	gvsSt       = newStatus("gslb_virtual_server", "gtm virtual server", "server", "virtual_server")
	gvsPick     = desc("gslb_virtual_server_picks_total", "Answers that chose the virtual server.", "server", "virtual_server")
	gdcSt       = newStatus("gslb_datacenter", "gtm datacenter", "datacenter")
	glinkSt     = newStatus("gslb_link", "gtm link", "link")
	dnsQueries  = desc("gslb_dns_queries_total", "DNS queries the GSLB received.")
	dnsOutcome  = desc("gslb_dns_responses_total", "DNS queries by outcome: wideip, static, nxdomain, refused, dropped, malformed.", "outcome")
	syncSt      = desc("sync_status", "Device group sync status (show cm sync-status): 1 for the current one.", "group", "status")
	syncGen     = desc("sync_generation", "Configuration generation: applied by this device, or head of the group.", "group", "which")
	failover    = desc("failover_active", "1 when this device is active for the traffic group.", "traffic_group")
	peerAge     = desc("network_failover_heartbeat_age_seconds", "Time since the peer's last network failover heartbeat (peers heard within the failover time).", "peer")
	peerEtcd    = desc("network_failover_peer_etcd", "1 when the peer's last heartbeat says it holds its etcd lease.", "peer")
)

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{connections, busyPollOff, loopHolds, virtualInfo, poolAvail, poolTotal, persistRecs, wideipReq, wideipRes, wideipPers, wideipLast,
		gpoolRes, gserverPick, gvsInfo, gvsPick, dnsQueries, dnsOutcome, syncSt, syncGen, failover, peerAge, peerEtcd} {
		ch <- d
	}
	for _, s := range []statusDescs{virtualSt, poolSt, memberSt, nodeSt, wideipSt, gpoolSt, gmemberSt, gserverSt, gvsSt, gdcSt, glinkSt} {
		s.describe(ch)
	}
	for _, t := range []trafficDescs{virtualTr, poolTr, memberTr, nodeTr} {
		t.describe(ch)
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.snapshot()
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter := func(d *prometheus.Desc, v uint64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	gauge(connections, float64(s.Connections))
	gauge(busyPollOff, b2f(s.BusyPollOff))
	counter(loopHolds, s.LoopHolds)
	counter(loopBatched, s.BatchedSends)
	for _, v := range s.Virtuals {
		gauge(virtualInfo, 1, v.Name, v.Destination)
		virtualSt.collect(ch, v.Status, v.Name)
		virtualTr.collect(ch, v.Traffic, v.Name)
	}
	for _, p := range s.Pools {
		poolSt.collect(ch, p.Status, p.Name)
		poolTr.collect(ch, p.Traffic, p.Name)
		gauge(poolAvail, float64(p.AvailableMembers), p.Name)
		gauge(poolTotal, float64(p.TotalMembers), p.Name)
	}
	for _, m := range s.Members {
		memberSt.collect(ch, m.Status, m.Pool, m.Name)
		memberTr.collect(ch, m.Traffic, m.Pool, m.Name)
	}
	for _, n := range s.Nodes {
		nodeSt.collect(ch, n.Status, n.Name)
		nodeTr.collect(ch, n.Traffic, n.Name)
	}
	for _, p := range s.Persistence {
		gauge(persistRecs, float64(p.Records), p.Profile, p.Mode)
	}
	for _, w := range s.WideIPs {
		wideipSt.collect(ch, w.Status, w.Name, w.Type)
		counter(wideipReq, w.Requests, w.Name, w.Type)
		counter(wideipRes, w.Preferred, w.Name, w.Type, "preferred")
		counter(wideipRes, w.Alternate, w.Name, w.Type, "alternate")
		counter(wideipRes, w.Fallback, w.Name, w.Type, "fallback")
		counter(wideipRes, w.ReturnedToDNS, w.Name, w.Type, "return-to-dns")
		counter(wideipRes, w.Dropped, w.Name, w.Type, "dropped")
		counter(wideipPers, w.Persisted, w.Name, w.Type)
		counter(wideipLast, w.LastResort, w.Name, w.Type)
	}
	for _, p := range s.GSLBPools {
		gpoolSt.collect(ch, p.Status, p.Name, p.Type)
		counter(gpoolRes, p.Preferred, p.Name, p.Type, "preferred")
		counter(gpoolRes, p.Alternate, p.Name, p.Type, "alternate")
		counter(gpoolRes, p.Fallback, p.Name, p.Type, "fallback")
		counter(gpoolRes, p.ReturnedToDNS, p.Name, p.Type, "return-to-dns")
		counter(gpoolRes, p.Dropped, p.Name, p.Type, "dropped")
		for _, m := range p.Members {
			gmemberSt.collect(ch, m.Status, p.Name, p.Type, m.Name)
		}
	}
	for _, sv := range s.GSLBServers {
		gserverSt.collect(ch, sv.Status, sv.Name, sv.Datacenter)
		counter(gserverPick, sv.Picks, sv.Name)
		for _, v := range sv.VirtualServers {
			gauge(gvsInfo, 1, sv.Name, v.Name, v.Destination)
			gvsSt.collect(ch, v.Status, sv.Name, v.Name)
			counter(gvsPick, v.Picks, sv.Name, v.Name)
		}
	}
	for _, d := range s.Datacenters {
		gdcSt.collect(ch, d.Status, d.Name)
	}
	for _, l := range s.Links {
		glinkSt.collect(ch, l.Status, l.Name)
	}
	if d := s.DNS; d != nil {
		counter(dnsQueries, d.Queries)
		for _, o := range []struct {
			name string
			n    uint64
		}{{"wideip", d.WideIP}, {"static", d.Static}, {"nxdomain", d.NXDomain}, {"refused", d.Refused}, {"dropped", d.Dropped}, {"malformed", d.Malformed}} {
			counter(dnsOutcome, o.n, o.name)
		}
	}
	if y := s.Sync; y != nil {
		for _, st := range SyncStatuses {
			gauge(syncSt, b2f(st == y.Status), y.Group, st)
		}
		gauge(syncGen, float64(y.Applied), y.Group, "applied")
		gauge(syncGen, float64(y.Head), y.Group, "head")
	}
	for _, tg := range s.TrafficGroups {
		gauge(failover, b2f(tg.Active), tg.Name)
	}
	for _, p := range s.Peers {
		gauge(peerAge, p.Age.Seconds(), p.Name)
		gauge(peerEtcd, b2f(p.Etcd), p.Name)
	}
}
