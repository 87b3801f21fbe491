package daemon

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/gslb/iquery"
	"github.com/openltm/openltm/dataplane/monitor"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/hoststat"
	"github.com/openltm/openltm/objects"
)

// IQueryPort is where every ltmd serves iQuery on its self IPs, BIG-IP's
// port; a gtm server of product bigip is reached there at one of its
// addresses. Tests move it.
var IQueryPort uint16 = 4353

var (
	serverProduct      = gtmServer.MustProp("product")
	serverVSDiscovery  = gtmServer.MustProp("virtual-server-discovery")
	serverLinkDiscover = gtmServer.MustProp("link-discovery")
	linkRouterAddrs    = gtmLink.MustProp("router-addresses")
)

// iqueryAgent is BIG-IP's big3d and gtmd's iQuery side in one: it
// publishes this ltmd's LTM virtual servers (and gtm links) on port
// IQueryPort of each `net self` address, to the GSLBs whose certificates
// it trusts, and follows every `gtm server` of product bigip, feeding the
// GSLB the status, connections and throughput each reports, and adding
// and removing the server's virtual servers (and the datacenter's links)
// as virtual-server-discovery and link-discovery say.
type iqueryAgent struct {
	e     *Engine
	g     *gslb.Server
	p     *dataplane.Plane
	store *iquery.Store
	sub   *iquery.Subscriber

	mu      sync.Mutex
	pubs    map[netip.AddrPort]*iquery.Publisher
	pubErr  map[netip.AddrPort]string // why a listener could not open, logged once
	reports map[string]*iquery.Report // by peer address; nil: down
	prev    map[string]ltmSample
	failed  map[string]string   // discovery commands that failed, logged once
	sources map[netip.Addr]bool // what this device probes LDNSes from
	cpuPrev *hoststat.CPUTimes  // the last reading, for the host's CPU usage
	tlsPols iqueryTLSCache      // gtm servers' iQuery TLS settings, read
}

// AttachIQuery starts the iQuery agent with its identity and trusted
// certificates in dir. The returned function stops it.
func (e *Engine) AttachIQuery(g *gslb.Server, p *dataplane.Plane, dir string) (stop func(), err error) {
	name := e.opts.Hostname
	if name == "" {
		name = sysGlobalHostname.Default
		if o := e.Config().Get(sysGlobal, ""); o != nil && sysGlobalHostname.Str(o) != "" {
			name = sysGlobalHostname.Str(o)
		}
	}
	st, err := iquery.OpenStore(dir, name)
	if err != nil {
		return nil, err
	}
	a := &iqueryAgent{e: e, g: g, p: p, store: st, pubs: map[netip.AddrPort]*iquery.Publisher{}, pubErr: map[netip.AddrPort]string{},
		reports: map[string]*iquery.Report{}, prev: map[string]ltmSample{}, failed: map[string]string{}}
	a.sub = iquery.NewSubscriber(st.ID, st.Trust, iquery.Events{Report: a.onReport, Down: a.onDown}, time.Second, e.gtmLog)
	g.SetRemoteProber(a.remoteProbe)
	g.SetMonitorProber(a.monitorProbe)
	e.RegisterRuntime(a.commands())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		a.tick(time.Now())
		t := time.NewTicker(gslbMetricsInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case now := <-t.C:
				a.tick(now)
			}
		}
	}()
	return func() {
		cancel()
		<-done
		g.SetRemoteProber(nil)
		g.SetMonitorProber(nil)
		a.sub.Close()
		a.mu.Lock()
		for _, p := range a.pubs {
			p.Close()
		}
		a.pubs = nil
		a.mu.Unlock()
	}, nil
}

func (a *iqueryAgent) onReport(peer string, r iquery.Report) {
	a.mu.Lock()
	prev := a.reports[peer]
	a.reports[peer] = &r
	a.mu.Unlock()
	if prev == nil || prev.Via != r.Via {
		a.showStates(a.e.Config()) // (re)connected
	}
}

// onDown marks a peer's servers down once it has reported: a peer never
// reached leaves its servers' status to monitors and the local LTM (a
// configuration written before iQuery, or a datacenter not yet trusted,
// keeps answering as it did).
func (a *iqueryAgent) onDown(peer string, err error) {
	a.mu.Lock()
	r, had := a.reports[peer]
	if had {
		a.reports[peer] = nil
	}
	a.mu.Unlock()
	if !had {
		return
	}
	if r != nil {
		a.e.gtmLog.Warn("iquery: a peer went down; its virtual servers are unavailable", "peer", peer, "error", err)
	}
	cfg := a.e.Config()
	a.showStates(cfg)
	a.apply(cfg, peer, nil)
}

// tick is one round: listeners and publication, follows, and what the
// peers reported applied to the GSLB.
func (a *iqueryAgent) tick(now time.Time) {
	cfg := a.e.Config()
	a.publish(cfg, now)
	want := map[string]bool{}
	for _, o := range cfg.Of(gtmServer) {
		if peer, addrs := peerAddrs(o); peer != "" && !want[peer] {
			want[peer] = true
			a.sub.FollowTLS(peer, addrs, a.tlsPols.of(o, a.e.gtmLog))
		}
	}
	for _, ps := range a.sub.Peers() {
		if !want[ps.Addr] {
			a.sub.Unfollow(ps.Addr)
			a.mu.Lock()
			delete(a.reports, ps.Addr)
			a.mu.Unlock()
		}
	}
	a.showStates(cfg)
	a.mu.Lock()
	peers := make([]string, 0, len(a.reports))
	for p := range a.reports {
		peers = append(peers, p)
	}
	a.mu.Unlock()
	sort.Strings(peers)
	for _, p := range peers {
		a.mu.Lock()
		r := a.reports[p]
		a.mu.Unlock()
		a.apply(cfg, p, r)
		if r != nil {
			a.discover(cfg, p, r)
		}
	}
}

// showStates tells the GSLB how each gtm server's iQuery channel stands,
// for show gtm server.
func (a *iqueryAgent) showStates(cfg *objects.Config) {
	states := map[string]iquery.PeerState{}
	for _, ps := range a.sub.Peers() {
		states[ps.Addr] = ps
	}
	for _, o := range cfg.Of(gtmServer) {
		a.g.SetServerIQuery(o.Name, iqueryState(states, peerOf(o)))
	}
}

// peerAddrs is where a gtm server of product bigip is followed: each of
// its addresses at IQueryPort, tried in order, and the name of that peer
// (the addresses joined by commas; "" for other products).
func peerAddrs(o *objects.Object) (peer string, addrs []string) {
	if serverProduct.Str(o) != "bigip" {
		return "", nil
	}
	for _, a := range serverAddrs(o) {
		addrs = append(addrs, netip.AddrPortFrom(a, IQueryPort).String())
	}
	return strings.Join(addrs, ","), addrs
}

// peerOf is the name of the peer a gtm server is followed as.
func peerOf(o *objects.Object) string {
	p, _ := peerAddrs(o)
	return p
}

// iqueryState words a followed peer's state for show gtm server: the
// address connected, else why none is ("" when the server is not
// followed).
func iqueryState(states map[string]iquery.PeerState, peer string) string {
	ps, ok := states[peer]
	switch {
	case peer == "" || !ok:
		return ""
	case ps.Connected:
		return "connected to " + ps.Via
	case ps.LastError != "":
		return "not connected (" + ps.LastError + ")"
	}
	if ps.Via == "" {
		return "connecting"
	}
	return "connecting to " + ps.Via
}

// publish opens a publisher on each self IP and sends the LTM virtual
// servers' state, with rates from the last sample, and the gtm links'
// throughput as the sum of the virtual servers reached over them.
func (a *iqueryAgent) publish(cfg *objects.Config, now time.Time) {
	want := map[netip.AddrPort]bool{}
	sources := map[netip.Addr]bool{}
	held := a.e.selfHeld(cfg) // a standby leaves floating self IPs alone
	for _, o := range cfg.Of(netSelf) {
		if !held(o) {
			continue
		}
		pfx, err := netip.ParsePrefix(netSelfAddress.Str(o))
		if err != nil {
			if ad, aerr := netip.ParseAddr(netSelfAddress.Str(o)); aerr == nil {
				pfx = netip.PrefixFrom(ad, ad.BitLen())
			} else {
				continue
			}
		}
		sources[pfx.Addr()] = true
		if !selfAllows(cfg, o, "tcp", int(IQueryPort)) {
			continue // port lockdown: no iQuery on this self IP (selfallow.go)
		}
		want[netip.AddrPortFrom(pfx.Addr(), IQueryPort)] = true
	}
	for _, o := range cfg.Of(gtmLink) {
		if ad, err := netip.ParseAddr(linkUplink.Str(o)); err == nil {
			sources[ad] = true
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.sources = sources
	if a.pubs == nil {
		return // stopping
	}
	for ap, p := range a.pubs {
		if !want[ap] {
			p.Close()
			delete(a.pubs, ap)
		}
	}
	for ap := range want {
		if p := a.pubs[ap]; p != nil {
			p.SetTLS(a.ownTLS(cfg, ap.Addr()))
			continue
		}
		p, err := iquery.Listen(ap.String(), a.store.ID, a.store.Trust, a.e.gtmLog)
		if err != nil {
			if a.pubErr[ap] != err.Error() {
				a.e.gtmLog.Error("iquery: cannot listen", "address", ap, "error", err)
				a.pubErr[ap] = err.Error()
			}
			continue
		}
		delete(a.pubErr, ap)
		p.SetTLS(a.ownTLS(cfg, ap.Addr()))
		p.SetProber(a.probeFor)
		a.pubs[ap] = p
	}
	if len(a.pubs) == 0 || a.p == nil {
		return
	}
	var vss []iquery.VirtualServer
	rate := map[netip.AddrPort][2]int64{}
	seen := map[string]bool{}
	host := a.hostLoad()
	for _, v := range a.p.Virtuals() {
		d, err := objects.ParseDest(v.Destination)
		if err != nil {
			continue
		}
		seen[v.Name] = true
		cur := ltmSample{at: now, bitsIn: v.ClientSide.BitsIn, bitsOut: v.ClientSide.BitsOut, pkts: v.ClientSide.PktsIn + v.ClientSide.PktsOut}
		var in, out, pps int64
		if p, ok := a.prev[v.Name]; ok && cur.at.After(p.at) && cur.bitsIn >= p.bitsIn && cur.bitsOut >= p.bitsOut && cur.pkts >= p.pkts {
			dt := cur.at.Sub(p.at).Seconds()
			in, out = int64(float64(cur.bitsIn-p.bitsIn)/dt), int64(float64(cur.bitsOut-p.bitsOut)/dt)
			pps = int64(float64(cur.pkts-p.pkts) / dt)
		}
		a.prev[v.Name] = cur
		st := ltmStatus(v.Status)
		ap := d.AddrPort()
		rate[ap] = [2]int64{in, out}
		host.Bps += in + out
		host.Pps += pps
		vss = append(vss, iquery.VirtualServer{Name: v.Name, Destination: ap, Available: st == gslb.StatusUp,
			Status: statusWord(st), Connections: int64(v.ClientSide.CurConns), BitsIn: in, BitsOut: out, Packets: pps})
	}
	for n := range a.prev {
		if !seen[n] {
			delete(a.prev, n)
		}
	}
	var links []iquery.Link
	for _, o := range cfg.Of(gtmLink) {
		l := iquery.Link{Name: o.Name}
		if v := linkRouterAddrs.Get(o); v != nil {
			for _, it := range v.Items {
				if ad, err := netip.ParseAddr(it.Name); err == nil {
					l.RouterAddresses = append(l.RouterAddresses, ad)
				}
			}
		}
		for _, so := range cfg.Of(gtmServer) {
			if v := serverVirtuals.Get(so); v != nil {
				for _, it := range v.Items {
					if lo := cfg.Lookup(a.e.schema, specLink, vsLink.StrIn(it)); lo == nil || lo.Name != o.Name {
						continue
					}
					if d, err := objects.ParseDest(vsDestination.StrIn(it)); err == nil {
						r := rate[d.AddrPort()]
						l.InBps += r[0]
						l.OutBps += r[1]
					}
				}
			}
		}
		links = append(links, l)
	}
	var srcs []netip.Addr
	for ad := range sources {
		srcs = append(srcs, ad)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Less(srcs[j]) })
	for _, p := range a.pubs {
		p.PublishReport(iquery.Report{VirtualServers: vss, Links: links, Sources: srcs, Host: host})
	}
}

// ownTLS is the iQuery TLS policy of a listener on this device's address
// ad: that of the gtm server of product bigip this address belongs to
// (the configuration the GSLBs share names this device too), so both ends
// of the channel hold to the server's settings; nil (TLS 1.3 only) when
// no such server is configured here.
func (a *iqueryAgent) ownTLS(cfg *objects.Config, ad netip.Addr) *iquery.TLSPolicy {
	for _, o := range cfg.Of(gtmServer) {
		if serverProduct.Str(o) == "bigip" && slices.Contains(serverAddrs(o), ad) {
			return a.tlsPols.of(o, a.e.gtmLog)
		}
	}
	return nil
}

// hostLoad reads this host's CPU usage since the last call and its
// available memory, as big3d reports a BIG-IP's for the gtm server's
// resource limits; a figure it cannot read is -1. The traffic figures
// are added by the caller.
func (a *iqueryAgent) hostLoad() *iquery.Host {
	h := &iquery.Host{CPUUsage: -1, MemAvail: -1}
	if st, err := hoststat.ReadStat(); err == nil {
		if a.cpuPrev != nil {
			h.CPUUsage = int64(math.Round(hoststat.Usage(*a.cpuPrev, st.Total)))
		}
		a.cpuPrev = &st.Total
	}
	if m, err := hoststat.ReadMemory(); err == nil && m.Total > 0 {
		h.MemAvail = int64(m.Available / 1024)
	}
	return h
}

// probeFor runs a GSLB's RTT probe from one of this device's addresses
// (its self IPs and links' uplink addresses, nothing else).
func (a *iqueryAgent) probeFor(r iquery.ProbeRequest) iquery.ProbeResult {
	a.mu.Lock()
	ok := a.sources[r.Src]
	a.mu.Unlock()
	if r.Monitor != nil {
		// A GSLB chose this device to probe a virtual server: from the
		// address it reached this device at, when that is one of ours.
		src := r.Src
		if !ok {
			src = netip.Addr{}
		}
		res := r.Monitor.Run(src, time.Duration(r.TimeoutMS)*time.Millisecond)
		a.e.gtmLog.Debug("iquery: probed a virtual server for a GSLB", "monitor", r.Monitor.Name, "destination", r.Monitor.Dest, "source", src, "up", res.Up, "error", res.Error)
		return res
	}
	if !ok {
		return iquery.ProbeResult{Error: fmt.Sprintf("%s is not an address this device probes from", r.Src)}
	}
	timeout := time.Duration(r.TimeoutMS) * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), timeout+5*time.Second)
	defer cancel()
	rtt, proto, err := gslb.Measure(ctx, r.Src, r.LDNS, r.Port, timeout, r.Protocols)
	a.e.gtmLog.Debug("iquery: probed an LDNS for a GSLB", "ldns", r.LDNS, "source", r.Src, "rtt", rtt, "protocol", proto, "error", err)
	if err != nil {
		return iquery.ProbeResult{Error: err.Error()}
	}
	return iquery.ProbeResult{RTTMicros: rtt.Microseconds(), Protocol: proto}
}

// remoteProbe is the GSLB's RemoteProber: a probe path whose source
// address a followed datacenter reports as its own runs there.
func (a *iqueryAgent) remoteProbe(ctx context.Context, src, ldns netip.Addr, port uint16, timeout time.Duration, protos []string) (time.Duration, string, bool, error) {
	a.mu.Lock()
	peer := ""
	for p, r := range a.reports {
		if r == nil {
			continue
		}
		for _, s := range r.Sources {
			if s == src {
				peer = p
			}
		}
	}
	a.mu.Unlock()
	if peer == "" {
		peer, src = a.viaPeer(src)
	}
	if peer == "" {
		return 0, "", false, nil
	}
	if a.pathDenied(peer) {
		// BIG-IP's iq-allow-path no: that device's big3d is not asked
		// for path metrics, and the path is not probed from here either.
		return 0, "", true, gslb.ErrNotProbed
	}
	ctx, cancel := context.WithTimeout(ctx, timeout+5*time.Second)
	defer cancel()
	res, err := a.sub.Probe(ctx, peer, iquery.ProbeRequest{Src: src, LDNS: ldns, Port: port, TimeoutMS: timeout.Milliseconds(), Protocols: protos})
	if err != nil {
		return 0, "", true, err
	}
	return time.Duration(res.RTTMicros) * time.Microsecond, res.Protocol, true, nil
}

// monitorProbe is the GSLB's MonitorProber: the gtm server device (of
// product bigip) that prober selection chose runs the probe, from the
// address its iQuery stream was reached at.
func (a *iqueryAgent) monitorProbe(ctx context.Context, device string, spec *monitor.Spec, dest netip.AddrPort) (monitor.Outcome, error) {
	o := a.e.Config().Get(gtmServer, device)
	if o == nil {
		return monitor.Outcome{}, fmt.Errorf("%w (%s is not a gtm server)", monitor.ErrNoResponse, device)
	}
	if serverIQAllowCheck.Str(o) == "no" {
		// Prober selection never picks such a device; a probe started
		// before the change is not sent.
		return monitor.Outcome{}, fmt.Errorf("%w (%s does not allow service checks: iq-allow-service-check no)", monitor.ErrNoResponse, device)
	}
	peer := peerOf(o)
	a.mu.Lock()
	r := a.reports[peer]
	a.mu.Unlock()
	if r == nil {
		return monitor.Outcome{}, fmt.Errorf("%w (no iQuery stream to %s)", monitor.ErrNoResponse, device)
	}
	check, err := iquery.CheckOf(spec, dest)
	if err != nil {
		return monitor.Outcome{}, err
	}
	var src netip.Addr
	if ap, err := netip.ParseAddrPort(r.Via); err == nil {
		src = ap.Addr()
	}
	return a.sub.Monitor(ctx, peer, src, check)
}

// pathDenied says whether a gtm server followed as peer has
// iq-allow-path no.
func (a *iqueryAgent) pathDenied(peer string) bool {
	for _, o := range a.e.Config().Of(gtmServer) {
		if serverIQAllowPath.Str(o) == "no" && peerOf(o) == peer {
			return true
		}
	}
	return false
}

// viaPeer finds the device that probes for a gtm server address no
// device reports as its own: a server followed at several addresses
// whose path source is one it was not reached at (a dead first address).
// The device connected probes from the address it was reached at.
func (a *iqueryAgent) viaPeer(src netip.Addr) (string, netip.Addr) {
	for _, o := range a.e.Config().Of(gtmServer) {
		if !slices.Contains(serverAddrs(o), src) {
			continue
		}
		peer := peerOf(o)
		a.mu.Lock()
		r := a.reports[peer]
		a.mu.Unlock()
		if r == nil {
			continue
		}
		if ap, err := netip.ParseAddrPort(r.Via); err == nil && slices.Contains(r.Sources, ap.Addr()) {
			return peer, ap.Addr()
		}
	}
	return "", src
}

func statusWord(s gslb.Status) string {
	switch s {
	case gslb.StatusUp:
		return "up"
	case gslb.StatusDown:
		return "down"
	}
	return "unknown"
}

// apply feeds one peer's report (nil: the peer is down) to the GSLB for
// every gtm server followed at that address.
func (a *iqueryAgent) apply(cfg *objects.Config, peer string, r *iquery.Report) {
	byDest := map[netip.AddrPort]iquery.VirtualServer{}
	if r != nil {
		for _, v := range r.VirtualServers {
			byDest[netip.AddrPortFrom(v.Destination.Addr().Unmap(), v.Destination.Port())] = v
		}
	}
	for _, o := range cfg.Of(gtmServer) {
		if peerOf(o) != peer {
			continue
		}
		if r == nil {
			a.g.SetServerStatus(o.Name, gslb.StatusDown)
			a.g.SetServerMetrics(o.Name, nil)
			continue
		}
		a.g.SetServerStatus(o.Name, gslb.StatusUp)
		if h := r.Host; h != nil {
			a.g.SetServerMetrics(o.Name, &gslb.HostMetrics{CPUUsage: h.CPUUsage, MemAvail: h.MemAvail, Bps: h.Bps, Pps: h.Pps})
		} else {
			a.g.SetServerMetrics(o.Name, nil)
		}
		v := serverVirtuals.Get(o)
		if v == nil {
			continue
		}
		for _, it := range v.Items {
			d, err := objects.ParseDest(vsDestination.StrIn(it))
			if err != nil {
				continue
			}
			x, ok := byDest[d.AddrPort()]
			m := gslb.VSMetrics{Status: gslb.StatusDown} // not on the LTM: offline
			if ok {
				m = gslb.VSMetrics{Status: statusOf(x), Connections: x.Connections, Bps: x.BitsIn + x.BitsOut, PacketRate: x.Packets}
			}
			a.g.SetVirtualServerMetrics(o.Name, it.Name, m)
		}
	}
	if r == nil {
		return
	}
	for _, l := range r.Links {
		if lo := cfg.Get(gtmLink, l.Name); lo != nil {
			a.g.SetLinkMetrics(lo.Name, gslb.LinkMetrics{InBps: l.InBps, OutBps: l.OutBps})
		}
	}
}

func statusOf(v iquery.VirtualServer) gslb.Status {
	switch v.Status {
	case "up":
		return gslb.StatusUp
	case "down":
		return gslb.StatusDown
	case "unknown":
		return gslb.StatusUnknown
	}
	if v.Available {
		return gslb.StatusUp
	}
	return gslb.StatusDown
}

// discover adds the virtual servers a peer reports and its server does
// not have (virtual-server-discovery enabled or enabled-no-delete),
// deletes those it no longer reports (enabled), and creates the links it
// reports in the server's datacenter (link-discovery enabled or
// enabled-no-delete), each change a commit by the user "iquery".
func (a *iqueryAgent) discover(cfg *objects.Config, peer string, r *iquery.Report) {
	for _, o := range cfg.Of(gtmServer) {
		if peerOf(o) != peer {
			continue
		}
		var cmds []string
		if mode := serverVSDiscovery.Str(o); mode == "enabled" || mode == "enabled-no-delete" {
			have := map[netip.AddrPort]string{}
			if v := serverVirtuals.Get(o); v != nil {
				for _, it := range v.Items {
					if d, err := objects.ParseDest(vsDestination.StrIn(it)); err == nil {
						have[d.AddrPort()] = it.Name
					}
				}
			}
			reported := map[netip.AddrPort]bool{}
			var add []string
			for _, v := range r.VirtualServers {
				ap := netip.AddrPortFrom(v.Destination.Addr().Unmap(), v.Destination.Port())
				reported[ap] = true
				if _, ok := have[ap]; !ok {
					add = append(add, fmt.Sprintf("%s { destination %s }", grammar.Quote(v.Name), destText(ap)))
				}
			}
			var del, gone []string
			if mode == "enabled" {
				for ap, name := range have {
					if !reported[ap] {
						del = append(del, grammar.Quote(name))
						gone = append(gone, name)
					}
				}
			}
			sort.Strings(del)
			if len(add) > 0 {
				cmds = append(cmds, fmt.Sprintf("modify gtm server %s virtual-servers add { %s }", o.Name, strings.Join(add, " ")))
			}
			if len(del) > 0 {
				// The pool members of a deleted virtual server go with it.
				cmds = append(cmds, poolMemberDeletes(cfg, o.Name, gone)...)
				cmds = append(cmds, fmt.Sprintf("modify gtm server %s virtual-servers delete { %s }", o.Name, strings.Join(del, " ")))
			}
		}
		if mode := serverLinkDiscover.Str(o); (mode == "enabled" || mode == "enabled-no-delete") && serverDatacenter.Str(o) != "" {
			for _, l := range r.Links {
				if cfg.Get(gtmLink, l.Name) != nil || !strings.HasPrefix(l.Name, "/") {
					continue
				}
				c := fmt.Sprintf("create gtm link %s datacenter %s", l.Name, objects.FullPath(path.Dir(o.Name), serverDatacenter.Str(o)))
				if len(l.RouterAddresses) > 0 {
					var as []string
					for _, ad := range l.RouterAddresses {
						as = append(as, ad.String())
					}
					c += " router-addresses add { " + strings.Join(as, " ") + " }"
				}
				cmds = append(cmds, c)
			}
		}
		if len(cmds) > 0 {
			a.run(cmds)
		}
	}
}

// poolMemberDeletes are the commands deleting the gtm pool members of a
// server's virtual servers.
func poolMemberDeletes(cfg *objects.Config, server string, vss []string) []string {
	var out []string
	for _, k := range gtmTyped {
		for _, p := range cfg.Of(k.pool) {
			v := gpoolMembers.Get(p)
			if v == nil {
				continue
			}
			var del []string
			for _, it := range v.Items {
				srv, vs, ok := splitGTMMember(it.Name)
				if !ok || srv != server {
					continue
				}
				for _, g := range vss {
					if vs == g {
						del = append(del, grammar.Quote(it.Name))
					}
				}
			}
			if len(del) > 0 {
				out = append(out, fmt.Sprintf("modify %s %s members delete { %s }", k.pool.Key(), p.Name, strings.Join(del, " ")))
			}
		}
	}
	return out
}

// destText writes a destination as tmsh reads it (IPv6 as addr.port).
func destText(ap netip.AddrPort) string {
	if ap.Addr().Is6() {
		return fmt.Sprintf("%s.%d", ap.Addr(), ap.Port())
	}
	return ap.String()
}

// run commits one round of discovery commands, all or nothing (a cli
// transaction); a failure is logged once per command text.
func (a *iqueryAgent) run(cmds []string) {
	s := a.e.NewSession("iquery")
	defer s.Close()
	cmd := strings.Join(cmds, "; ")
	ctx := context.Background()
	err := s.Exec(ctx, "create cli transaction", io.Discard)
	for _, c := range cmds {
		if err == nil {
			err = s.Exec(ctx, c, io.Discard)
		}
	}
	if err == nil {
		err = s.Exec(ctx, "submit cli transaction", io.Discard)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		if a.failed[cmd] != err.Error() {
			a.e.gtmLog.Error("iquery: discovery could not change the configuration", "command", cmd, "error", err)
			a.failed[cmd] = err.Error()
		}
		return
	}
	delete(a.failed, cmd)
	a.e.gtmLog.Info("iquery: discovery changed the configuration", "command", cmd)
}
