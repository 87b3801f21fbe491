package recursor

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/recursor/authtest"
)

// A resolution keeps the name servers of each zone cut it went through,
// their names and addresses (glue, or looked up for a name server out of
// bailiwick): what a response policy's NSDNAME and NSIP triggers match.
func TestDelegations(t *testing.T) {
	servers := map[string][]string{
		"127.153.1.1:53": {". 3600 IN SOA a.root. h. 1 3600 600 86400 30",
			"com. 3600 IN NS ns.tld.", "org. 3600 IN NS ns.tld.", "ns.tld. 3600 IN A 127.153.1.2"},
		"127.153.1.2:53": {"com. 3600 IN SOA ns.tld. h. 1 3600 600 86400 30", "org. 3600 IN SOA ns.tld. h. 1 3600 600 86400 30",
			"example.com. 3600 IN NS ns1.example.com.", "example.com. 3600 IN NS ns2.example.com.",
			"ns1.example.com. 3600 IN A 127.153.1.3", "ns2.example.com. 3600 IN A 127.153.1.3",
			"hosted.com. 3600 IN NS ns.example.org.",
			"example.org. 3600 IN NS ns.example.org.", "ns.example.org. 3600 IN A 127.153.1.4"},
		"127.153.1.3:53": {"example.com. 3600 IN SOA ns1.example.com. h. 1 3600 600 86400 30",
			"www.example.com. 300 IN A 127.153.9.1", "alias.example.com. 300 IN CNAME www.hosted.com."},
		"127.153.1.4:53": {"example.org. 3600 IN SOA ns.example.org. h. 1 3600 600 86400 30",
			"hosted.com. 3600 IN SOA ns.example.org. h. 1 3600 600 86400 30",
			"ns.example.org. 3600 IN A 127.153.1.4", "www.hosted.com. 300 IN A 127.153.9.2"},
	}
	for addr, recs := range servers {
		s, err := authtest.New(recs...)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Start(addr); err != nil {
			t.Skipf("cannot serve DNS on %s (port 53 needs privileges): %v", addr, err)
		}
		t.Cleanup(s.Close)
	}
	r := New(Config{RootHints: []netip.AddrPort{netip.MustParseAddrPort("127.153.1.1:53")}, IPv4: true, UDP: true, TCP: true, Timeout: 2 * time.Second})
	show := func(ds []Delegation) string {
		var parts []string
		for _, d := range ds {
			parts = append(parts, fmt.Sprintf("%s %v %v", d.Zone, d.Names, d.Addrs))
		}
		return strings.Join(parts, "; ")
	}
	if got := show(r.Delegations(nil, "www.example.com.")); got != "" {
		t.Fatalf("before resolving: %s", got)
	}
	for _, tt := range []struct{ name, want string }{
		{"www.example.com.", "example.com. [ns1.example.com. ns2.example.com.] [127.153.1.3:53 127.153.1.3:53]; com. [ns.tld.] [127.153.1.2:53]"},
		{"alias.example.com.", "example.com. [ns1.example.com. ns2.example.com.] [127.153.1.3:53 127.153.1.3:53]; com. [ns.tld.] [127.153.1.2:53]"},
		{"www.hosted.com.", "hosted.com. [ns.example.org.] [127.153.1.4:53]; com. [ns.tld.] [127.153.1.2:53]"},
		{"nothing.example.org.", "example.org. [ns.example.org.] [127.153.1.4:53]; org. [ns.tld.] [127.153.1.2:53]"},
	} {
		q := new(dns.Msg)
		q.SetQuestion(tt.name, dns.TypeA)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := r.Resolve(ctx, q)
		cancel()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := show(r.Delegations(nil, tt.name)); got != tt.want {
			t.Errorf("%s: %s\nwant %s", tt.name, got, tt.want)
		}
	}
	// Answered from the cache, the name's servers are still known.
	var buf [8]Delegation
	if n := testing.AllocsPerRun(50, func() { r.Delegations(buf[:0], "www.example.com.") }); n != 0 {
		t.Errorf("Delegations allocates %v", n)
	}
	r.Flush()
	if got := show(r.Delegations(nil, "www.example.com.")); got != "" {
		t.Errorf("after a flush: %s", got)
	}
}
