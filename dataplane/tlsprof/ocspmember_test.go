package tlsprof

import (
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
