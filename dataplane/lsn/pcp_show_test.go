package lsn

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/pcp"
)

// TestPCPMappingsListed: the mappings listed for show are ordered by
// internal address and port (TCP before UDP), and name the external
// address and port given, the client that owns each, its nonce and
// when it ends; a mapping deleted with lifetime 0 leaves the list.
func TestPCPMappingsListed(t *testing.T) {
	p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, PortLow: 40000, PortHigh: 40009,
		Members: []netip.Prefix{netip.MustParsePrefix("127.211.9.20/32")}})
	s := &pcpServer{pool: p, cfg: &config.LSNPCP{Listen: ap("127.211.0.30:5351")}, start: p.set.now()}
	client := netip.MustParseAddr("127.211.9.5")
	from := netip.AddrPortFrom(client, 40001)
	udp := func(b []byte) []byte { b[24+12] = 17; return b }
	for _, req := range [][]byte{mapRequest(client, 9000), udp(mapRequest(client, 8080)), mapRequest(client, 8080)} {
		if out := s.answer(req, from, nil); len(out) < 24 || out[3] != pcp.Success {
			t.Fatalf("MAP answered % x", out)
		}
	}
	ms := p.PCPMappings()
	want := []struct {
		port uint16
		udp  bool
	}{{8080, false}, {8080, true}, {9000, false}}
	if len(ms) != len(want) {
		t.Fatalf("mappings %+v", ms)
	}
	now := p.set.now()
	for i, w := range want {
		m := ms[i]
		if m.Internal != netip.AddrPortFrom(client, w.port) || m.UDP != w.udp || m.Peer {
			t.Errorf("mapping %d: %v udp %t peer %t, want port %d udp %t", i, m.Internal, m.UDP, m.Peer, w.port, w.udp)
		}
		if m.External.Addr() != netip.MustParseAddr("127.211.9.20") || m.External.Port() < 40000 || m.External.Port() > 40009 {
			t.Errorf("mapping %d: external %v", i, m.External)
		}
		if m.Owner != client || m.Nonce[0] != 9 || !m.Expires.After(now) {
			t.Errorf("mapping %d: owner %v nonce %x expires %v (now %v)", i, m.Owner, m.Nonce, m.Expires, now)
		}
	}
	del := mapRequest(client, 9000)
	del[4], del[5], del[6], del[7] = 0, 0, 0, 0
	if out := s.answer(del, from, nil); len(out) < 24 || out[3] != pcp.Success {
		t.Fatalf("delete answered % x", out)
	}
	if ms := p.PCPMappings(); len(ms) != 2 || ms[1].Internal.Port() != 8080 {
		t.Errorf("after the delete: %+v", ms)
	}
}
