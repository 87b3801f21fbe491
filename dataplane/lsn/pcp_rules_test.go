package lsn

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/pcp"
)

// fakePCPRules is a pcp profile's rule: it refuses or drops MAPs of
// one internal port and records the answers it saw.
type fakePCPRules struct {
	rejectPort, dropPort uint16
	code                 uint8
	answers              []uint8
}

func (f *fakePCPRules) PCPRequest(r *pcp.Request, client, server netip.AddrPort) (uint8, bool) {
	switch r.InternalPort {
	case f.dropPort:
		return 0, true
	case f.rejectPort:
		return f.code, false
	}
	return 0, false
}

func (f *fakePCPRules) PCPResponse(r *pcp.Request, resp *pcp.Response, client, server netip.AddrPort) {
	f.answers = append(f.answers, resp.Result)
}

// mapRequest is a MAP request of TCP port from client for 300 s.
func mapRequest(client netip.Addr, port uint16) []byte {
	b := make([]byte, 24+36)
	b[0], b[1] = pcp.Version, pcp.OpMap
	binary.BigEndian.PutUint32(b[4:], 300)
	c := client.As16()
	copy(b[8:24], c[:])
	p := b[24:]
	p[0], p[12] = 9, 6
	binary.BigEndian.PutUint16(p[16:], port)
	return b
}

// TestPCPRules: the profile's rule refuses a request with its code and
// nothing is mapped; a failing rule drops the request unanswered; every
// answer, refusals included, goes through PCP_RESPONSE; the others are
// served as without a rule.
func TestPCPRules(t *testing.T) {
	p, _ := newTestPool(t, config.LSNPool{Mode: config.LSNNAPT, PortLow: 40000, PortHigh: 40009,
		Members: []netip.Prefix{netip.MustParsePrefix("127.172.9.20/32")}})
	f := &fakePCPRules{rejectPort: 22, dropPort: 23, code: pcp.NotAuthorized}
	s := &pcpServer{pool: p, cfg: &config.LSNPCP{Listen: ap("127.172.0.30:5351"), Rules: f}, start: p.set.now()}
	client := netip.MustParseAddr("127.172.9.5")
	from := netip.AddrPortFrom(client, 40001)
	result := func(b []byte) uint8 {
		if len(b) < 24 {
			t.Fatalf("answer of %d octets", len(b))
		}
		return b[3]
	}
	if got := result(s.answer(mapRequest(client, 22), from, nil)); got != pcp.NotAuthorized {
		t.Errorf("refused MAP: result %d", got)
	}
	if out := s.answer(mapRequest(client, 23), from, nil); out != nil {
		t.Errorf("dropped MAP answered: % x", out)
	}
	if got := result(s.answer(mapRequest(client, 8080), from, nil)); got != pcp.Success {
		t.Errorf("MAP: result %d", got)
	}
	if got := result(s.answer([]byte{1, 0, 0, 0}, from, nil)); got != pcp.UnsuppVersion { // PCP_REQUEST does not see it
		t.Errorf("version 1: result %d", got)
	}
	if len(p.PCPMappings()) != 1 || p.Stats.PCPRuleRejects.Load() != 1 || p.Stats.PCPRuleDrops.Load() != 1 || p.Stats.PCPFailures.Load() != 2 {
		t.Errorf("mappings %v, rejects %d, drops %d, failures %d", p.PCPMappings(), p.Stats.PCPRuleRejects.Load(), p.Stats.PCPRuleDrops.Load(), p.Stats.PCPFailures.Load())
	}
	if want := []uint8{pcp.NotAuthorized, pcp.Success, pcp.UnsuppVersion}; string(f.answers) != string(want) {
		t.Errorf("PCP_RESPONSE saw %v, want %v", f.answers, want)
	}
}
