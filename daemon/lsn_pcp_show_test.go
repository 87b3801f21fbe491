package daemon

import (
	"net/netip"
	"regexp"
	"strings"
	"testing"
)

// TestLSNPoolPCPShowDetail: show ltm lsn-pool NAME detail lists each
// PCP mapping a real client made (MAP and PEER, TCP and UDP) with its
// internal and external address and port, lifetime left, owner and
// nonce; without detail only the counts; a mapping deleted by its
// client leaves the list.
func TestLSNPoolPCPShowDetail(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create net vlan internal",
		"create net self pcp_self address 127.211.40.1/16 vlan internal allow-service { udp:5351 }",
		"create ltm profile pcp pcp_show defaults-from pcp min-mapping-lifetime 120 max-mapping-lifetime 600 listening-port 5351",
		"create ltm lsn-pool cg members add { 127.211.41.0/30 } translation-port-range 30000:30999 pcp { profile pcp_show selfip pcp_self }",
	)
	server := "127.211.40.1:5351"
	sub := netip.MustParseAddr("127.211.42.5")
	nonce := [12]byte{0xab, 0xcd}
	m := pcpAsk(t, "127.211.42.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 300, client: sub, nonce: nonce, proto: 6, internalPort: 8022})
	u := pcpAsk(t, "127.211.42.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 200, client: sub, nonce: nonce, proto: 17, internalPort: 8053})
	pr := pcpAsk(t, "127.211.42.5:0", server, pcpReq{version: 2, opcode: 2, lifetime: 150, client: sub, nonce: nonce, proto: 6, internalPort: 8090,
		peerPort: 443, peerAddr: netip.MustParseAddr("127.211.43.9")})
	if m.result != 0 || u.result != 0 || pr.result != 0 {
		t.Fatalf("results %d %d %d", m.result, u.result, pr.result)
	}
	out, err := run(t, s, "show ltm lsn-pool cg detail")
	if err != "" {
		t.Fatal(err)
	}
	for _, want := range []string{
		`MAP +tcp +127\.211\.42\.5:8022 +` + regexp.QuoteMeta(m.ext.String()) + ` +\d+ +127\.211\.42\.5 +abcd0{20}\n`,
		`MAP +udp +127\.211\.42\.5:8053 +` + regexp.QuoteMeta(u.ext.String()) + ` +\d+ +127\.211\.42\.5 +abcd0{20}\n`,
		`PEER +tcp +127\.211\.42\.5:8090 +` + regexp.QuoteMeta(pr.ext.String()) + ` +\d+ +127\.211\.42\.5 `,
		`Total records returned: 3`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("no %s in\n%s", want, out)
		}
	}
	if out, _ := run(t, s, "show ltm lsn-pool cg"); strings.Contains(out, "PCP Mappings") {
		t.Errorf("the mappings listed without detail:\n%s", out)
	}
	if d := pcpAsk(t, "127.211.42.5:0", server, pcpReq{version: 2, opcode: 1, lifetime: 0, client: sub, nonce: nonce, proto: 6, internalPort: 8022}); d.result != 0 {
		t.Fatalf("delete: result %d", d.result)
	}
	out, _ = run(t, s, "show ltm lsn-pool cg detail")
	if strings.Contains(out, ":8022 ") || !strings.Contains(out, "Total records returned: 2") {
		t.Errorf("after the delete:\n%s", out)
	}
}
