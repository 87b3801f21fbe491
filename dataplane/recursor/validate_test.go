package recursor

import (
	"context"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// signedHierarchy starts a signed tree on 127.59.1.x:53: the root (NSEC)
// delegating com (NSEC) and net (NSEC3), both signed; under com,
// sec.com (signed), unsigned.com (no DS: insecure), bad.com (a spoilt
// signature on www, an expired one on old), nokey.com (signed with a key
// its DS does not name); under net, sec.net (signed, NSEC3) and
// unsigned.net.
// It returns the DNSKEY queries each server was asked, by address.
func signedHierarchy(t *testing.T) map[string]*atomic.Int64 {
	t.Helper()
	soa := func(z string) string {
		return z + " 3600 IN SOA ns." + strings.TrimPrefix(z, ".") + " h. 1 3600 600 86400 30"
	}
	type srv struct {
		addr string
		recs []string
		sg   *authtest.Signing
	}
	servers := []srv{
		{"127.59.1.1:53", []string{soa("."), ". 3600 IN NS a.root.", "a.root. 3600 IN A 127.59.1.1",
			"com. 3600 IN NS ns.com.", "ns.com. 3600 IN A 127.59.1.2", "net. 3600 IN NS ns.net.", "ns.net. 3600 IN A 127.59.1.8"},
			&authtest.Signing{Secure: []string{"com.", "net."}}},
		{"127.59.1.2:53", []string{soa("com."),
			"sec.com. 3600 IN NS ns.sec.com.", "ns.sec.com. 3600 IN A 127.59.1.3",
			"unsigned.com. 3600 IN NS ns.unsigned.com.", "ns.unsigned.com. 3600 IN A 127.59.1.4",
			"bad.com. 3600 IN NS ns.bad.com.", "ns.bad.com. 3600 IN A 127.59.1.5",
			"nokey.com. 3600 IN NS ns.nokey.com.", "ns.nokey.com. 3600 IN A 127.59.1.6"},
			&authtest.Signing{Secure: []string{"sec.com.", "bad.com.", "nokey.com."}}},
		{"127.59.1.8:53", []string{soa("net."),
			"sec.net. 3600 IN NS ns.sec.net.", "ns.sec.net. 3600 IN A 127.59.1.7",
			"unsigned.net. 3600 IN NS ns.unsigned.net.", "ns.unsigned.net. 3600 IN A 127.59.1.4"},
			&authtest.Signing{NSEC3: true, Secure: []string{"sec.net."}}},
		{"127.59.1.3:53", []string{soa("sec.com."), "ns.sec.com. 3600 IN A 127.59.1.3", "www.sec.com. 300 IN A 127.59.9.1",
			"alias.sec.com. 300 IN CNAME www.sec.net.", "plain.sec.com. 300 IN CNAME www.unsigned.com.",
			"wild.sec.com. 300 IN TXT w", "*.wild.sec.com. 300 IN A 127.59.9.10"},
			&authtest.Signing{}},
		{"127.59.1.4:53", []string{soa("unsigned.com."), soa("unsigned.net."), "www.unsigned.com. 300 IN A 127.59.9.4",
			"www.unsigned.net. 300 IN A 127.59.9.5"}, nil},
		{"127.59.1.5:53", []string{soa("bad.com."), "www.bad.com. 300 IN A 127.59.9.6", "old.bad.com. 300 IN A 127.59.9.7",
			"good.bad.com. 300 IN A 127.59.9.8", "w.bad.com. 300 IN TXT w", "*.w.bad.com. 300 IN A 127.59.9.12"},
			&authtest.Signing{Broken: []string{"www.bad.com."}, Expired: []string{"old.bad.com."}, NoWildcardProof: true}},
		{"127.59.1.6:53", []string{soa("nokey.com."), "www.nokey.com. 300 IN A 127.59.9.9"}, &authtest.Signing{WrongKey: true}},
		{"127.59.1.7:53", []string{soa("sec.net."), "ns.sec.net. 3600 IN A 127.59.1.7", "www.sec.net. 300 IN A 127.59.9.2",
			"wild.sec.net. 300 IN TXT w", "*.wild.sec.net. 300 IN A 127.59.9.11"},
			&authtest.Signing{NSEC3: true}},
	}
	out := map[string]*atomic.Int64{}
	for _, sv := range servers {
		s, err := authtest.New(sv.recs...)
		if err != nil {
			t.Fatal(err)
		}
		n := &atomic.Int64{}
		s.Log = func(_ string, qtype uint16, _ string, _ int) {
			if qtype == dns.TypeDNSKEY {
				n.Add(1)
			}
		}
		if sv.sg != nil {
			if err := s.Sign(*sv.sg); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Start(sv.addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", sv.addr, err)
		}
		t.Cleanup(s.Close)
		out[sv.addr] = n
	}
	return out
}

func validating(anchors ...string) Config {
	c := Config{RootHints: []netip.AddrPort{netip.MustParseAddrPort("127.59.1.1:53")}, IPv4: true, UDP: true, TCP: true,
		Randomize: true, Timeout: time.Second, Validate: true}
	if len(anchors) == 0 {
		anchors = []string{authtest.DS(".").String()}
	}
	var err error
	if c.TrustAnchors, err = ParseAnchors(anchors); err != nil {
		panic(err)
	}
	return c
}

// askFlags resolves name/qtype with the client's flags (do, ad, cd) and
// tells the rcode, whether AD came back, the answer's addresses and
// whether it carried RRSIGs.
func askFlags(t *testing.T, r *Resolver, name string, qtype uint16, flags string) string {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	if strings.Contains(flags, "do") {
		q.SetEdns0(1232, true)
	}
	q.AuthenticatedData = strings.Contains(flags, "ad")
	q.CheckingDisabled = strings.Contains(flags, "cd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	m, err := r.Resolve(ctx, q)
	if err != nil {
		if err == ErrBogus {
			return "SERVFAIL"
		}
		return "error " + err.Error()
	}
	parts := []string{dns.RcodeToString[m.Rcode]}
	if m.AuthenticatedData {
		parts = append(parts, "ad")
	}
	sigs := false
	for _, rr := range m.Answer {
		switch v := rr.(type) {
		case *dns.A:
			parts = append(parts, v.A.String())
		case *dns.RRSIG:
			sigs = true
		}
	}
	for _, rr := range m.Ns {
		switch rr.(type) {
		case *dns.RRSIG:
			sigs = true
		case *dns.NSEC:
			parts = append(parts, "nsec")
		case *dns.NSEC3:
			parts = append(parts, "nsec3")
		}
	}
	if sigs {
		parts = append(parts, "sigs")
	}
	return strings.Join(dedupe(parts), " ")
}

func dedupe(in []string) []string {
	var out []string
	for i, s := range in {
		if i == 0 || s != in[i-1] {
			out = append(out, s)
		}
	}
	return out
}

func TestValidate(t *testing.T) {
	signedHierarchy(t)
	otherRoot, _ := authtest.Key("other.")
	otherRoot.Hdr.Name = "."
	cases := []struct {
		name    string
		cfg     Config
		qname   string
		qtype   uint16
		flags   string
		want    string
		asked   string // asked before (cached keys and records)
		askedAs string
	}{
		{"secure", validating(), "www.sec.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.1 sigs", "", ""},
		{"secure without DO", validating(), "www.sec.com.", dns.TypeA, "", "NOERROR 127.59.9.1", "", ""},
		{"secure with AD only", validating(), "www.sec.com.", dns.TypeA, "ad", "NOERROR ad 127.59.9.1", "", ""},
		{"secure from the caches", validating(), "www.sec.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.1 sigs", "www.sec.com.", "do"},
		{"secure NSEC3 zone", validating(), "www.sec.net.", dns.TypeA, "do", "NOERROR ad 127.59.9.2 sigs", "", ""},
		{"CNAME across secure zones", validating(), "alias.sec.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.2 sigs", "", ""},
		{"CNAME into an insecure zone", validating(), "plain.sec.com.", dns.TypeA, "do", "NOERROR 127.59.9.4 sigs", "", ""},
		{"NXDOMAIN with NSEC", validating(), "nope.sec.com.", dns.TypeA, "do", "NXDOMAIN ad nsec sigs", "", ""},
		{"NODATA with NSEC", validating(), "www.sec.com.", dns.TypeTXT, "do", "NOERROR ad nsec sigs", "", ""},
		{"NXDOMAIN with NSEC3", validating(), "nope.sec.net.", dns.TypeA, "do", "NXDOMAIN ad nsec3 sigs", "", ""},
		{"NXDOMAIN deeper with NSEC3", validating(), "a.b.nope.sec.net.", dns.TypeA, "do", "NXDOMAIN ad nsec3 sigs", "", ""},
		{"NODATA with NSEC3", validating(), "www.sec.net.", dns.TypeTXT, "do", "NOERROR ad nsec3 sigs", "", ""},
		{"wildcard with its NSEC proof", validating(), "any.wild.sec.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.10 nsec sigs", "", ""},
		{"wildcard with its NSEC3 proof", validating(), "a.b.wild.sec.net.", dns.TypeA, "do", "NOERROR ad 127.59.9.11 nsec3 sigs", "", ""},
		{"wildcard without the proof", validating(), "any.w.bad.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"NXDOMAIN without DO", validating(), "nope.sec.com.", dns.TypeA, "", "NXDOMAIN", "", ""},
		{"DS of a secure zone", validating(), "sec.com.", dns.TypeDS, "do", "NOERROR ad sigs", "", ""},
		{"DS of a secure zone, its servers known", validating(), "sec.com.", dns.TypeDS, "do", "NOERROR ad sigs", "www.sec.com.", "do"},
		{"DS of an insecure zone, its servers known", validating(), "unsigned.com.", dns.TypeDS, "do", "NOERROR ad nsec sigs", "www.unsigned.com.", "do"},
		{"insecure delegation, NSEC", validating(), "www.unsigned.com.", dns.TypeA, "do", "NOERROR 127.59.9.4", "", ""},
		{"insecure delegation, NSEC3", validating(), "www.unsigned.net.", dns.TypeA, "do", "NOERROR 127.59.9.5", "", ""},
		{"broken signature", validating(), "www.bad.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"broken signature, second ask", validating(), "www.bad.com.", dns.TypeA, "do", "SERVFAIL", "www.bad.com.", "do"},
		{"good signature beside it", validating(), "good.bad.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.8 sigs", "", ""},
		{"expired signature", validating(), "old.bad.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"DNSKEY the DS names missing", validating(), "www.nokey.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"CD takes the bogus answer", validating(), "www.bad.com.", dns.TypeA, "do cd", "NOERROR 127.59.9.6 sigs", "", ""},
		{"CD with a secure answer", validating(), "www.sec.com.", dns.TypeA, "do cd", "NOERROR ad 127.59.9.1 sigs", "", ""},
		{"ignore-cd yes", func() Config { c := validating(); c.IgnoreCD = true; return c }(), "www.bad.com.", dns.TypeA, "do cd", "SERVFAIL", "", ""},
		{"wrong root anchor", validating(otherRoot.String()), "www.sec.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"wrong root anchor, insecure name too", validating(otherRoot.String()), "www.unsigned.com.", dns.TypeA, "do", "SERVFAIL", "", ""},
		{"island of trust (DNSKEY anchor)", func() Config { k, _ := authtest.Key("sec.com."); return validating(k.String()) }(), "www.sec.com.", dns.TypeA, "do", "NOERROR ad 127.59.9.1 sigs", "", ""},
		{"outside the island", func() Config { k, _ := authtest.Key("sec.com."); return validating(k.String()) }(), "www.sec.net.", dns.TypeA, "do", "NOERROR 127.59.9.2 sigs", "", ""},
		{"not validating", func() Config { c := validating(); c.Validate = false; return c }(), "www.bad.com.", dns.TypeA, "do", "NOERROR 127.59.9.6", "", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := New(tc.cfg)
			if tc.asked != "" {
				askFlags(t, r, tc.asked, dns.TypeA, tc.askedAs)
			}
			if got := askFlags(t, r, tc.qname, tc.qtype, tc.flags); got != tc.want {
				t.Errorf("%s %s (%s): got %q, want %q", tc.qname, dns.TypeToString[tc.qtype], tc.flags, got, tc.want)
			}
		})
	}
}

// TestKeyCacheSize: key-cache-size bounds the keys kept; a zone whose
// keys were dropped is validated again from the root.
func TestKeyCacheSize(t *testing.T) {
	signedHierarchy(t)
	for _, tc := range []struct {
		bytes     int
		wantZones int
	}{{0, 4}, {150, 1}} {
		c := validating()
		c.KeyCacheBytes = tc.bytes
		r := New(c)
		for _, n := range []string{"www.sec.com.", "www.sec.net.", "www.sec.com."} {
			r.Flush()
			if got := askFlags(t, r, n, dns.TypeA, "do"); !strings.HasPrefix(got, "NOERROR ad") {
				t.Fatalf("key-cache-size %d: %s: %q", tc.bytes, n, got)
			}
		}
		askFlags(t, r, "www.sec.net.", dns.TypeA, "do")
		zones, bytes := r.KeyCacheSizes()
		if tc.bytes == 0 && zones < tc.wantZones {
			t.Errorf("key-cache-size %d: %d zones kept (%d bytes), want %d at least", tc.bytes, zones, bytes, tc.wantZones)
		}
		if tc.bytes > 0 && (zones != tc.wantZones || bytes > tc.bytes) {
			t.Errorf("key-cache-size %d: %d zones kept (%d bytes), want %d", tc.bytes, zones, bytes, tc.wantZones)
		}
	}
}

// TestPrefetchKey: with prefetch-key, keys in the last tenth of their
// TTL are fetched again while in use (the DS from the parent, the DNSKEY
// from the zone), and stay usable past the first TTL without a new walk
// from the root; without it they are not.
func TestPrefetchKey(t *testing.T) {
	dnskeys := signedHierarchy(t)["127.59.1.3:53"]
	for _, prefetch := range []bool{false, true} {
		var mu sync.Mutex
		dnskeys.Store(0)
		c := validating()
		c.PrefetchKey = prefetch
		r := New(c)
		now := time.Now()
		r.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
		advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
		count := func() int { return int(dnskeys.Load()) }
		if got := askFlags(t, r, "www.sec.com.", dns.TypeA, "do"); got != "NOERROR ad 127.59.9.1 sigs" {
			t.Fatalf("first ask: %q", got)
		}
		if count() != 1 {
			t.Fatalf("%d DNSKEY queries after the first ask", count())
		}
		advance(3420 * time.Second) // 95% of the keys' TTL (3600)
		if got := askFlags(t, r, "new.sec.com.", dns.TypeA, "do"); got != "NXDOMAIN ad nsec sigs" {
			t.Fatalf("second ask: %q", got)
		}
		want := 1
		if prefetch {
			want = 2
			for i := 0; i < 200 && count() < 2; i++ { // the fetch runs in the background
				time.Sleep(10 * time.Millisecond)
			}
			for i := 0; i < 200 && r.Stats().KeyPrefetches.Load() == 0; i++ {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if count() != want {
			t.Errorf("prefetch-key %v: %d DNSKEY queries near the end of the TTL, want %d", prefetch, count(), want)
		}
		if got := r.keyGet("sec.com."); prefetch && (got == nil || got.expires.Before(r.now().Add(30*time.Minute))) {
			t.Errorf("prefetch-key %v: the keys were not renewed", prefetch)
		}
	}
}
