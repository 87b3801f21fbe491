package daemon

import (
	"fmt"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The ltm snat objects (dataplane/snatobj) and the per-address settings
// of their translation addresses (ltm snat-translation).
var (
	ltmSNAT           = schema.MustKind("ltm snat")
	snatObjOrigins    = ltmSNAT.MustProp("origins")
	snatObjAutomap    = ltmSNAT.MustProp("automap")
	snatObjPool       = ltmSNAT.MustProp("snatpool")
	snatObjXlat       = ltmSNAT.MustProp("translation")
	snatObjVLANs      = ltmSNAT.MustProp("vlans")
	snatObjVLANsOff   = ltmSNAT.MustProp("vlans-disabled")
	snatObjSourcePort = ltmSNAT.MustProp("source-port")

	ltmSNATXlat    = schema.MustKind("ltm snat-translation")
	xlatAddress    = ltmSNATXlat.MustProp("address")
	xlatEnabled    = ltmSNATXlat.MustProp("enabled")
	xlatConnLimit  = ltmSNATXlat.MustProp("connection-limit")
	xlatTCPIdle    = ltmSNATXlat.MustProp("tcp-idle-timeout")
	xlatUDPIdle    = ltmSNATXlat.MustProp("udp-idle-timeout")
	xlatDisableWds = map[string]bool{"no": true, "disabled": true, "false": true}
)

// xlatAddr is an ltm snat-translation's address: its address property,
// else the address its name is (BIG-IP names them by their address);
// a route domain (ADDRESS%ID) is not part of the address.
func xlatAddr(o *objects.Object) (netip.Addr, bool) {
	if a, err := netip.ParseAddr(strings.SplitN(xlatAddress.Str(o), "%", 2)[0]); err == nil {
		return a, true
	}
	return objects.NodeAddr(o.Name)
}

// specSNATXlat is how a snatpool member names an ltm snat-translation.
var specSNATXlat = schema.MustSpec("ltm snat-translation")

// snatPoolMemberAddr is the address a snatpool member gives out: the
// member itself when it is an address, else the address of the ltm
// snat-translation it names (full path, or the same name in /Common, as
// objects.Config.Lookup resolves references; BIG-IP allows both forms).
// false: neither (the reference check refuses such a member before a
// commit gets here).
func snatPoolMemberAddr(s *objects.Schema, cfg *objects.Config, m string) (netip.Addr, bool) {
	if a, ok := objects.NodeAddr(m); ok {
		return a, true
	}
	if x := cfg.Lookup(s, specSNATXlat, m); x != nil {
		return xlatAddr(x)
	}
	return netip.Addr{}, false
}

// snatTranslations reads the ltm snat-translation objects: the addresses
// disabled (which no SNAT object or snatpool gives a connection), and
// the settings that act on the connections given an address
// (connection-limit, tcp-idle-timeout, udp-idle-timeout: the
// dataplane's SNATSettings). An idle timeout that is not indefinite or
// a whole number of seconds is refused. ip-idle-timeout, arp and
// traffic-group are kept and warned of as the schema's passive settings
// are; a limit is warned of for the data paths that do not enforce it.
func (t *translator) snatTranslations() map[netip.Addr]bool {
	disabled := map[netip.Addr]bool{}
	for _, o := range t.cfg.Of(ltmSNATXlat) {
		a, ok := xlatAddr(o)
		if !ok {
			continue
		}
		if why := t.xlatRouteDomain(o); why != "" { // translate_natrd.go
			t.refuse("%s", about(o, "%s", why))
			continue
		}
		t.dc.SNATTranslations = append(t.dc.SNATTranslations, a)
		if xlatDisableWds[xlatEnabled.Str(o)] {
			disabled[a] = true
		}
		var st dataplane.SNATTranslation
		bad := false
		for _, it := range []struct {
			p  *objects.Prop
			to *time.Duration
		}{{xlatTCPIdle, &st.TCPIdle}, {xlatUDPIdle, &st.UDPIdle}} {
			v := it.p.Str(o)
			if v == "" || v == "indefinite" {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 32)
			if err != nil {
				t.refuse("%s", about(o, "%s %s is not indefinite or a number of seconds (0 to 4294967295)", it.p.Name, v))
				bad = true
				break
			}
			if n == 0 {
				t.note(o, "%s 0 is kept, and not acted on: the flows keep their profile's idle timeout", it.p.Name)
				continue
			}
			*it.to = time.Duration(n) * time.Second
		}
		lim := xlatConnLimit.Str(o)
		n, err := strconv.ParseUint(lim, 10, 64)
		if err != nil && lim != "" && !bad {
			t.refuse("%s", about(o, "connection-limit %s is not a number of connections (0: no limit)", lim))
			bad = true
		}
		if bad {
			continue
		}
		if n > 0 {
			st.ConnLimit = n
			t.note(o, "connection-limit %d is enforced on the server connections of standard (TCP), UDP, HTTP and message-based virtuals (HTTP/2 member connections and forward proxies included), a diameter flow's other members, rules' listen relays, dns virtuals' member queries and message routing peer connections (a transport-config's snatpool or automap, a rule's MR::message snat, a connection back), for the virtuals' and ltm snat objects' own translation and rules' snat and snatpool decisions alike (%s)", n, a)
		}
		if st != (dataplane.SNATTranslation{}) {
			if t.dc.SNATSettings == nil {
				t.dc.SNATSettings = map[netip.Addr]dataplane.SNATTranslation{}
			}
			t.dc.SNATSettings[a] = st
		}
	}
	return disabled
}

// vlansWords is o's VLAN list as tmsh writes it, for a note.
func vlansWords(f *dataplane.VLANFilter, o *objects.Object) string {
	var names []string
	if v := o.Props["vlans"]; v != nil {
		names = v.List
	}
	state := "vlans-enabled"
	if f.Disabled {
		state = "vlans-disabled"
	}
	return "vlans { " + strings.Join(names, " ") + " } " + state
}

// snatObjects translates every ltm snat into the dataplane's SNATs,
// refusing what BIG-IP refuses: no origins, not exactly one of
// translation, snatpool and automap, an origin that is not an address
// or a prefix, and one origin in two SNATs [M: the messages are ours];
// origins in a route domain (ADDRESS%ID/LEN) that does not exist or in
// two route domains, and a translation in one that does not exist
// (translate_natrd.go).
// A referenced snatpool that does not exist is refused by the reference
// check before this runs.
func (t *translator) snatObjects(disabled map[netip.Addr]bool) {
	owner := map[netip.Prefix]string{}
	objs := t.cfg.Of(ltmSNAT)
	sort.Slice(objs, func(i, j int) bool { return objs[i].Name < objs[j].Name })
	for _, o := range objs {
		x := dataplane.SNATObject{Name: o.Name, ChangePort: snatObjSourcePort.Str(o) == "change", StrictPort: snatObjSourcePort.Str(o) == "preserve-strict"}
		var origins []netip.Prefix
		bad, rdWhy, rd := "", "", -1
		for _, w := range vlanInterfaces(snatObjOrigins.Str(o)) { // the block's first-level words
			w, wrd, why := t.originRD(w) // translate_natrd.go
			if why != "" {
				rdWhy = "origin " + why
				break
			}
			if rd >= 0 && wrd != rd {
				rdWhy = fmt.Sprintf("origins are in route domains %d and %d; a SNAT's origins are in one route domain, as the clients it translates are in their virtual's", rd, wrd)
				break
			}
			rd = wrd
			p, err := netip.ParsePrefix(w)
			if err != nil {
				a, aerr := netip.ParseAddr(w)
				if aerr != nil {
					bad = w
					break
				}
				p = netip.PrefixFrom(a, a.BitLen())
			}
			origins = append(origins, p.Masked())
		}
		if rdWhy != "" {
			t.refuse("%s", about(o, "%s", rdWhy))
			continue
		}
		if bad != "" {
			t.refuse("%s", about(o, "origin %s is not an address or an address/prefix-length (10.1.0.0/16, 10.1.2.3, 10.1.0.0%%2/16)", bad))
			continue
		}
		x.RouteDomain = max(rd, 0)
		if len(origins) == 0 {
			t.refuse("%s", about(o, "origins must name at least one address or network (origins { 10.1.0.0/16 { } })"))
			continue
		}
		xlat, pool := snatObjXlat.Str(o), snatObjPool.Str(o)
		kinds := 0
		for _, set := range []bool{xlat != "" && xlat != "none", pool != "" && pool != "none", snatObjAutomap.Str(o) == "automap"} {
			if set {
				kinds++
			}
		}
		if kinds != 1 {
			t.refuse("%s", about(o, "exactly one of translation ADDRESS, snatpool NAME and automap must be given"))
			continue
		}
		switch {
		case xlat != "" && xlat != "none":
			a, ok := objects.NodeAddr(xlat)
			if !ok {
				t.refuse("%s", about(o, "translation %s is not an address", xlat))
				continue
			}
			if _, _, why := t.addrRD(xlat[strings.LastIndexByte(xlat, '/')+1:]); why != "" {
				t.refuse("%s", about(o, "translation %s", why))
				continue
			}
			if !disabled[a] {
				x.Addrs = []netip.Addr{a}
			}
		case pool != "" && pool != "none":
			sp := t.cfg.Lookup(t.s, specSnatPool, pool)
			if sp == nil {
				t.skip(o, "snatpool %s does not exist", pool)
				continue
			}
			x.Pool, x.Addrs = sp.Name, t.dc.SnatPools[sp.Name]
		default:
			x.Automap = true
		}
		dup := false
		for _, p := range origins {
			if other, ok := owner[p]; ok && other != o.Name {
				t.refuse("%s", about(o, "origin %s is already an origin of ltm snat %s", p, other))
				dup = true
				break
			}
			owner[p] = o.Name
		}
		if dup {
			continue
		}
		x.Origins = origins
		f, msg := vlanFilter(t.cfg, t.s, o, snatObjVLANs, snatObjVLANsOff) // translate_vlans.go
		if msg != "" {
			t.refuse("%s", about(o, "%s", msg))
			continue
		}
		if f != nil {
			f.Device = "" // no listener of its own to bind
			x.VLANs = f
			t.note(o, "%s is acted on for standard (TCP), UDP, HTTP and the other message-based virtuals' connections, dns virtuals' member queries (UDP, TCP and DoH clients), rules' listen relays (TCP and UDP) and HTTP/3 clients' requests; a server connection no client opened (min-conn's) has no VLAN, and takes it as none (a vlans-enabled SNAT does not translate it, a vlans-disabled one does)", vlansWords(f, o))
		}
		if x.StrictPort {
			t.note(o, "source-port preserve-strict fails a connection whose client port the translation address has in use on standard (TCP), UDP, HTTP and the other message-based virtuals, a diameter flow's other members, dns virtuals' member queries and rules' UDP listen relays; HTTP/2 member connections take another port, as preserve-strict has no meaning there (one connection carries the requests of many clients, so no one client's port is its own)")
		}
		t.dc.SNATs = append(t.dc.SNATs, x)
	}
}
