package daemon

import (
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/objects"
)

// The large-scale NAT pools (dataplane/lsn) and their log profiles.
var (
	ltmLSNPool       = schema.MustKind("ltm lsn-pool")
	specLSNPool      = schema.MustSpec("ltm lsn-pool")
	lsnMode          = ltmLSNPool.MustProp("mode")
	lsnMembers       = ltmLSNPool.MustProp("members")
	lsnBackup        = ltmLSNPool.MustProp("backup-members")
	lsnConnLimit     = ltmLSNPool.MustProp("client-connection-limit")
	lsnInbound       = ltmLSNPool.MustProp("inbound-connections")
	lsnPortRange     = ltmLSNPool.MustProp("translation-port-range")
	lsnLogProfile    = ltmLSNPool.MustProp("log-profile")
	lsnLogPublisher  = ltmLSNPool.MustProp("log-publisher")
	lsnPersistence   = ltmLSNPool.MustProp("persistence")
	lsnPersistMode   = lsnPersistence.Sub.MustProp("mode")
	lsnPersistTTL    = lsnPersistence.Sub.MustProp("timeout")
	lsnPBA           = ltmLSNPool.MustProp("port-block-allocation")
	lsnBlockSize     = lsnPBA.Sub.MustProp("block-size")
	lsnBlockLifetime = lsnPBA.Sub.MustProp("block-lifetime")
	lsnBlockIdle     = lsnPBA.Sub.MustProp("block-idle-timeout")
	lsnBlockLimit    = lsnPBA.Sub.MustProp("client-block-limit")
	lsnZombie        = lsnPBA.Sub.MustProp("zombie-timeout")
	lsnHairpin       = ltmLSNPool.MustProp("hairpin-mode")
	lsnPCP           = ltmLSNPool.MustProp("pcp")
	lsnPCPProfile    = lsnPCP.Sub.MustProp("profile")
	lsnPCPSelf       = lsnPCP.Sub.MustProp("selfip")

	profilePCP      = schema.MustKind("ltm profile pcp")
	pcpPort         = profilePCP.MustProp("listening-port")
	pcpMapLimit     = profilePCP.MustProp("map-limit-per-client")
	pcpMinLife      = profilePCP.MustProp("min-mapping-lifetime")
	pcpMaxLife      = profilePCP.MustProp("max-mapping-lifetime")
	pcpThirdParty   = profilePCP.MustProp("third-party-option")
	pcpThirdSubnets = profilePCP.MustProp("third-party-allowed-subnets")
	pcpRule         = profilePCP.MustProp("rule")

	ltmLSNLogProfile = schema.MustKind("ltm lsn-log-profile")
	lsnLogCSV        = ltmLSNLogProfile.MustProp("csv-format")
	lsnLogStart      = ltmLSNLogProfile.MustProp("start-outbound-session")
	lsnLogStartAct   = lsnLogStart.Sub.MustProp("action")
	lsnLogEnd        = ltmLSNLogProfile.MustProp("end-outbound-session")
	lsnLogEndAct     = lsnLogEnd.Sub.MustProp("action")
)

// lsnPools translates every `ltm lsn-pool`. A deterministic pool's
// subscribers are the source prefixes of the virtual servers that use
// it, sorted; one with more subscribers than its addresses and ports
// can share is refused [M: the wording].
func (t *translator) lsnPools() {
	subs := map[string][]netip.Prefix{}
	for _, o := range t.cfg.Of(ltmVirtual) {
		sat := virtualSNAT.Get(o)
		if sat == nil || sat.Sub == nil || snatType.StrIn(sat.Sub) != "lsn" {
			continue
		}
		lp := t.cfg.Lookup(t.s, specLSNPool, snatPool.StrIn(sat.Sub))
		if lp == nil {
			continue
		}
		if p, err := netip.ParsePrefix(prefixWithoutRD(virtualSource.Effective(t.cfg, o))); err == nil && p.Bits() > 0 { // translate_natrd.go
			subs[lp.Name] = append(subs[lp.Name], p.Masked())
		}
	}
	pcpAt := map[netip.AddrPort]string{} // the PCP servers' addresses, by pool
	for _, o := range t.cfg.Of(ltmLSNPool) {
		e := func(p *objects.Prop) string { return p.Effective(t.cfg, o) }
		pc := &dataplane.LSNPool{Name: o.Name, Mode: dataplane.LSNMode(e(lsnMode)),
			Inbound: dataplane.LSNInbound(e(lsnInbound)), ClientConnLimit: uint32(atoi(e(lsnConnLimit))),
			LogStart: true, LogEnd: true}
		var err error
		if pc.PortLow, pc.PortHigh, err = objects.ParsePortRange(e(lsnPortRange)); err != nil {
			t.refuse("LSN pool %s: %v", o.Name, err)
			continue
		}
		pc.Members = prefixes(lsnMembers.Get(o))
		pc.BackupMembers = prefixes(lsnBackup.Get(o))
		var pers, pba *objects.Item
		if v := lsnPersistence.Get(o); v != nil {
			pers = v.Sub
		}
		if v := lsnPBA.Get(o); v != nil {
			pba = v.Sub
		}
		pc.Persist = dataplane.LSNPersist(lsnPersistMode.StrIn(pers))
		pc.PersistTimeout = time.Duration(atoi(lsnPersistTTL.StrIn(pers))) * time.Second
		pc.BlockSize = atoi(lsnBlockSize.StrIn(pba))
		pc.BlockLifetime = time.Duration(atoi(lsnBlockLifetime.StrIn(pba))) * time.Second
		pc.BlockIdle = time.Duration(atoi(lsnBlockIdle.StrIn(pba))) * time.Second
		pc.ClientBlockLimit = atoi(lsnBlockLimit.StrIn(pba))
		pc.ZombieTimeout = time.Duration(atoi(lsnZombie.StrIn(pba))) * time.Second
		if len(pc.Members) == 0 {
			t.keep(o, "no members: the virtual servers that translate through it cannot connect")
		}
		if len(pc.BackupMembers) > 0 && pc.Mode != "deterministic" {
			t.keep(o, "backup-members are used by deterministic mode only; in mode %s they are kept", pc.Mode)
		}
		if pc.Mode == "deterministic" {
			ps := subs[o.Name]
			slices.SortFunc(ps, func(a, b netip.Prefix) int { return a.Addr().Compare(b.Addr()) })
			ps = slices.Compact(ps)
			pc.Subscribers = ps
			var n uint64
			for _, p := range ps {
				if h := p.Addr().BitLen() - p.Bits(); h < 32 {
					n += 1 << h
				} else {
					n += 1 << 32
				}
			}
			var addrs uint64
			for _, p := range pc.Members {
				if h := p.Addr().BitLen() - p.Bits(); h < 32 {
					addrs += 1 << h
				} else {
					addrs += 1 << 32
				}
			}
			if n > 0 && lsn.DeterministicShare(addrs, n, uint64(pc.PortHigh)-uint64(pc.PortLow)+1) == 0 {
				t.refuse("LSN pool %s: deterministic mode cannot give %d subscribers a port each from %d addresses with translation-port-range %d:%d", o.Name, n, addrs, pc.PortLow, pc.PortHigh)
				continue
			}
		}
		pc.Hairpin = e(lsnHairpin) == "enabled"
		if !t.lsnLogging(o, pc, e(lsnLogProfile), e(lsnLogPublisher)) {
			continue
		}
		if !t.lsnPCP(o, pc) {
			continue
		}
		if pc.PCP != nil { // one PCP server per address and port [M]
			if other, ok := pcpAt[pc.PCP.Listen]; ok {
				t.refuse("01070734:3: Configuration error: LSN pool (%s): its PCP server on %s is LSN pool (%s)'s: two lsn pools' pcp selfip and listening-port must differ", o.Name, pc.PCP.Listen, other)
				continue
			}
			pcpAt[pc.PCP.Listen] = o.Name
		}
		if t.dc.LSN == nil {
			t.dc.LSN = map[string]*dataplane.LSNPool{}
		}
		t.dc.LSN[o.Name] = pc
	}
}

// lsnLogging reads a pool's log-publisher and log-profile: which events
// go to the publisher. The publisher must exist (a dangling reference is
// refused by the schema).
func (t *translator) lsnLogging(o *objects.Object, pc *dataplane.LSNPool, profile, publisher string) bool {
	if publisher != "" && publisher != "none" {
		pub := t.cfg.Lookup(t.s, []string{logPublisher.Key()}, publisher)
		if pub == nil {
			return false
		}
		pc.LogPublisher = pub.Name
	}
	if profile == "" || profile == "none" {
		return true
	}
	lp := t.cfg.Lookup(t.s, []string{ltmLSNLogProfile.Key()}, profile)
	if lp == nil {
		return false
	}
	if pc.LogPublisher == "" {
		t.keep(o, "log-profile %s without a log-publisher logs nothing", profile)
	}
	pc.LogCSV = lsnLogCSV.Effective(t.cfg, lp) == "enabled"
	action := func(p, act *objects.Prop) string {
		for x := lp; x != nil; {
			if v := p.Get(x); v != nil && act.In(v.Sub) != nil {
				return act.StrIn(v.Sub)
			}
			parent := ""
			if d := x.Props["defaults-from"]; d != nil {
				parent = noneEmpty(d.Str)
			}
			if parent == "" {
				break
			}
			x = t.cfg.Lookup(t.s, []string{ltmLSNLogProfile.Key()}, parent)
		}
		return act.Default
	}
	start, end := action(lsnLogStart, lsnLogStartAct), action(lsnLogEnd, lsnLogEndAct)
	pc.LogStart, pc.LogEnd = start != "disabled", end != "disabled"
	// backup-allocation-only on either logs only the backup translations
	// [M: F5 names it for each event; openltm applies it to the pool].
	pc.LogBackupOnly = start == "backup-allocation-only" || end == "backup-allocation-only"
	return true
}

// prefixes reads a list of address/prefix entries (checked by the
// schema).
func prefixes(v *objects.Value) []netip.Prefix {
	if v == nil {
		return nil
	}
	var out []netip.Prefix
	for _, s := range v.List {
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
		}
	}
	return out
}

// virtualLSN points v at its lsn pool (source-address-translation type
// lsn). The L4 proxy's TCP flows (with or without TLS and rules), UDP
// flows and message-based (http) virtuals' member connections (HTTP/1.1
// and HTTP/2) translate.
func (t *translator) virtualLSN(o *objects.Object, v *dataplane.Virtual, pool string) bool {
	lp := t.cfg.Lookup(t.s, specLSNPool, pool)
	if lp == nil {
		t.skip(o, "lsn pool %s does not exist", pool)
		return false
	}
	if t.dc.LSN[lp.Name] == nil {
		t.skip(o, "lsn pool %s cannot run", pool)
		return false
	}
	v.SNAT.Pool = lp.Name
	return true
}

// lsnNotes warns about the virtuals with an lsn pool whose data path
// leaves some of their server-side connections untranslated, naming
// them: the member connections of pools and rules' nodes, HTTP/1.1,
// HTTP/2 and HTTP/3 alike, explicit proxy and SOCKS origins, message
// routing peers and a diameter profile's member connections, FTP data
// connections (passive and active), TFTP transfers, RTSP media
// channels and GTP messages (UDP legs) translate; these do not yet.
func (t *translator) lsnNotes() {
	for name, v := range t.dc.Virtuals {
		if v.SNAT.Type != dataplane.SNATLSN {
			continue
		}
		var not []string
		if v.DoH != nil && v.DoH.Proxy && v.TLS != nil && v.TLS.Server != nil {
			// Over plain DNS (no server-ssl) they go through the dns
			// profile's pool step, which translates.
			not = append(not, "the doh-proxy profile's DoH queries to its members (connections shared by every client)")
		}
		if len(not) == 0 {
			continue
		}
		if o := t.cfg.Get(ltmVirtual, name); o != nil {
			t.keep(o, "source-address-translation type lsn is not acted on for %s: those keep the address the virtual would use without it", strings.Join(not, "; "))
		}
	}
}

// lsnPCP reads a pool's pcp block: the PCP server on the selfip's
// address with the pcp profile's settings (inherited through
// defaults-from). A DS-Lite tunnel is kept with a warning: openltm has
// no tunnels for it to listen in.
func (t *translator) lsnPCP(o *objects.Object, pc *dataplane.LSNPool) bool {
	v := lsnPCP.Get(o)
	if v == nil || v.Sub == nil {
		return true
	}
	prof := noneEmpty(lsnPCPProfile.StrIn(v.Sub))
	if prof == "" {
		return true
	}
	po := t.cfg.Lookup(t.s, []string{profilePCP.Key()}, prof)
	if po == nil {
		return false
	}
	self := noneEmpty(lsnPCPSelf.StrIn(v.Sub))
	if self == "" {
		t.keep(o, "pcp profile %s without a selfip: the PCP server listens only on a DS-Lite tunnel, which openltm does not have", prof)
		return true
	}
	so := t.cfg.Lookup(t.s, []string{netSelf.Key()}, self)
	if so == nil {
		return false
	}
	addr, ok := selfAddr(so)
	if !ok {
		t.refuse("LSN pool %s: pcp selfip %s has no address", o.Name, self)
		return false
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, po) }
	p := &dataplane.LSNPCP{Listen: netip.AddrPortFrom(addr, uint16(atoi(e(pcpPort)))),
		MapLimit:    atoi(e(pcpMapLimit)),
		MinLifetime: time.Duration(atoi(e(pcpMinLife))) * time.Second,
		MaxLifetime: time.Duration(atoi(e(pcpMaxLife))) * time.Second,
		ThirdParty:  e(pcpThirdParty) == "enabled"}
	if p.MinLifetime > p.MaxLifetime && p.MaxLifetime > 0 {
		t.refuse("LSN pool %s: pcp profile %s has min-mapping-lifetime above max-mapping-lifetime", o.Name, po.Name)
		return false
	}
	if !selfAllows(t.cfg, so, "udp", int(p.Listen.Port())) {
		// Port lockdown (selfallow.go): the self IP refuses PCP as it
		// refuses iQuery; the pool translates without a PCP server [M].
		t.note(o, "pcp selfip %s: its allow-service does not admit udp:%d (port lockdown), so the PCP server does not listen (allow-service { default udp:%d } admits it)", so.Name, p.Listen.Port(), p.Listen.Port())
		return true
	}
	for x := po; x != nil && p.ThirdPartySubnets == nil; {
		if l := pcpThirdSubnets.Get(x); l != nil {
			p.ThirdPartySubnets = prefixes(l)
			break
		}
		parent := ""
		if d := x.Props["defaults-from"]; d != nil {
			parent = noneEmpty(d.Str)
		}
		if parent == "" {
			break
		}
		x = t.cfg.Lookup(t.s, []string{profilePCP.Key()}, parent)
	}
	if rn := noneEmpty(e(pcpRule)); rn != "" && t.rules != nil {
		pr, note, err := t.rules.pcpRulesOf(t.s, t.cfg, rn) // translate_pcprules.go
		switch {
		case err != nil:
			if kept, ok := err.(*keptRuleError); ok {
				t.keep(po, "%v: the PCP server runs without it", kept.error)
			} else {
				t.refuse("%s", about(po, "%v", err))
				return false
			}
		case note != "":
			t.keep(po, "%s", note)
		default:
			p.Rules = pr
		}
	}
	pc.PCP = p
	return true
}
