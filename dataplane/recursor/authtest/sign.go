package authtest

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"sort"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// Signing is how a server signs the zones it holds, ahead of time, so
// that a validating resolver has a chain of trust to follow on loopback:
// each zone's key is Key(zone), derived from the zone's name, so that the
// servers of a parent and of its child (other processes, with tcpkit
// dnsauth) agree on the DS without exchanging anything.
type Signing struct {
	// NSEC3 denies with NSEC3 (SHA-1, no salt, no extra iteration,
	// RFC 9276) instead of NSEC.
	NSEC3 bool
	// Iterations are the NSEC3 records' extra iterations, to show a
	// resolver's limits (RFC 9276 §3.2).
	Iterations uint16
	// NSEC3Hash, when not 0, is the hash algorithm the NSEC3 records
	// claim (the names are hashed with SHA-1 all the same), to show a
	// resolver facing a hash it does not know.
	NSEC3Hash uint8
	// OptOut sets the NSEC3 records' Opt-Out flag and leaves the
	// unsigned delegations (cuts without DS) out of the chain (RFC 5155
	// §6), as a large delegation-only zone is signed.
	OptOut bool
	// Secure are the delegated child zones that are signed: their DS
	// (SHA-256 of Key(child)) is published at the cut. Other cuts are
	// proven unsigned (the NSEC or NSEC3 at the cut lists no DS).
	Secure []string
	// Broken are names whose signatures are spoilt (one byte changed).
	Broken []string
	// Expired are names whose signatures expired an hour ago.
	Expired []string
	// WrongKey signs the zones with another key than Key(zone), the one
	// their parent's DS names: the DNSKEY the DS points at is missing.
	WrongKey bool
	// NoWildcardProof leaves out of a wildcard's answers the proof that
	// the name asked does not exist, as a replayed wildcard would.
	NoWildcardProof bool
}

// Key is the Ed25519 key (flags 257, algorithm 15) a signed zone of
// authtest is signed with, derived from the zone's name.
func Key(zone string) (*dns.DNSKEY, ed25519.PrivateKey) {
	zone = strings.ToLower(dns.Fqdn(zone))
	seed := sha256.Sum256([]byte("openltm authtest " + zone))
	priv := ed25519.NewKeyFromSeed(seed[:])
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.ED25519,
		PublicKey: base64.StdEncoding.EncodeToString(priv.Public().(ed25519.PublicKey))}
	return k, priv
}

// DS is the DS record of Key(zone) (SHA-256), what a parent publishes
// and a resolver takes as a trust anchor.
func DS(zone string) *dns.DS {
	k, _ := Key(zone)
	return k.ToDS(dns.SHA256)
}

type sigKey struct {
	name    string
	covered uint16
}

// Sign signs every zone the server holds as sg says; queries with the DO
// bit then get the signatures, DS records at secure cuts and the NSEC or
// NSEC3 records proving a denial.
func (s *Server) Sign(sg Signing) error {
	now := time.Now()
	s.sigs = map[sigKey][]dns.RR{}
	s.denial = map[string][]dns.RR{}
	s.noWildProof = sg.NoWildcardProof
	for _, zone := range s.Zones() {
		zone = strings.ToLower(zone)
		key, priv := Key(zone)
		if sg.WrongKey {
			key, priv = Key("wrong." + zone)
			key.Hdr.Name = zone
		}
		s.rrs = append(s.rrs, key)
		for _, c := range sg.Secure {
			c = strings.ToLower(dns.Fqdn(c))
			if c != zone && dns.IsSubDomain(zone, c) && s.inZone(zone, c) {
				ds := DS(c)
				ds.Hdr.Ttl = 3600
				s.rrs = append(s.rrs, ds)
			}
		}
		// The zone's names, their types; cuts and what is below them.
		types := map[string][]uint16{}
		var cuts []string
		for _, rr := range s.rrs {
			o := strings.ToLower(rr.Header().Name)
			if rr.Header().Rrtype == dns.TypeNS && o != zone && s.inZone(zone, o) {
				cuts = append(cuts, o)
			}
		}
		below := func(o string) bool { // glue, or data under a cut
			for _, c := range cuts {
				if o != c && dns.IsSubDomain(c, o) {
					return true
				}
			}
			return false
		}
		isCut := func(o string) bool {
			for _, c := range cuts {
				if o == c {
					return true
				}
			}
			return false
		}
		sets := map[sigKey][]dns.RR{}
		var order []sigKey
		for _, rr := range s.rrs {
			o := strings.ToLower(rr.Header().Name)
			t := rr.Header().Rrtype
			if !s.inZone(zone, o) || below(o) {
				continue
			}
			if !hasType(types[o], t) {
				types[o] = append(types[o], t)
			}
			if isCut(o) && t != dns.TypeDS { // the child's NS are not signed here
				continue
			}
			k := sigKey{o, t}
			if sets[k] == nil {
				order = append(order, k)
			}
			sets[k] = append(sets[k], rr)
		}
		names := make([]string, 0, len(types))
		for n := range types {
			names = append(names, n)
		}
		var denial []dns.RR
		if sg.NSEC3 {
			type hashed struct {
				h, name string
			}
			var hs []hashed
			hash := uint8(dns.SHA1)
			if sg.NSEC3Hash != 0 {
				hash = sg.NSEC3Hash
			}
			var flags uint8
			if sg.OptOut {
				flags = 1
			}
			for _, n := range names {
				if sg.OptOut && isCut(n) && !hasType(types[n], dns.TypeDS) {
					continue
				}
				hs = append(hs, hashed{dns.HashName(n, dns.SHA1, sg.Iterations, ""), n})
			}
			sort.Slice(hs, func(i, j int) bool { return hs[i].h < hs[j].h })
			for i, h := range hs {
				ts := append([]uint16(nil), types[h.name]...)
				if !isCut(h.name) || hasType(ts, dns.TypeDS) {
					ts = append(ts, dns.TypeRRSIG)
				}
				if h.name == zone {
					ts = append(ts, dns.TypeNSEC3PARAM)
				}
				sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
				denial = append(denial, &dns.NSEC3{Hdr: dns.RR_Header{Name: strings.ToLower(h.h) + "." + zone, Rrtype: dns.TypeNSEC3, Class: dns.ClassINET, Ttl: 300},
					Hash: hash, Flags: flags, Iterations: sg.Iterations, HashLength: 20, NextDomain: hs[(i+1)%len(hs)].h, TypeBitMap: ts})
			}
		} else {
			sort.Slice(names, func(i, j int) bool { return CanonicalLess(names[i], names[j]) })
			for i, n := range names {
				ts := append([]uint16(nil), types[n]...)
				ts = append(ts, dns.TypeNSEC)
				if !isCut(n) || hasType(ts, dns.TypeDS) {
					ts = append(ts, dns.TypeRRSIG)
				}
				sort.Slice(ts, func(a, b int) bool { return ts[a] < ts[b] })
				denial = append(denial, &dns.NSEC{Hdr: dns.RR_Header{Name: n, Rrtype: dns.TypeNSEC, Class: dns.ClassINET, Ttl: 300},
					NextDomain: names[(i+1)%len(names)], TypeBitMap: ts})
			}
		}
		s.denial[zone] = denial
		for _, rr := range denial {
			k := sigKey{strings.ToLower(rr.Header().Name), rr.Header().Rrtype}
			order = append(order, k)
			sets[k] = []dns.RR{rr}
		}
		for _, k := range order {
			inception, expiration := now.Add(-time.Hour), now.Add(30*24*time.Hour)
			if contains(sg.Expired, k.name) {
				inception, expiration = now.Add(-48*time.Hour), now.Add(-time.Hour)
			}
			sig := &dns.RRSIG{Hdr: dns.RR_Header{Name: k.name, Rrtype: dns.TypeRRSIG, Class: dns.ClassINET, Ttl: sets[k][0].Header().Ttl},
				Algorithm: key.Algorithm, KeyTag: key.KeyTag(), SignerName: zone,
				Inception: uint32(inception.Unix()), Expiration: uint32(expiration.Unix())}
			if err := sig.Sign(priv, sets[k]); err != nil {
				return err
			}
			if contains(sg.Broken, k.name) {
				b, _ := base64.StdEncoding.DecodeString(sig.Signature)
				b[len(b)/2] ^= 0x55
				sig.Signature = base64.StdEncoding.EncodeToString(b)
			}
			s.sigs[sigKey{k.name, k.covered}] = append(s.sigs[sigKey{k.name, k.covered}], sig)
		}
	}
	return nil
}

func contains(list []string, name string) bool {
	for _, n := range list {
		if strings.EqualFold(dns.Fqdn(n), name) {
			return true
		}
	}
	return false
}

func hasType(ts []uint16, t uint16) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

// inZone reports whether name is in zone rather than in a deeper zone
// the server also holds.
func (s *Server) inZone(zone, name string) bool {
	if !dns.IsSubDomain(zone, name) {
		return false
	}
	for _, z := range s.Zones() {
		z = strings.ToLower(z)
		if len(z) > len(zone) && dns.IsSubDomain(zone, z) && dns.IsSubDomain(z, name) {
			return false
		}
	}
	return true
}

// CanonicalLess orders names as DNSSEC does (RFC 4034 §6.1): label by
// label from the root, each compared as lower-case octets.
func CanonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(strings.ToLower(a)), dns.SplitDomainName(strings.ToLower(b))
	for i, j := len(la)-1, len(lb)-1; i >= 0 && j >= 0; i, j = i-1, j-1 {
		if la[i] != lb[j] {
			return la[i] < lb[j]
		}
	}
	return len(la) < len(lb)
}

// signed completes m, the answer to a query with the DO bit in zone:
// the signatures of its record sets, and the denial of what it denies.
func (s *Server) signed(m *dns.Msg, zone, name string, qtype uint16, cut, wild string) {
	if s.sigs == nil {
		return
	}
	addSigs := func(sec []dns.RR) []dns.RR {
		seen := map[sigKey]bool{}
		out := sec
		for _, rr := range sec {
			owner := strings.ToLower(rr.Header().Name)
			k := sigKey{owner, rr.Header().Rrtype}
			if seen[k] {
				continue
			}
			seen[k] = true
			if wild != "" && owner == name { // the wildcard's signatures, as the name's
				for _, sig := range s.sigs[sigKey{wild, k.covered}] {
					c := dns.Copy(sig)
					c.Header().Name = rr.Header().Name
					out = append(out, c)
				}
				continue
			}
			out = append(out, s.sigs[k]...)
		}
		return out
	}
	denial := s.denial[zone]
	switch {
	case cut != "":
		var ds []dns.RR
		for _, rr := range s.rrs {
			if rr.Header().Rrtype == dns.TypeDS && strings.EqualFold(rr.Header().Name, cut) {
				ds = append(ds, rr)
			}
		}
		if len(ds) == 0 {
			ds = s.matching(denial, cut)
		}
		if len(ds) == 0 { // opt-out: the range covering the cut, and its parent's record
			if rr := covering(denial, cut); rr != nil {
				ds = append(s.matching(denial, cut[strings.IndexByte(cut, '.')+1:]), rr)
			}
		}
		m.Ns = append(m.Ns, addSigs(ds)...)
	case len(m.Answer) > 0:
		m.Answer = addSigs(m.Answer)
		if wild != "" && !s.noWildProof { // the name itself does not exist
			m.Ns = addSigs(append(m.Ns, s.wildProof(denial, wild, name)...))
		}
	default:
		var proof []dns.RR
		if m.Rcode == dns.RcodeNameError {
			proof = s.nxProof(denial, zone, name)
		} else if wild != "" { // a wildcard NODATA: the name's denial and the wildcard's
			proof = append(s.wildProof(denial, wild, name), s.matching(denial, wild)...)
		} else {
			proof = s.matching(denial, name)
		}
		m.Ns = addSigs(append(m.Ns, proof...))
	}
}

// wildProof proves that name, which wild answers for, does not exist:
// the NSEC covering it, or the NSEC3 covering the next closer name (with,
// for a NODATA, the NSEC3 matching the closest encloser).
func (s *Server) wildProof(denial []dns.RR, wild, name string) []dns.RR {
	ce := wild[2:]
	labels := dns.SplitDomainName(name)
	next := dns.Fqdn(strings.Join(labels[len(labels)-dns.CountLabel(ce)-1:], "."))
	rr := covering(denial, next)
	if rr == nil {
		return nil
	}
	if _, nsec := rr.(*dns.NSEC); nsec {
		return []dns.RR{covering(denial, name)}
	}
	return append(s.matching(denial, ce), rr)
}

// matching is the NSEC at name, or the NSEC3 whose hash is name's.
func (s *Server) matching(denial []dns.RR, name string) []dns.RR {
	for _, rr := range denial {
		switch v := rr.(type) {
		case *dns.NSEC:
			if strings.EqualFold(v.Hdr.Name, name) {
				return []dns.RR{v}
			}
		case *dns.NSEC3:
			if v.Match(name) {
				return []dns.RR{v}
			}
		}
	}
	return nil
}

// covering is the NSEC or NSEC3 whose span holds name.
func covering(denial []dns.RR, name string) dns.RR {
	for _, rr := range denial {
		switch v := rr.(type) {
		case *dns.NSEC:
			o, n := v.Hdr.Name, v.NextDomain
			if CanonicalLess(o, name) && (CanonicalLess(name, n) || !CanonicalLess(o, n)) {
				return v
			}
		case *dns.NSEC3:
			if v.Cover(name) {
				return v
			}
		}
	}
	return nil
}

// nxProof proves name does not exist: the record covering it and the one
// covering the wildcard at its closest encloser (NSEC), or the closest
// encloser proof (NSEC3: matching the encloser, covering the next closer
// name and the wildcard).
func (s *Server) nxProof(denial []dns.RR, zone, name string) []dns.RR {
	var out []dns.RR
	add := func(rr dns.RR) {
		if rr == nil {
			return
		}
		for _, x := range out {
			if x == rr {
				return
			}
		}
		out = append(out, rr)
	}
	// The closest encloser: the longest ancestor of name with records.
	ce, next := zone, name
	labels := dns.SplitDomainName(name)
	for i := 1; i < len(labels); i++ {
		anc := dns.Fqdn(strings.Join(labels[i:], "."))
		if !dns.IsSubDomain(zone, anc) {
			break
		}
		if s.exists(anc) {
			ce, next = anc, dns.Fqdn(strings.Join(labels[i-1:], "."))
			break
		}
	}
	if len(denial) > 0 {
		if _, nsec3 := denial[0].(*dns.NSEC3); nsec3 {
			add(s.firstOf(s.matching(denial, ce)))
			add(covering(denial, next))
			add(covering(denial, "*."+ce))
			return out
		}
	}
	add(covering(denial, name))
	add(covering(denial, "*."+ce))
	return out
}

func (s *Server) firstOf(rrs []dns.RR) dns.RR {
	if len(rrs) == 0 {
		return nil
	}
	return rrs[0]
}

// wildcard is the wildcard at name's closest encloser in zone, "" when
// there is none there.
func (s *Server) wildcard(zone, name string) string {
	labels := dns.SplitDomainName(name)
	for i := 1; i < len(labels); i++ {
		anc := strings.ToLower(dns.Fqdn(strings.Join(labels[i:], ".")))
		if !dns.IsSubDomain(zone, anc) {
			return ""
		}
		if s.exists(anc) || anc == zone {
			if w := "*." + anc; s.exists(w) {
				return w
			}
			return ""
		}
	}
	return ""
}

func (s *Server) exists(name string) bool {
	for _, rr := range s.rrs {
		if strings.EqualFold(rr.Header().Name, name) {
			return true
		}
	}
	return false
}
