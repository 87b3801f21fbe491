package tlsprof

import (
	"crypto/x509"
	"fmt"
	"net"
	"net/netip"
	"testing"
)

// TestOCSPMemberAddrs: an answer lists each member address once, first
// seen first, at most maxOCSPMembers, counting those past the bound;
// NoteMember does nothing for a profile without ocsp or a connection
// that is not TLS.
func TestOCSPMemberAddrs(t *testing.T) {
	var m memberAddrs
	a := netip.MustParseAddrPort("127.248.9.1:8443")
	m.note(a)
	m.note(a)
	if got, more := m.list(); len(got) != 1 || got[0] != a || more != 0 {
		t.Fatalf("one member twice: %v %d", got, more)
	}
	for i := range maxOCSPMembers + 3 {
		m.note(netip.MustParseAddrPort(fmt.Sprintf("127.248.9.%d:8443", i+2)))
	}
	got, more := m.list()
	if len(got) != maxOCSPMembers || got[0] != a || more != 4 {
		t.Errorf("past the bound: %d listed (first %v), %d more; want %d, %v, 4", len(got), got[0], more, maxOCSPMembers, a)
	}
	got[0] = netip.AddrPort{}
	if again, _ := m.list(); again[0] != a {
		t.Error("list shares the entry's slice")
	}
	c1, c2 := net.Pipe()
	defer c1.Close()
	defer c2.Close()
	var none *Built
	none.NoteMember(c1)
	(&Built{}).NoteMember(c1)
	(&Built{ocsp: &memberOCSP{o: &OCSP{Name: "v"}}}).NoteMember(c1) // not TLS: nothing
}

// TestOCSPCacheEvictsIdle: a full cache drops the entries no handshake
// read since their last exchange and keeps those in use (so the shows
// keep listing them); with too few idle ones it starts afresh.
func TestOCSPCacheEvictsIdle(t *testing.T) {
	ocspCache.mu.Lock()
	saved := ocspCache.m
	ocspCache.m = nil
	ocspCache.mu.Unlock()
	t.Cleanup(func() {
		ocspCache.mu.Lock()
		ocspCache.m = saved
		ocspCache.mu.Unlock()
	})
	o := &OCSP{Name: "evict"}
	leaf := func(i int) *x509.Certificate { return &x509.Certificate{Raw: []byte(fmt.Sprintf("leaf %d", i))} }
	fill := func(idle func(i int) bool) []*ocspEntry {
		ocspCache.mu.Lock()
		ocspCache.m = nil
		ocspCache.mu.Unlock()
		es := make([]*ocspEntry, maxOCSPEntries)
		for i := range maxOCSPEntries {
			es[i] = ocspFor(o, leaf(i), nil)
			if idle(i) {
				es[i].used.Store(false)
			}
		}
		return es
	}
	es := fill(func(i int) bool { return i%2 == 0 })
	added := ocspFor(o, leaf(maxOCSPEntries), nil)
	ocspCache.mu.Lock()
	n := len(ocspCache.m)
	kept := ocspCache.m[ocspKey(o.key(), leaf(1))]
	gone := ocspCache.m[ocspKey(o.key(), leaf(0))]
	ocspCache.mu.Unlock()
	if n != maxOCSPEntries/2+1 || kept != es[1] || gone != nil {
		t.Errorf("half idle: %d entries (want %d), in-use one kept %v, idle one gone %v", n, maxOCSPEntries/2+1, kept == es[1], gone == nil)
	}
	if again := ocspFor(o, leaf(maxOCSPEntries), nil); again != added {
		t.Error("the entry added after the eviction is not the one found")
	}
	fill(func(i int) bool { return i < maxOCSPEntries/8 })
	ocspFor(o, leaf(maxOCSPEntries), nil)
	ocspCache.mu.Lock()
	n = len(ocspCache.m)
	ocspCache.mu.Unlock()
	if n != 1 {
		t.Errorf("too few idle: %d entries, want 1 (started afresh)", n)
	}
}
