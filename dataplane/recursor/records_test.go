package recursor

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
)

func mustRRs(t *testing.T, lines ...string) []dns.RR {
	t.Helper()
	var out []dns.RR
	for _, l := range lines {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rr)
	}
	return out
}

// The rrset and nameserver caches are listed by name from the root down,
// filtered by owner and type, their TTLs as left; deleting takes only
// what the filter picks, and the sizes follow.
func TestRecordsListAndDelete(t *testing.T) {
	now := time.Unix(1000, 0)
	r := New(Config{})
	r.now = func() time.Time { return now }
	r.rrPutAll(mustRRs(t,
		"www.example.com. 300 IN A 127.179.9.1",
		"www.example.com. 300 IN A 127.179.9.2",
		"www.example.com. 300 IN AAAA 2001:db8::1",
		"example.com. 3600 IN NS ns.example.com.",
		"a.example.org. 60 IN A 127.179.9.3",
		"short.example.org. 5 IN A 127.179.9.4",
	), Secure)
	r.nsPut("com.", []string{"ns.tld."}, []netip.AddrPort{netip.MustParseAddrPort("127.179.1.2:53")}, 100)
	r.nsPut("example.com.", []string{"ns.example.com."}, []netip.AddrPort{netip.MustParseAddrPort("127.179.1.3:53")}, 20)
	now = now.Add(10 * time.Second) // short.example.org. has expired

	list := func(f Filter) string {
		var b []string
		r.RRsets(f, func(s RRset) bool {
			b = append(b, s.Name+"/"+dns.TypeToString[s.Type]+"/"+itoa(s.TTL)+"/"+itoa(uint32(len(s.RRs)))+"/"+s.Security.String())
			return true
		})
		return strings.Join(b, " ")
	}
	for _, tc := range []struct {
		f    Filter
		want string
	}{
		{Filter{}, "example.com./NS/3590/1/secure www.example.com./A/290/2/secure www.example.com./AAAA/290/1/secure a.example.org./A/50/1/secure"},
		{Filter{Name: "www.example.com."}, "www.example.com./A/290/2/secure www.example.com./AAAA/290/1/secure"},
		{Filter{Type: dns.TypeA}, "www.example.com./A/290/2/secure a.example.org./A/50/1/secure"},
		{Filter{Name: "www.example.com.", Type: dns.TypeAAAA}, "www.example.com./AAAA/290/1/secure"},
		{Filter{Name: "nosuch.example."}, ""},
	} {
		if got := list(tc.f); got != tc.want {
			t.Errorf("RRsets(%+v) = %q, want %q", tc.f, got, tc.want)
		}
	}
	// fn returning false stops the walk.
	n := 0
	r.RRsets(Filter{}, func(RRset) bool { n++; return false })
	if n != 1 {
		t.Errorf("a walk stopped at the first set called fn %d times", n)
	}

	_, before, _, _ := r.CacheSizes()
	if got := r.DeleteRRsets(Filter{Name: "www.example.com.", Type: dns.TypeA}); got != 1 {
		t.Errorf("DeleteRRsets(www A) = %d, want 1", got)
	}
	if got := list(Filter{Name: "www.example.com."}); got != "www.example.com./AAAA/290/1/secure" {
		t.Errorf("after the delete: %q", got)
	}
	if _, after, _, _ := r.CacheSizes(); after >= before {
		t.Errorf("rrset bytes %d after the delete, %d before", after, before)
	}
	if got := r.DeleteRRsets(Filter{Type: dns.TypeA}); got != 2 { // a.example.org. and the expired short.example.org.
		t.Errorf("DeleteRRsets(A) = %d, want 2", got)
	}

	var zones []string
	r.Nameservers(Filter{}, func(n Nameserver) bool {
		zones = append(zones, n.Zone+"/"+itoa(n.TTL)+"/"+strings.Join(n.Names, ",")+"/"+n.Addrs[0].String())
		return true
	})
	if got, want := strings.Join(zones, " "), "com./90/ns.tld./127.179.1.2:53 example.com./10/ns.example.com./127.179.1.3:53"; got != want {
		t.Errorf("Nameservers = %q, want %q", got, want)
	}
	if got := r.DeleteNameservers(Filter{Name: "example.com."}); got != 1 {
		t.Errorf("DeleteNameservers(example.com.) = %d, want 1", got)
	}
	if _, _, zonesLeft, addrs := r.CacheSizes(); zonesLeft != 1 || addrs != 1 {
		t.Errorf("after the delete: %d zones, %d addresses, want 1 and 1", zonesLeft, addrs)
	}
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func TestCompareNames(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{".", "com.", -1},
		{"com.", "example.com.", -1},
		{"example.com.", "www.example.com.", -1},
		{"a.example.com.", "b.example.com.", -1},
		{"www.example.com.", "example.org.", -1},
		{"x.", "x.", 0},
		{"org.", "com.", 1},
	} {
		if got := compareNames(tc.a, tc.b); got != tc.want {
			t.Errorf("compareNames(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
