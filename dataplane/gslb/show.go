package gslb

import "sync/atomic"

// Snapshots for the `show gtm ...` commands. Each is a copy: the caller
// may keep and render it while the server goes on.

// Availability is BIG-IP's availability word for an object.
type Availability string

// The availabilities a show prints.
const (
	Available   Availability = "available"
	Offline     Availability = "offline"
	Unknown     Availability = "unknown"
	Unavailable Availability = "unavailable"
)

// ObjectStatus is the Status block of a show: availability, the enabled
// state and the reason.
type ObjectStatus struct {
	Availability Availability
	State        string // "enabled" or "disabled"
	Reason       string
}

func status(ok bool, reason string, disabled bool, unknown bool) ObjectStatus {
	st := ObjectStatus{Availability: Available, State: "enabled", Reason: reason}
	if disabled {
		st.State = "disabled"
	}
	switch {
	case !ok && (reason == reasonVSDown || reason == reasonVSMonitorDown || reason == reasonMemberMonitor || reason == reasonManualResume || reason == reasonLinkDown || reason == reasonLinkMonitor || reason == reasonHostDown):
		st.Availability = Offline
	case !ok:
		st.Availability = Unavailable
	case unknown:
		st.Availability = Unknown
	}
	return st
}

// WideIPStats is `show gtm wideip a <name>`.
type WideIPStats struct {
	Name    string // full path
	Type    RRType
	Status  ObjectStatus
	Aliases []string
	// Requests counts every question for the name; RequestsA (those of
	// the wide IP's own type, A for an A wide IP) and Other split it.
	Requests      uint64
	RequestsA     uint64
	RequestsOther uint64
	// Resolved counts answers with addresses; Persisted those that came
	// from a persistence record.
	Resolved  uint64
	Persisted uint64
	// Preferred, Alternate and Fallback count answers by method level.
	Preferred     uint64
	Alternate     uint64
	Fallback      uint64
	ReturnedToDNS uint64
	Dropped       uint64
	// LastResort counts answers from the last resort pool.
	LastResort uint64
}

// PoolStats is `show gtm pool a <name>`, with its members.
type PoolStats struct {
	Name        string // full path
	Type        RRType
	Status      ObjectStatus
	Mode        Mode
	Alternate   Mode
	Fallback    Mode
	Preferred   uint64
	AltCount    uint64
	FallCount   uint64
	ReturnToDNS uint64
	Dropped     uint64
	Members     []PoolMemberStats
}

// PoolMemberStats is one member block of a pool show.
type PoolMemberStats struct {
	Member      string // <server>:<vs>, or the domain name of a name pool
	Destination string
	Order       int
	Ratio       int
	Status      ObjectStatus
	Preferred   uint64
	Alternate   uint64
	Fallback    uint64
}

// ServerStats is `show gtm server <name>` with its virtual servers.
type ServerStats struct {
	Name       string
	Datacenter string
	Status     ObjectStatus
	Picks      uint64
	// IQuery is how the daemon's iQuery channel reaches the server
	// (SetServerIQuery), "" when it does not follow it.
	IQuery string
	// Host is what the server last reported of its load (a bigip server
	// over iQuery), nil when it reports nothing.
	Host           *HostMetrics
	VirtualServers []VirtualServerStats
}

// VirtualServerStats is one virtual server of a server show.
type VirtualServerStats struct {
	Name        string // <server>:<vs>
	Destination string
	Link        string
	Status      ObjectStatus
	// Monitor is the probe's view; Metrics the last report (nil: none).
	Monitor Status
	Metrics *VSMetrics
	Picks   uint64
	// Prober is the device that ran its last probe under prober
	// selection (a gtm server, or "local"); "none" when none was
	// available; "" when this device probes it as always.
	Prober string
}

// LinkStats is `show gtm link <name>`.
type LinkStats struct {
	Name       string
	Datacenter string
	Status     ObjectStatus
	Metrics    *LinkMetrics
	// Limits in bits per second (0: none).
	LimitInboundBps  int64
	LimitOutboundBps int64
	LimitTotalBps    int64
	Picks            uint64
	// Routers are its router addresses as its monitor found them (none
	// without a monitor).
	Routers []LinkRouterStats
}

// LinkRouterStats is one router address of a monitored link.
type LinkRouterStats struct {
	Address string
	Monitor Status
	// Why is the monitor's last failure while it finds the router down.
	Why string
}

// DatacenterStats is `show gtm datacenter <name>`.
type DatacenterStats struct {
	Name   string
	Status ObjectStatus
	// Prober is the source address its RTT probes use (invalid: none).
	Prober string
}

// ServerCounters are the DNS server's own counters.
type ServerCounters struct {
	Queries   uint64
	WideIP    uint64
	Static    uint64
	NXDomain  uint64
	Refused   uint64
	Dropped   uint64
	Malformed uint64
}

// WideIPs snapshots every wide IP, sorted by name.
func (s *Server) WideIPs() []WideIPStats {
	p := s.plan.Load()
	out := make([]WideIPStats, 0, len(p.wideIPs))
	for _, w := range p.wideIPs {
		ok, why := wideIPState(w)
		r := w.rt
		out = append(out, WideIPStats{
			Name:          w.full,
			Type:          w.typ,
			LastResort:    r.lastResort.Load(),
			Status:        status(ok, why, w.cfg.Disabled, false),
			Aliases:       append([]string(nil), w.cfg.Aliases...),
			Requests:      r.requests.Load(),
			RequestsA:     r.requestsA.Load(),
			RequestsOther: r.requestsOther.Load(),
			Resolved:      r.resolved.Load(),
			Persisted:     r.persisted.Load(),
			Preferred:     r.preferred.Load(),
			Alternate:     r.alternate.Load(),
			Fallback:      r.fallback.Load(),
			ReturnedToDNS: r.returnedToDNS.Load(),
			Dropped:       r.dropped.Load(),
		})
	}
	return out
}

// Pools snapshots every pool, sorted by name.
func (s *Server) Pools() []PoolStats {
	p := s.plan.Load()
	out := make([]PoolStats, 0, len(p.poolList))
	for _, pl := range p.poolList {
		ok, why := poolState(pl)
		ps := PoolStats{
			Name: pl.full, Type: pl.typ, Status: status(ok, why, pl.cfg.Disabled, false),
			Mode: pl.mode, Alternate: pl.alt, Fallback: pl.fb,
			Preferred: pl.rt.preferred.Load(), AltCount: pl.rt.alternate.Load(), FallCount: pl.rt.fallback.Load(),
			ReturnToDNS: pl.rt.returnToDNS.Load(), Dropped: pl.rt.dropped.Load(),
		}
		for _, m := range pl.members {
			ok, why := memberState(m)
			st := status(ok, why, m.cfg.Disabled || why == reasonManualResume, vsUnknown(m.vs) || (ok && m.cfg.Monitor.active() && Status(m.rt.probe.Load()) == StatusUnknown))
			switch why {
			case reasonMemberMonitor:
				st.Reason = monitorReason(why, &m.rt.why)
			case reasonVSMonitorDown:
				st.Reason = monitorReason(why, &m.vs.rt.why)
			}
			ps.Members = append(ps.Members, PoolMemberStats{
				Member: m.name, Destination: m.vs.cfg.Destination.String(), Order: m.cfg.Order, Ratio: m.ratio,
				Status:    st,
				Preferred: m.rt.preferred.Load(), Alternate: m.rt.alternate.Load(), Fallback: m.rt.fallback.Load(),
			})
		}
		for _, m := range pl.names {
			ok, why := nameState(m)
			ps.Members = append(ps.Members, PoolMemberStats{
				Member: m.cfg.Target, Order: m.cfg.Order, Ratio: m.ratio,
				Status:    status(ok, why, m.cfg.Disabled, false),
				Preferred: m.rt.preferred.Load(), Alternate: m.rt.alternate.Load(), Fallback: m.rt.fallback.Load(),
			})
		}
		out = append(out, ps)
	}
	return out
}

// monitorReason is a monitor's down reason naming the monitor and what
// its last probe found, when a probe of the LTM's kind (a Spec) marked
// it down: "Pool member has been marked down by a monitor (/Common/m:
// Response did not match the receive string)" [M: BIG-IP DNS words it
// "Monitor /Common/m from <prober> : <state>"].
func monitorReason(reason string, why *atomic.Pointer[string]) string {
	if w := why.Load(); w != nil {
		return reason + " (" + *w + ")"
	}
	return reason
}

func vsUnknown(v *vs) bool {
	return v.cfg.Monitor.active() && Status(v.rt.probe.Load()) == StatusUnknown && v.rt.metrics.Load() == nil
}

// Servers snapshots every gtm server with its virtual servers.
func (s *Server) Servers() []ServerStats {
	p := s.plan.Load()
	out := make([]ServerStats, 0, len(p.hostList))
	for _, h := range p.hostList {
		ok, why := hostState(h)
		ss := ServerStats{Name: h.name, Datacenter: h.dc.name, Status: status(ok, why, h.cfg.Disabled, false), Picks: h.rt.picks.Load()}
		if q := h.rt.iquery.Load(); q != nil {
			ss.IQuery = *q
		}
		if m := h.rt.metrics.Load(); m != nil {
			c := *m
			ss.Host = &c
		}
		for _, v := range h.vss {
			ok, why := vsState(v)
			st := status(ok, why, v.cfg.Disabled, vsUnknown(v))
			if why == reasonVSMonitorDown {
				st.Reason = monitorReason(why, &v.rt.why)
			}
			vst := VirtualServerStats{
				Name: v.name, Destination: v.cfg.Destination.String(), Link: v.cfg.Link,
				Status:  st,
				Monitor: Status(v.rt.probe.Load()), Picks: v.rt.picks.Load(),
			}
			if m := v.rt.metrics.Load(); m != nil {
				c := *m
				vst.Metrics = &c
			}
			if w := v.rt.prober.Load(); w != nil {
				vst.Prober = *w
				if vst.Prober == "" {
					vst.Prober = "none"
				}
			}
			ss.VirtualServers = append(ss.VirtualServers, vst)
		}
		out = append(out, ss)
	}
	return out
}

// Links snapshots every link.
func (s *Server) Links() []LinkStats {
	p := s.plan.Load()
	out := make([]LinkStats, 0, len(p.linkList))
	for _, l := range p.linkList {
		ok, why := linkState(l)
		ls := LinkStats{
			Name: l.name, Datacenter: l.dc.name, Status: status(ok, why, l.cfg.Disabled, false),
			LimitInboundBps: l.cfg.LimitInboundBps, LimitOutboundBps: l.cfg.LimitOutboundBps, LimitTotalBps: l.cfg.LimitTotalBps,
			Picks: l.rt.picks.Load(),
		}
		if m := l.rt.metrics.Load(); m != nil {
			c := *m
			ls.Metrics = &c
		}
		for _, r := range l.routers {
			rs := LinkRouterStats{Address: r.addr.String(), Monitor: Status(r.rt.probe.Load())}
			if w := r.rt.why.Load(); w != nil {
				rs.Why = *w
			}
			ls.Routers = append(ls.Routers, rs)
		}
		out = append(out, ls)
	}
	return out
}

// Datacenters snapshots every datacenter.
func (s *Server) Datacenters() []DatacenterStats {
	p := s.plan.Load()
	out := make([]DatacenterStats, 0, len(p.dcList))
	for _, d := range p.dcList {
		ds := DatacenterStats{Name: d.name, Status: status(!d.cfg.Disabled, reasonAvailable, d.cfg.Disabled, false)}
		if d.cfg.Disabled {
			ds.Status.Reason = reasonDCDisabled
		}
		if d.path != nil && d.path.src.IsValid() {
			ds.Prober = d.path.src.String()
		}
		out = append(out, ds)
	}
	return out
}

// Counters snapshots the DNS server's own counters.
func (s *Server) Counters() ServerCounters {
	c := &s.stats
	return ServerCounters{
		Queries: c.queries.Load(), WideIP: c.wideIP.Load(), Static: c.static.Load(),
		NXDomain: c.nxdomain.Load(), Refused: c.refused.Load(), Dropped: c.dropped.Load(), Malformed: c.malformed.Load(),
	}
}
