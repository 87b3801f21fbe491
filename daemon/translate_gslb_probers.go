package daemon

import (
	"net/netip"
	"slices"
	"sort"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

var (
	gtmProberPool     = schema.MustKind("gtm prober-pool")
	specProberPool    = schema.MustSpec("gtm prober-pool")
	proberPoolMode    = gtmProberPool.MustProp("load-balancing-mode")
	proberPoolMembers = gtmProberPool.MustProp("members")
	proberPoolEnabled = gtmProberPool.MustProp("enabled")
	proberMemberOrder = proberPoolMembers.Sub.MustProp("order")
	proberMemberOn    = proberPoolMembers.Sub.MustProp("enabled")
	dcProberPref      = gtmDatacenter.MustProp("prober-preference")
	dcProberFallback  = gtmDatacenter.MustProp("prober-fallback")
	dcProberPool      = gtmDatacenter.MustProp("prober-pool")
	srvProberPref     = gtmServer.MustProp("prober-preference")
	srvProberFallback = gtmServer.MustProp("prober-fallback")
	srvProberPool     = gtmServer.MustProp("prober-pool")
	linkMonitor       = gtmLink.MustProp("monitor")
)

// probers translates the prober pools and each datacenter's and server's
// prober selection, and finds the gtm server that is this device (a
// server of product bigip with a `net self` address): who probes a
// server's virtual servers (dataplane/gslb prober.go).
func (t *gslbTranslator) probers() {
	t.gc.ProberPools = map[string]*gslb.ProberPool{}
	for _, o := range t.cfg.Of(gtmProberPool) {
		pp := &gslb.ProberPool{Name: o.Name, Mode: t.e(o, proberPoolMode), Disabled: proberPoolEnabled.Str(o) == "disabled"}
		type m struct {
			name  string
			order int
		}
		var ms []m
		if v := proberPoolMembers.Get(o); v != nil {
			for _, it := range v.Items {
				if proberMemberOn.StrIn(it) == "disabled" {
					continue
				}
				srv, ok := t.ref(specGTMServer, it.Name)
				if !ok || srv == "" {
					t.fail("The prober pool (%s) has a member (%s) that is not a gtm server.", o.Name, it.Name)
					return
				}
				if t.e(t.cfg.Get(gtmServer, srv), serverProduct) != "bigip" {
					t.fail("The prober pool (%s) member (%s) is not a BIG-IP system (product bigip); only BIG-IP systems probe.", o.Name, srv)
					return
				}
				ms = append(ms, m{srv, atoi(proberMemberOrder.StrIn(it))})
			}
		}
		sort.SliceStable(ms, func(i, j int) bool { return ms[i].order < ms[j].order })
		for _, x := range ms {
			pp.Members = append(pp.Members, x.name)
		}
		t.gc.ProberPools[o.Name] = pp
	}
	pool := func(o *objects.Object, p *objects.Prop) string {
		name, ok := t.ref(specProberPool, p.Str(o))
		if !ok {
			t.fail("The %s (%s) names prober-pool %s, which does not exist.", o.Kind.Lower, o.Name, p.Str(o))
		}
		return name
	}
	for _, o := range t.cfg.Of(gtmDatacenter) {
		if d := t.gc.Datacenters[o.Name]; d != nil {
			d.ProberPreference, d.ProberFallback, d.ProberPool = t.e(o, dcProberPref), t.e(o, dcProberFallback), pool(o, dcProberPool)
		}
	}
	selfs := map[netip.Addr]bool{}
	for _, o := range t.cfg.Of(netSelf) {
		if pfx, err := netip.ParsePrefix(netSelfAddress.Str(o)); err == nil {
			selfs[pfx.Addr()] = true
		} else if a, err := netip.ParseAddr(netSelfAddress.Str(o)); err == nil {
			selfs[a] = true
		}
	}
	for _, o := range t.cfg.Of(gtmServer) {
		h := t.gc.Servers[o.Name]
		if h == nil {
			continue
		}
		h.BigIP = t.e(o, serverProduct) == "bigip"
		h.NoServiceCheck = t.e(o, serverIQAllowCheck) == "no"
		if _, _, err := iqueryTLSOf(o); err != nil && t.err == nil {
			t.err = err
		}
		h.ProberPreference, h.ProberFallback, h.ProberPool = t.e(o, srvProberPref), t.e(o, srvProberFallback), pool(o, srvProberPool)
		if h.BigIP && t.gc.Self == "" && slices.ContainsFunc(h.Addresses, func(a netip.Addr) bool { return selfs[a] }) {
			t.gc.Self = o.Name
		}
	}
}
