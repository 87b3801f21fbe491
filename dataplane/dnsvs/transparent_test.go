package dnsvs

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TestRotate: rrset-rotate query-id puts record id mod n of each record
// set first, the sets in place.
func TestRotate(t *testing.T) {
	tests := []struct {
		id   uint16
		want string
	}{
		{0, "1 2 3 cname 9 8"},
		{1, "2 3 1 cname 8 9"},
		{2, "3 1 2 cname 9 8"},
		{3, "1 2 3 cname 8 9"},
	}
	for _, tt := range tests {
		rrs := []dns.RR{
			rr(t, "a.example.net. 60 IN A 192.0.2.1"), rr(t, "a.example.net. 60 IN A 192.0.2.2"), rr(t, "A.example.net. 60 IN A 192.0.2.3"),
			rr(t, "b.example.net. 60 IN CNAME c.example.net."),
			rr(t, "c.example.net. 60 IN A 192.0.2.9"), rr(t, "c.example.net. 60 IN A 192.0.2.8"),
		}
		rotate(rrs, tt.id)
		var got []string
		for _, x := range rrs {
			if a, ok := x.(*dns.A); ok {
				got = append(got, fmt.Sprint(a.A.To4()[3]))
			} else {
				got = append(got, "cname")
			}
		}
		if g := strings.Join(got, " "); g != tt.want {
			t.Errorf("id %d: %s, want %s", tt.id, g, tt.want)
		}
	}
}

// TestTransparentCacheSettings: a transparent cache rotates what it
// gives with rrset-rotate query-id and not without; rrset-cache-size
// drops the oldest answers first, as msg-cache-size does, and refuses
// an answer larger than it alone.
func TestTransparentCacheSettings(t *testing.T) {
	q := query("a.example.net.", dns.TypeA, false)
	three := answer(q, dns.RcodeSuccess, rr(t, "a.example.net. 60 IN A 192.0.2.1"), rr(t, "a.example.net. 60 IN A 192.0.2.2"), rr(t, "a.example.net. 60 IN A 192.0.2.3"))
	for _, tt := range []struct {
		rotate bool
		id     uint16
		first  string
	}{
		{false, 1, "192.0.2.1"},
		{true, 1, "192.0.2.2"},
		{true, 2, "192.0.2.3"},
		{true, 3, "192.0.2.1"},
	} {
		c := newCache(&config.DNSCache{Name: "/Common/c", Rotate: tt.rotate})
		c.Put(q, three)
		ask := q.Copy()
		ask.Id = tt.id
		m := c.Get(ask)
		if m == nil || len(m.Answer) != 3 {
			t.Fatalf("rotate %v id %d: %v", tt.rotate, tt.id, m)
		}
		if got := m.Answer[0].(*dns.A).A.String(); got != tt.first {
			t.Errorf("rotate %v id %d: first %s, want %s", tt.rotate, tt.id, got, tt.first)
		}
	}

	one := dns.Len(rr(t, "n0.example.net. 60 IN A 192.0.2.1"))
	c := newCache(&config.DNSCache{Name: "/Common/c", RRsetBytes: 2 * one})
	for i := range 3 {
		qi := query(fmt.Sprintf("n%d.example.net.", i), dns.TypeA, false)
		c.Put(qi, answer(qi, dns.RcodeSuccess, rr(t, fmt.Sprintf("n%d.example.net. 60 IN A 192.0.2.1", i))))
	}
	for i, want := range []bool{false, true, true} {
		if got := c.Get(query(fmt.Sprintf("n%d.example.net.", i), dns.TypeA, false)) != nil; got != want {
			t.Errorf("rrset-cache-size of two records: n%d kept %v, want %v", i, got, want)
		}
	}
	if st := c.Stats(); st.Evictions != 1 || st.RRsetBytes != uint64(2*one) {
		t.Errorf("stats: %d evictions, %d record bytes; want 1 and %d", st.Evictions, st.RRsetBytes, 2*one)
	}
	c.Put(q, three) // three records alone exceed the bound
	if c.Get(q) != nil {
		t.Error("an answer larger than rrset-cache-size was kept")
	}
}

// TestUpstreamSlots: max-concurrent-udp and max-concurrent-tcp bound
// the queries out to the pool by transport, each apart; a slot given
// back is taken again; 0 is unbounded.
func TestUpstreamSlots(t *testing.T) {
	c := newCache(&config.DNSCache{Name: "/Common/c", MaxUDP: 2, MaxTCP: 1})
	var held []func()
	take := func(udp bool) bool {
		n, ok := c.upstream(udp)
		if ok && n != nil {
			held = append(held, func() { n.Add(-1) })
		}
		return ok
	}
	for i, tt := range []struct {
		udp  bool
		want bool
	}{
		{true, true}, {true, true}, {true, false}, {false, true}, {false, false},
	} {
		if got := take(tt.udp); got != tt.want {
			t.Errorf("take %d (udp %v): %v, want %v", i, tt.udp, got, tt.want)
		}
	}
	held[0]()
	if !take(true) {
		t.Error("a UDP slot given back was not taken again")
	}
	if st := c.Stats(); st.Overflows != 2 {
		t.Errorf("overflows %d, want 2", st.Overflows)
	}
	free := newCache(&config.DNSCache{Name: "/Common/f"})
	for range 100 {
		if n, ok := free.upstream(false); !ok || n != nil {
			t.Fatal("an unbounded cache refused or counted a query")
		}
	}
}
