package dnssec

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func testRing(t *testing.T) (*Keyring, *clock) {
	t.Helper()
	c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	kr := NewKeyring()
	kr.Now = c.now
	return kr, c
}

func rsaKey(t *testing.T) *rsa.PrivateKey {
	t.Helper()
	k, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// zoneKeys is example.com. with a manual RSA/SHA-256 ZSK and an
// automatic ECDSA KSK, as a BIG-IP user would set them up.
func zoneKeys(t *testing.T) []ZoneConfig {
	return []ZoneConfig{{Name: "Example.COM", Keys: []*KeyConfig{
		{Name: "/Common/example.com_zsk", Algorithm: dns.RSASHA256, Bits: 1024, TTL: 86400, Manual: true, Private: rsaKey(t),
			Validity: 7 * 24 * time.Hour, Publication: 4*24*time.Hour + 16*time.Hour},
		{Name: "/Common/example.com_ksk", KSK: true, Algorithm: dns.ECDSAP256SHA256, TTL: 86400,
			Rollover: 340 * 24 * time.Hour, Expiration: 365 * 24 * time.Hour,
			Validity: 7 * 24 * time.Hour, Publication: 4*24*time.Hour + 16*time.Hour},
	}}}
}

// names is a zone's contents as the signer asks for them.
type names struct {
	types map[string][]uint16
	ents  []string // empty non-terminals
	ds    map[string][]dns.RR
}

func (n names) TypesAt(name string) []uint16 { return n.types[name] }
func (n names) Exists(name string) bool {
	return len(n.types[name]) > 0 || slices.Contains(n.ents, name)
}
func (n names) RRset(name string, t uint16) []dns.RR {
	if t == dns.TypeDS {
		return n.ds[name]
	}
	return nil
}

func rr(t *testing.T, s string) dns.RR {
	t.Helper()
	x, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func query(name string, qtype uint16) *dns.Msg {
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	return q
}

// chain checks DS -> KSK -> DNSKEY RRset -> ZSK and returns the DNSKEYs
// by key tag.
func chain(t *testing.T, s *Signer, apex string, now time.Time) map[uint16]*dns.DNSKEY {
	t.Helper()
	keys := s.DNSKEYs(apex)
	byTag := map[uint16]*dns.DNSKEY{}
	for _, k := range keys {
		dk := k.(*dns.DNSKEY)
		byTag[dk.KeyTag()] = dk
	}
	ds := s.DS(apex)
	if len(ds) == 0 {
		t.Fatal("no DS for the parent")
	}
	for _, d := range ds {
		k := byTag[d.KeyTag]
		if k == nil || k.Flags&dns.SEP == 0 {
			t.Fatalf("DS %v names no key-signing key", d)
		}
		if want := k.ToDS(d.DigestType); !strings.EqualFold(want.Digest, d.Digest) {
			t.Fatalf("DS digest %s, the KSK gives %s", d.Digest, want.Digest)
		}
	}
	// The DNSKEY RRset as a resolver gets it, signed by the KSK.
	m := query(apex, dns.TypeDNSKEY)
	m.Response = true
	s.Sign(m, true, nil)
	verifyAll(t, m.Answer, byTag, now, true)
	return byTag
}

// verifyAll verifies every RRSIG in rrs over its RRset; ksk says the
// signer must be a key-signing key (the DNSKEY RRset).
func verifyAll(t *testing.T, rrs []dns.RR, keys map[uint16]*dns.DNSKEY, now time.Time, ksk bool) int {
	t.Helper()
	n := 0
	for _, x := range rrs {
		sig, ok := x.(*dns.RRSIG)
		if !ok {
			continue
		}
		var set []dns.RR
		for _, y := range rrs {
			if y.Header().Rrtype == sig.TypeCovered && strings.EqualFold(y.Header().Name, sig.Hdr.Name) {
				set = append(set, y)
			}
		}
		k := keys[sig.KeyTag]
		if k == nil {
			t.Fatalf("RRSIG %v: no DNSKEY of tag %d", sig, sig.KeyTag)
		}
		if ksk != (k.Flags&dns.SEP != 0) {
			t.Fatalf("RRSIG over %s by key %d (flags %d)", dns.TypeToString[sig.TypeCovered], k.KeyTag(), k.Flags)
		}
		if err := sig.Verify(k, set); err != nil {
			t.Fatalf("RRSIG over %s %s: %v", sig.Hdr.Name, dns.TypeToString[sig.TypeCovered], err)
		}
		if !sig.ValidityPeriod(now) {
			t.Fatalf("RRSIG over %s not valid now", sig.Hdr.Name)
		}
		n++
	}
	return n
}

func TestSign(t *testing.T) {
	kr, clk := testRing(t)
	s, err := kr.Build(zoneKeys(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := chain(t, s, "example.com.", clk.t)
	soa := "example.com. 3600 IN SOA ns1.example.com. hostmaster.example.com. 1 7200 900 1209600 300"
	ds := rr(t, "signed.example.com. 3600 IN DS 12345 13 2 "+strings.Repeat("AB", 32))
	zone := names{types: map[string][]uint16{
		"www.example.com.":      {dns.TypeA},
		"example.com.":          {dns.TypeSOA, dns.TypeNS, dns.TypeMX},
		"ns1.example.com.":      {dns.TypeA},
		"deep.er.example.com.":  {dns.TypeTXT},
		"sub.example.com.":      {dns.TypeNS},
		"ns.sub.example.com.":   {dns.TypeA},
		"signed.example.com.":   {dns.TypeNS, dns.TypeDS},
		"mail.sub.example.com.": {dns.TypeA},
	}, ents: []string{"er.example.com."}, ds: map[string][]dns.RR{"signed.example.com.": {ds}}}
	for _, tt := range []struct {
		name     string
		q        *dns.Msg
		rcode    int
		answer   []string
		ns       []string
		extra    []string
		do       bool
		wantSigs int // RRSIGs, every one verified
		// the NSEC3 records: NXDOMAIN's closest encloser, NODATA's and
		// a referral's matching record with its bitmap
		wantNSEC3 int
		encloser  string
		wantTypes []uint16
		unsigned  []string // owners in the additional section left unsigned
	}{
		{name: "A with DO", q: query("www.example.com.", dns.TypeA), answer: []string{"www.example.com. 30 IN A 192.0.2.1", "www.example.com. 30 IN A 192.0.2.2"}, do: true, wantSigs: 1},
		{name: "question case kept", q: query("WwW.Example.com.", dns.TypeA), answer: []string{"WwW.Example.com. 30 IN A 192.0.2.1"}, do: true, wantSigs: 1},
		{name: "no DO, no signature", q: query("www.example.com.", dns.TypeA), answer: []string{"www.example.com. 30 IN A 192.0.2.1"}},
		{name: "out of the zone", q: query("www.example.net.", dns.TypeA), answer: []string{"www.example.net. 30 IN A 192.0.2.1"}, do: true},
		{name: "CNAME out of the zone", q: query("alias.example.com.", dns.TypeA), answer: []string{"alias.example.com. 30 IN CNAME www.example.net.", "www.example.net. 30 IN A 192.0.2.9"}, do: true, wantSigs: 1},
		{name: "NXDOMAIN", q: query("nothing.example.com.", dns.TypeA), rcode: dns.RcodeNameError, ns: []string{soa}, do: true, wantSigs: 4, wantNSEC3: 3, encloser: "example.com."},
		{name: "NXDOMAIN two below", q: query("a.b.example.com.", dns.TypeA), rcode: dns.RcodeNameError, ns: []string{soa}, do: true, wantSigs: 4, wantNSEC3: 3, encloser: "example.com."},
		{name: "NXDOMAIN below a name", q: query("x.www.example.com.", dns.TypeA), rcode: dns.RcodeNameError, ns: []string{soa}, do: true, wantSigs: 4, wantNSEC3: 3, encloser: "www.example.com."},
		{name: "NXDOMAIN below an empty non-terminal", q: query("a.b.er.example.com.", dns.TypeA), rcode: dns.RcodeNameError, ns: []string{soa}, do: true, wantSigs: 4, wantNSEC3: 3, encloser: "er.example.com."},
		{name: "NXDOMAIN of the wildcard itself", q: query("*.example.com.", dns.TypeA), rcode: dns.RcodeNameError, ns: []string{soa}, do: true, wantSigs: 3, wantNSEC3: 2, encloser: "example.com."},
		{name: "NODATA", q: query("www.example.com.", dns.TypeAAAA), ns: []string{soa}, do: true, wantSigs: 2, wantNSEC3: 1, wantTypes: []uint16{dns.TypeA, dns.TypeRRSIG}},
		{name: "NODATA at the apex", q: query("example.com.", dns.TypeTXT), ns: []string{soa}, do: true, wantSigs: 2, wantNSEC3: 1,
			wantTypes: []uint16{dns.TypeNS, dns.TypeSOA, dns.TypeMX, dns.TypeRRSIG, dns.TypeDNSKEY, dns.TypeNSEC3PARAM}},
		{name: "NODATA, empty non-terminal", q: query("er.example.com.", dns.TypeA), ns: []string{soa}, do: true, wantSigs: 2, wantNSEC3: 1, wantTypes: []uint16{}},
		{name: "NODATA, DS of an unsigned delegation", q: query("sub.example.com.", dns.TypeDS), ns: []string{soa}, do: true, wantSigs: 2, wantNSEC3: 1, wantTypes: []uint16{dns.TypeNS}},
		{name: "referral proves no DS", q: query("www.sub.example.com.", dns.TypeA), ns: []string{"sub.example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns.sub.example.com. 3600 IN A 192.0.2.53"}, do: true, wantSigs: 1, wantNSEC3: 1, wantTypes: []uint16{dns.TypeNS}, unsigned: []string{"ns.sub.example.com."}},
		{name: "referral with a DS", q: query("www.signed.example.com.", dns.TypeA), ns: []string{"signed.example.com. 3600 IN NS ns.example.net."}, do: true, wantSigs: 1},
		{name: "apex NS, addresses signed", q: query("example.com.", dns.TypeNS), answer: []string{"example.com. 3600 IN NS ns1.example.com.", "example.com. 3600 IN NS ns.sub.example.com."},
			extra: []string{"ns1.example.com. 3600 IN A 192.0.2.53", "ns1.example.com. 3600 IN AAAA 2001:db8::53", "ns.sub.example.com. 3600 IN A 192.0.2.54"},
			do:    true, wantSigs: 3, unsigned: []string{"ns.sub.example.com."}},
		{name: "MX target below a cut, unsigned", q: query("example.com.", dns.TypeMX), answer: []string{"example.com. 3600 IN MX 10 mail.sub.example.com."},
			extra: []string{"mail.sub.example.com. 3600 IN A 192.0.2.25"}, do: true, wantSigs: 1, unsigned: []string{"mail.sub.example.com."}},
		{name: "additional record out of the zone", q: query("example.com.", dns.TypeMX), answer: []string{"example.com. 3600 IN MX 10 mx.example.net."},
			extra: []string{"mx.example.net. 3600 IN A 192.0.2.25"}, do: true, wantSigs: 1, unsigned: []string{"mx.example.net."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := new(dns.Msg)
			m.SetReply(tt.q)
			m.Rcode = tt.rcode
			m.Authoritative = len(tt.answer) > 0 || tt.rcode != 0 || len(tt.ns) > 0 && strings.Contains(tt.ns[0], "SOA")
			for _, s := range tt.answer {
				m.Answer = append(m.Answer, rr(t, s))
			}
			for _, s := range tt.ns {
				m.Ns = append(m.Ns, rr(t, s))
			}
			for _, s := range tt.extra {
				m.Extra = append(m.Extra, rr(t, s))
			}
			m.SetEdns0(1232, tt.do)
			s.Sign(m, tt.do, zone)
			got := verifyAll(t, m.Answer, keys, clk.t, false) + verifyAll(t, m.Ns, keys, clk.t, false) + verifyAll(t, m.Extra, keys, clk.t, false)
			if got != tt.wantSigs {
				t.Fatalf("%d signatures, want %d:\n%v", got, tt.wantSigs, m)
			}
			if opt := m.IsEdns0(); opt == nil || m.Extra[len(m.Extra)-1] != opt {
				t.Fatalf("the OPT record is not last:\n%v", m)
			}
			for _, x := range m.Extra {
				if slices.Contains(tt.unsigned, strings.ToLower(x.Header().Name)) && x.Header().Rrtype == dns.TypeRRSIG {
					t.Fatalf("glue or a record out of the zone signed: %v", x)
				}
			}
			var nsec3s []*dns.NSEC3
			for _, x := range m.Ns {
				if x.Header().Rrtype == dns.TypeNSEC {
					t.Fatalf("an NSEC record: %v", x)
				}
				if n, ok := x.(*dns.NSEC3); ok {
					if n.Hash != dns.SHA1 || n.Flags != 0 || n.Iterations != 0 || n.Salt != "" || len(n.NextDomain) != 32 {
						t.Fatalf("NSEC3 parameters: %v", n)
					}
					if n.Hdr.Ttl != 300 && tt.rcode == dns.RcodeNameError {
						t.Fatalf("NSEC3 TTL %d, want the SOA's minimum", n.Hdr.Ttl)
					}
					nsec3s = append(nsec3s, n)
				}
			}
			if len(nsec3s) != tt.wantNSEC3 {
				t.Fatalf("%d NSEC3, want %d:\n%v", len(nsec3s), tt.wantNSEC3, m)
			}
			qname := strings.ToLower(tt.q.Question[0].Name)
			find := func(f func(*dns.NSEC3) bool) *dns.NSEC3 {
				for _, n := range nsec3s {
					if f(n) {
						return n
					}
				}
				return nil
			}
			switch {
			case tt.rcode == dns.RcodeNameError:
				// RFC 5155 7.2.2: the closest encloser matched, the next
				// closer name and the wildcard covered, qname not matched.
				ce := find(func(n *dns.NSEC3) bool { return n.Match(tt.encloser) })
				if ce == nil {
					t.Fatalf("no NSEC3 matches the closest encloser %s: %v", tt.encloser, nsec3s)
				}
				if slices.Contains(ce.TypeBitMap, dns.TypeNS) && !slices.Contains(ce.TypeBitMap, dns.TypeSOA) {
					t.Fatalf("the closest encloser is a delegation: %v", ce)
				}
				labels := dns.SplitDomainName(qname)
				closer := dns.Fqdn(strings.Join(labels[len(labels)-dns.CountLabel(tt.encloser)-1:], "."))
				for _, name := range []string{closer, "*." + tt.encloser} {
					if find(func(n *dns.NSEC3) bool { return n.Cover(name) && !n.Match(name) }) == nil {
						t.Fatalf("no NSEC3 covers %s: %v", name, nsec3s)
					}
				}
				if n := find(func(n *dns.NSEC3) bool { return n.Match(qname) }); n != nil {
					t.Fatalf("an NSEC3 matches the name denied: %v", n)
				}
				// Minimal: each covering span is two hashes wide.
				for _, n := range nsec3s {
					if n != ce && n.Cover(tt.encloser) {
						t.Fatalf("a covering NSEC3 also covers the closest encloser: %v", n)
					}
				}
			case tt.wantTypes != nil:
				name := qname
				if cut := delegation(m.Ns, "example.com."); cut != "" {
					name = cut
				}
				n := find(func(n *dns.NSEC3) bool { return n.Match(name) })
				if n == nil || !slices.Equal(n.TypeBitMap, tt.wantTypes) {
					t.Fatalf("NSEC3 %v, want one matching %s with %v", nsec3s, name, tt.wantTypes)
				}
				if n.NextDomain != b32(step(hashOf(name), 1)) {
					t.Fatalf("the matching NSEC3 spans more than its hash: %v", n)
				}
			}
			if _, err := m.Pack(); err != nil {
				t.Fatalf("the signed answer does not pack: %v", err)
			}
		})
	}
}

// NSEC3 white lies are minimal: the record matching a name spans its
// hash alone, the one covering a name H-1 to H+1, whatever the hash
// (wrapping around at both ends).
func TestNSEC3Span(t *testing.T) {
	z := strings.Repeat("00", 17)
	f := strings.Repeat("ff", 17)
	for _, tt := range []struct{ h, prev, next string }{
		{"000001" + z, "000000" + f, "000001" + z[:32] + "01"},
		{"000000" + z, "ffffff" + f, "000000" + z[:32] + "01"},
		{"ffffff" + f, "ffffff" + f[:32] + "fe", "000000" + z},
		{"12ffff" + f, "12ffff" + f[:32] + "fe", "130000" + z},
		{"1200ff" + z, "1200fe" + f, "1200ff" + z[:32] + "01"},
	} {
		h, _ := hex.DecodeString(tt.h)
		if prev, next := hex.EncodeToString(step(h, -1)), hex.EncodeToString(step(h, 1)); prev != tt.prev || next != tt.next {
			t.Fatalf("%s: %s .. %s, want %s .. %s", tt.h, prev, next, tt.prev, tt.next)
		}
		if hex.EncodeToString(h) != tt.h {
			t.Fatalf("step changed its argument: %x", h)
		}
	}
	// Through the resolver's eyes: covering a name holds its hash and
	// not the hashes next to it.
	for _, name := range []string{"a.example.com.", "nothere.example.com.", "*.example.com."} {
		c := covering("example.com.", name, 60)
		m := matching("example.com.", name, 60, nil)
		if !c.Cover(name) || c.Match(name) || !m.Match(name) || m.NextDomain != c.NextDomain {
			t.Fatalf("%s: covering %v, matching %v", name, c, m)
		}
	}
	if NSEC3Hash := dns.HashName("example.com.", dns.SHA1, 0, ""); !strings.EqualFold(b32(hashOf("EXAMPLE.com.")), NSEC3Hash) {
		t.Fatalf("hash %s, want %s", b32(hashOf("EXAMPLE.com.")), NSEC3Hash)
	}
}

func TestDNSKEYQuery(t *testing.T) {
	kr, _ := testRing(t)
	s, err := kr.Build(zoneKeys(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		do    bool
		sigs  int
		rcode int // what the zones answered: NODATA, or REFUSED where no static zone holds the apex
	}{{false, 0, dns.RcodeSuccess}, {true, 1, dns.RcodeSuccess}, {true, 1, dns.RcodeRefused}} {
		m := new(dns.Msg)
		m.SetReply(query("example.com.", dns.TypeDNSKEY))
		m.Rcode = tt.rcode
		if tt.rcode == dns.RcodeSuccess {
			m.Ns = append(m.Ns, rr(t, "example.com. 300 IN SOA ns1.example.com. h.example.com. 1 7200 900 1209600 300"))
		}
		s.Sign(m, tt.do, nil)
		n, sigs := 0, 0
		for _, x := range m.Answer {
			switch x.(type) {
			case *dns.DNSKEY:
				n++
			case *dns.RRSIG:
				sigs++
			}
		}
		if n != 2 || sigs != tt.sigs || len(m.Ns) != 0 || m.Rcode != dns.RcodeSuccess {
			t.Fatalf("do %v: %d DNSKEY, %d RRSIG, %d authority records:\n%v", tt.do, n, sigs, len(m.Ns), m)
		}
	}
}

func TestRollover(t *testing.T) {
	kr, clk := testRing(t)
	day := 24 * time.Hour
	zs := []ZoneConfig{{Name: "example.com.", Keys: []*KeyConfig{
		{Name: "zsk", Algorithm: dns.ECDSAP256SHA256, TTL: 3600, Rollover: 21 * day, Expiration: 30 * day, Validity: 7 * day, Publication: 4 * day},
		{Name: "ksk", KSK: true, Algorithm: dns.ECDSAP256SHA256, TTL: 3600, Rollover: 340 * day, Expiration: 365 * day, Validity: 7 * day, Publication: 4 * day},
	}}}
	s, err := kr.Build(zs, nil)
	if err != nil {
		t.Fatal(err)
	}
	signer := func() uint16 {
		m := new(dns.Msg)
		m.SetReply(query("www.example.com.", dns.TypeA))
		m.Answer = append(m.Answer, rr(t, "www.example.com. 30 IN A 192.0.2.1"))
		s.Sign(m, true, nil)
		keys := chain(t, s, "example.com.", clk.t)
		if verifyAll(t, m.Answer, keys, clk.t, false) != 1 {
			t.Fatalf("not signed: %v", m)
		}
		return m.Answer[1].(*dns.RRSIG).KeyTag
	}
	ids := func() []int {
		var out []int
		for _, g := range kr.Generations("zsk") {
			out = append(out, g.ID)
		}
		return out
	}
	first := signer()
	for _, step := range []struct {
		at      time.Duration
		gens    []int
		sameTag bool
	}{
		{day, []int{0}, true},
		{21*day + time.Minute, []int{0, 1}, true},  // generation 1 published, not signing yet
		{21*day + 2*time.Hour, []int{0, 1}, false}, // past its TTL it signs
		{30*day + time.Minute, []int{1}, false},    // generation 0 expired
		{42*day + time.Minute, []int{1, 2}, false},
	} {
		clk.t = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Add(step.at)
		tag := signer()
		if got := ids(); !slices.Equal(got, step.gens) {
			t.Fatalf("at %v generations %v, want %v", step.at, got, step.gens)
		}
		if (tag == first) != step.sameTag {
			t.Fatalf("at %v signed by %d (first %d), same wanted %v", step.at, tag, first, step.sameTag)
		}
	}
	// A commit that keeps the keys keeps their generations.
	if _, err := kr.Build(zs, nil); err != nil {
		t.Fatal(err)
	}
	if got := ids(); !slices.Equal(got, []int{1, 2}) {
		t.Fatalf("after a commit, generations %v", got)
	}
}

func TestSignatureCache(t *testing.T) {
	kr, clk := testRing(t)
	s, err := kr.Build(zoneKeys(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	sigOf := func(name string) *dns.RRSIG {
		m := new(dns.Msg)
		m.SetReply(query(name, dns.TypeA))
		m.Answer = append(m.Answer, rr(t, name+" 30 IN A 192.0.2.1"))
		s.Sign(m, true, nil)
		return m.Answer[1].(*dns.RRSIG)
	}
	a := sigOf("www.example.com.")
	clk.t = clk.t.Add(time.Hour)
	if b := sigOf("WWW.example.com."); b.Inception != a.Inception || b.Signature != a.Signature || b.Hdr.Name != "WWW.example.com." {
		t.Fatalf("within the publication period the signature is not reused: %v / %v", a, b)
	}
	clk.t = clk.t.Add(5 * 24 * time.Hour)
	if b := sigOf("www.example.com."); b.Inception == a.Inception {
		t.Fatalf("past the publication period the signature is reused: %v", b)
	}
}

func TestBuildRefuses(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name  string
		zones []ZoneConfig
		want  string
	}{
		{"RSA key, ECDSA algorithm", []ZoneConfig{{Name: "a.", Keys: []*KeyConfig{{Name: "k", Manual: true, Private: rsaKey(t), Algorithm: dns.ECDSAP256SHA256}}}}, "needs an ECDSA one"},
		{"P-256 key, P-384 algorithm", []ZoneConfig{{Name: "a.", Keys: []*KeyConfig{{Name: "k", Manual: true, Private: ec, Algorithm: dns.ECDSAP384SHA384}}}}, "does not fit"},
		{"zone twice", []ZoneConfig{{Name: "a."}, {Name: "A"}}, "defined twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			kr, _ := testRing(t)
			if _, err := kr.Build(tt.zones, nil); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want %q", err, tt.want)
			}
		})
	}
}

// A manual ECDSA key from a key-file signs as a generated one does.
func TestManualECDSA(t *testing.T) {
	for _, tt := range []struct {
		curve elliptic.Curve
		alg   uint8
	}{{elliptic.P256(), dns.ECDSAP256SHA256}, {elliptic.P384(), dns.ECDSAP384SHA384}} {
		ec, err := ecdsa.GenerateKey(tt.curve, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		kr, clk := testRing(t)
		s, err := kr.Build([]ZoneConfig{{Name: "example.com.", Keys: []*KeyConfig{
			{Name: "k", KSK: true, Manual: true, Private: ec, Algorithm: tt.alg, TTL: 300, Validity: time.Hour, Publication: time.Minute}}}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		keys := chain(t, s, "example.com.", clk.t)
		m := new(dns.Msg)
		m.SetReply(query("www.example.com.", dns.TypeA))
		m.Answer = append(m.Answer, rr(t, "www.example.com. 30 IN A 192.0.2.1"))
		s.Sign(m, true, nil)
		// The one key signs everything: a KSK alone is also the ZSK.
		if n := verifyAll(t, m.Answer, keys, clk.t, true); n != 1 {
			t.Fatalf("algorithm %d: %d signatures: %v", tt.alg, n, m)
		}
	}
}

// Automatic keys outlive a restart through the keyring's directory, so
// the DS record given to the parent stays right; new settings make a new
// key, and a key no zone uses any more is removed.
func TestKeysStored(t *testing.T) {
	dir := t.TempDir()
	zs := func(alg uint8) []ZoneConfig {
		return []ZoneConfig{{Name: "example.com.", Keys: []*KeyConfig{
			{Name: "/Common/ksk", KSK: true, Algorithm: alg, Bits: 1024, TTL: 3600, Rollover: time.Hour, Expiration: 2 * time.Hour, Validity: time.Hour, Publication: time.Minute}}}}
	}
	ds := func(kr *Keyring, z []ZoneConfig) string {
		s, err := kr.Build(z, nil)
		if err != nil {
			t.Fatal(err)
		}
		kr.Retain(s)
		return s.DS("example.com.")[1].String()
	}
	kr, clk := testRing(t)
	kr.SetDir(dir)
	first := ds(kr, zs(dns.ECDSAP256SHA256))
	for _, tt := range []struct {
		name string
		alg  uint8
		same bool
	}{{"restart", dns.ECDSAP256SHA256, true}, {"new algorithm", dns.RSASHA256, false}, {"back", dns.ECDSAP256SHA256, false}} {
		again := NewKeyring()
		again.Now = clk.now
		again.SetDir(dir)
		if got := ds(again, zs(tt.alg)); (got == first) != tt.same {
			t.Fatalf("%s: DS %s, before %s", tt.name, got, first)
		}
	}
	kr.Retain(nil)
	if left, _ := filepath.Glob(filepath.Join(dir, "*")); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// A key no enabled zone uses (its zone disabled) keeps its generations
// while it is configured; a commit without it forgets it.
func TestUnusedKeyKept(t *testing.T) {
	kr, _ := testRing(t)
	ksk := &KeyConfig{Name: "ksk", KSK: true, Algorithm: dns.ECDSAP256SHA256, TTL: 60, Validity: time.Hour, Publication: time.Minute}
	zone := []ZoneConfig{{Name: "example.com.", Keys: []*KeyConfig{ksk}}}
	first := ""
	for _, tt := range []struct {
		name  string
		zones []ZoneConfig
		keys  []*KeyConfig
		same  bool // the DS is the first one
	}{
		{"first", zone, []*KeyConfig{ksk}, true},
		{"zone disabled", nil, []*KeyConfig{ksk}, false},
		{"zone enabled again", zone, []*KeyConfig{ksk}, true},
		{"key deleted", nil, nil, false},
		{"key created again", zone, []*KeyConfig{ksk}, false},
	} {
		s, err := kr.Build(tt.zones, tt.keys)
		if err != nil {
			t.Fatal(err)
		}
		kr.Retain(s)
		if s.Empty() != (tt.zones == nil) {
			t.Fatalf("%s: empty %v", tt.name, s.Empty())
		}
		if tt.zones == nil {
			continue
		}
		ds := s.DS("example.com.")[0].String()
		if first == "" {
			first = ds
		}
		if (ds == first) != tt.same {
			t.Fatalf("%s: DS %s, first %s", tt.name, ds, first)
		}
	}
}

// Queries sign at once from several goroutines (run with -race): the
// key set and the signature cache are shared.
func TestSignConcurrent(t *testing.T) {
	kr, clk := testRing(t)
	s, err := kr.Build(zoneKeys(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	keys := chain(t, s, "example.com.", clk.t)
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 25; i++ {
				m := new(dns.Msg)
				name := fmt.Sprintf("h%d.example.com.", i%5)
				m.SetReply(query(name, dns.TypeA))
				a, _ := dns.NewRR(name + " 30 IN A 192.0.2.1")
				m.Answer = append(m.Answer, a)
				s.Sign(m, true, nil)
				if len(m.Answer) != 2 {
					errs <- fmt.Errorf("goroutine %d: not signed: %v", g, m)
					return
				}
				sig := m.Answer[1].(*dns.RRSIG)
				if err := sig.Verify(keys[sig.KeyTag], m.Answer[:1]); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
