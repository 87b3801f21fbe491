package gslb

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/miekg/dns"
)

// RRType is the record type of a wide IP or pool, spelled as tmsh spells
// the kind (`gtm wideip aaaa`, `gtm pool mx`).
type RRType string

// The record types. A and AAAA pools hold virtual servers and answer with
// their addresses; CNAME, MX, SRV, NAPTR, SVCB and HTTPS pools hold
// domain names.
const (
	TypeA     RRType = "a"
	TypeAAAA  RRType = "aaaa"
	TypeCNAME RRType = "cname"
	TypeMX    RRType = "mx"
	TypeSRV   RRType = "srv"
	TypeNAPTR RRType = "naptr"
	TypeSVCB  RRType = "svcb"
	TypeHTTPS RRType = "https"
)

// Types lists every record type, in the order shows list them.
var Types = []RRType{TypeA, TypeAAAA, TypeCNAME, TypeMX, TypeSRV, TypeNAPTR, TypeSVCB, TypeHTTPS}

// Key is how Config.Pools and Config.WideIPs name an object: the full path
// for type A (so rules and older configurations name A pools by path), else
// `TYPE /path`, since BIG-IP lets a pool a and a pool aaaa share a name.
func Key(t RRType, fullPath string) string {
	if t == "" || t == TypeA {
		return fullPath
	}
	return string(t) + " " + fullPath
}

// keyPath is the full path in a Key.
func keyPath(key string) string {
	if i := strings.IndexByte(key, ' '); i >= 0 {
		return key[i+1:]
	}
	return key
}

func defType(t RRType) RRType {
	if t == "" {
		return TypeA
	}
	return t
}

// index is the type's place in Types (-1 for an unknown type).
func (t RRType) index() int {
	for i, x := range Types {
		if x == defType(t) {
			return i
		}
	}
	return -1
}

// named reports whether members of this type are domain names rather
// than virtual servers.
func (t RRType) named() bool {
	switch t {
	case TypeCNAME, TypeMX, TypeSRV, TypeNAPTR, TypeSVCB, TypeHTTPS:
		return true
	}
	return false
}

// qtypeOf is the DNS type a wide IP of this type answers.
func (t RRType) qtype() uint16 {
	switch defType(t) {
	case TypeAAAA:
		return dns.TypeAAAA
	case TypeCNAME:
		return dns.TypeCNAME
	case TypeMX:
		return dns.TypeMX
	case TypeSRV:
		return dns.TypeSRV
	case TypeNAPTR:
		return dns.TypeNAPTR
	case TypeSVCB:
		return dns.TypeSVCB
	case TypeHTTPS:
		return dns.TypeHTTPS
	}
	return dns.TypeA
}

// typeOfQuery is the wide IP type a query type asks for (ANY asks A),
// and false for the types no wide IP answers.
func typeOfQuery(qt uint16) (RRType, bool) {
	switch qt {
	case dns.TypeA, dns.TypeANY:
		return TypeA, true
	case dns.TypeAAAA:
		return TypeAAAA, true
	case dns.TypeCNAME:
		return TypeCNAME, true
	case dns.TypeMX:
		return TypeMX, true
	case dns.TypeSRV:
		return TypeSRV, true
	case dns.TypeNAPTR:
		return TypeNAPTR, true
	case dns.TypeSVCB:
		return TypeSVCB, true
	case dns.TypeHTTPS:
		return TypeHTTPS, true
	}
	return "", false
}

// family reports whether an address may be answered by a wide IP of
// this type: IPv4 for A, IPv6 for AAAA.
func (t RRType) family(a netip.Addr) bool {
	if defType(t) == TypeAAAA {
		return a.Is6() && !a.Is4In6()
	}
	return a.Is4()
}

// typedNames are the names and aliases of the wide IPs of one type other
// than A (A's are plan.exact and plan.wild, which the wire path reads).
type typedNames struct {
	exact map[string]*wideIP
	wild  []wildName
}

func (tn *typedNames) lookup(qname string) *wideIP {
	if w := tn.exact[qname]; w != nil {
		return w
	}
	for _, wn := range tn.wild {
		if wildMatch(wn.pattern, qname) {
			return wn.w
		}
	}
	return nil
}

// names is the name table of wide IPs of type t.
func (p *plan) names(t RRType) *typedNames {
	i := t.index()
	if i <= 0 {
		return &typedNames{exact: p.exact, wild: p.wild}
	}
	tn := &p.typed[i]
	if tn.exact == nil {
		tn.exact = map[string]*wideIP{}
	}
	return tn
}

// wideIPFor finds the wide IP answering a query of type qt for qname: the
// one of the query's type, else the name's CNAME wide IP (a CNAME answers
// every type). some is a wide IP of the name when there is one of any type
// (the name exists: NODATA rather than NXDOMAIN), w nil when none answers.
func (p *plan) wideIPFor(qname string, qt uint16) (w, some *wideIP) {
	if t, ok := typeOfQuery(qt); ok {
		if t == TypeA {
			w = p.lookupName(qname)
		} else {
			w = p.typed[t.index()].lookup(qname)
		}
	}
	if w == nil {
		w = p.typed[TypeCNAME.index()].lookup(qname)
	}
	if w != nil {
		return w, w
	}
	for i := range Types {
		var x *wideIP
		if i == 0 {
			x = p.lookupName(qname)
		} else {
			x = p.typed[i].lookup(qname)
		}
		if x != nil {
			return nil, x
		}
	}
	return nil, nil
}

// nameMember is a member of a CNAME, MX, SRV, NAPTR, SVCB or HTTPS pool.
type nameMember struct {
	cfg    PoolMember
	target string // fqdn, lower case
	rt     *memberRT
	ratio  int
	wip    *wideIP // the A or AAAA wide IP the target names, if any
	// addr is what a topology record's server side (subnet, region,
	// geolocation) matches for load-balancing-mode topology: an SVCB or
	// HTTPS member's first ipv4hint, else its first ipv6hint [M]; the
	// zero Addr for the other name members, matched by pool only.
	addr netip.Addr
	// svcb are an SVCB or HTTPS member's SvcParams in key order, built
	// once at compile time and shared (read only) by every answer.
	svcb []dns.SVCBKeyValue
}

func nameState(m *nameMember) (bool, string) {
	if m.cfg.Disabled {
		return false, reasonMemberOff
	}
	if m.wip != nil {
		if ok, _ := wideIPState(m.wip); !ok {
			return false, reasonTargetDown
		}
	}
	return true, reasonAvailable
}

const reasonTargetDown = "The member's wide IP is unavailable"

// compileNames links name members to the A and AAAA wide IPs their
// targets name, once every wide IP is compiled.
func (p *plan) compileNames() {
	for _, pl := range p.poolList {
		for _, m := range pl.names {
			if m.cfg.StaticTarget {
				continue
			}
			if w := p.lookupName(m.target); w != nil {
				m.wip = w
			} else if w := p.typed[TypeAAAA.index()].lookup(m.target); w != nil {
				m.wip = w
			}
		}
	}
}

// resolveNames runs a name pool's methods. Round robin, ratio, global
// availability, static-persistence (by the masked LDNS and the target,
// as address pools hash the member's name) and topology (by the
// member's hint address and its pool: nameMember.addr) choose among
// names; return-to-dns, drop-packet and none act as in address pools;
// the other methods need what names do not have (metrics) and pass to
// the next level.
func (s *Server) resolveNames(rq *request, pl *pool, d *decision) {
	var cands []*nameMember
	for _, m := range pl.names {
		if ok, _ := nameState(m); ok {
			cands = append(cands, m)
		}
	}
	if len(cands) < pl.minUp {
		cands = nil
	}
	for level, mode := range [3]Mode{pl.mode, pl.alt, pl.fb} {
		if len(cands) == 0 {
			break
		}
		i := -1
		switch mode {
		case ReturnToDNS:
			pl.rt.returnToDNS.Inc(0)
			d.out = outReturnToDNS
			return
		case DropPacket:
			pl.rt.dropped.Inc(0)
			d.out = outDrop
			return
		case RoundRobin:
			i = int((pl.rt.rr.Add(1) - 1) % uint64(len(cands)))
		case GlobalAvailability:
			i = 0
		case StaticPersistence:
			i = staticHRW(rq, len(cands), func(k int) string { return cands[k].target })
		case Topology:
			i = pickNameTopology(rq, pl, cands)
		case Ratio:
			total := 0
			for _, m := range cands {
				total += m.ratio
			}
			x := int((pl.rt.rr.Add(1) - 1) % uint64(total))
			for k, m := range cands {
				if x < m.ratio {
					i = k
					break
				}
				x -= m.ratio
			}
		}
		if i < 0 {
			continue
		}
		d.out, d.pool, d.member, d.level, d.ttl = outAnswer, pl, nil, level, pl.ttl
		d.targets = append(d.targets[:0], cands[i])
		for k := 1; k < len(cands) && len(d.targets) < pl.maxAnswers && pl.typ != TypeCNAME && !pl.alias; k++ {
			d.targets = append(d.targets, cands[(i+k)%len(cands)])
		}
		countLevel(pl.rt, cands[i].rt, level, 0)
		return
	}
	d.out = outNone
}

// nameRRs are the records of a name decision, owned by qname.
func nameRRs(t RRType, qname string, ttl uint32, ms []*nameMember) []dns.RR {
	out := make([]dns.RR, 0, len(ms))
	for _, m := range ms {
		hdr := dns.RR_Header{Name: qname, Class: dns.ClassINET, Ttl: ttl, Rrtype: t.qtype()}
		switch t {
		case TypeCNAME:
			out = append(out, &dns.CNAME{Hdr: hdr, Target: m.target})
		case TypeMX:
			out = append(out, &dns.MX{Hdr: hdr, Preference: m.cfg.Priority, Mx: m.target})
		case TypeSRV:
			out = append(out, &dns.SRV{Hdr: hdr, Priority: m.cfg.Priority, Weight: m.cfg.Weight, Port: m.cfg.Port, Target: m.target})
		case TypeNAPTR:
			out = append(out, &dns.NAPTR{Hdr: hdr, Order: uint16(m.cfg.Order), Preference: m.cfg.Preference, Flags: m.cfg.Flags, Service: m.cfg.Service, Replacement: m.target})
		case TypeSVCB:
			out = append(out, &dns.SVCB{Hdr: hdr, Priority: m.cfg.Priority, Target: m.target, Value: m.svcb})
		case TypeHTTPS:
			out = append(out, &dns.HTTPS{SVCB: dns.SVCB{Hdr: hdr, Priority: m.cfg.Priority, Target: m.target, Value: m.svcb}})
		}
	}
	return out
}

func typeErr(kind string, t RRType, name, format string, args ...any) error {
	return fmt.Errorf("gtm %s %s %s: %s", kind, defType(t), name, fmt.Sprintf(format, args...))
}

// decidedNames builds the answer of a CNAME, MX, SRV, NAPTR, SVCB or
// HTTPS wide IP: its records (the resolver asks for a CNAME target's
// addresses itself); an SVCB or HTTPS answer carries its targets'
// addresses in the additional section (svcb.go).
func (s *Server) decidedNames(p *plan, rq *request, m *dns.Msg, qname string, q dns.Question, opt *dns.OPT, ecs *dns.EDNS0_SUBNET, udp bool, w *wideIP, d *decision) *dns.Msg {
	m.Authoritative = true
	m.Answer = append(m.Answer, nameRRs(w.typ, q.Name, d.ttl, d.targets)...)
	if w.typ == TypeSVCB || w.typ == TypeHTTPS {
		s.svcbAdditional(p, rq, m, qname, d.targets)
	}
	if len(m.Answer) == 0 {
		if z := p.zoneFor(qname); z != nil {
			m.Ns = append(m.Ns, z.Negative())
		}
	}
	return s.finishMsg(m, opt, ecs, udp)
}

// pickNameTopology is load-balancing-mode topology among a name pool's
// members, as pickTopology among an address pool's: the highest score of
// the records matching the LDNS and the member (its hint address, its
// pool), ties taking turns, a zero score left out under
// topology-allow-zero-scores no.
func pickNameTopology(rq *request, pl *pool, cands []*nameMember) int {
	return pickBestScore(pl, len(cands), rq.plan.settings.TopologyDenyZeroScores, func(i int) int {
		sc, _ := rq.plan.topoScore(rq.topoClient(), topoTarget{addr: cands[i].addr, pool: pl.full}, rq.geoLDNS())
		return sc
	})
}
