package render

import (
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/mrf"
)

func TestLSNPCPMappings(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, tc := range []struct {
		name string
		ms   []lsn.PCPMapping
		want []string
	}{
		{"none", nil, []string{"PCP Mappings\nTotal records returned: 0\n"}},
		{"map and peer", []lsn.PCPMapping{
			{Internal: netip.MustParseAddrPort("10.0.0.5:8080"), External: netip.MustParseAddrPort("192.0.2.1:40001"),
				Expires: now.Add(119500 * time.Millisecond), Owner: netip.MustParseAddr("10.0.0.5"), Nonce: [12]byte{1, 2}},
			{Internal: netip.MustParseAddrPort("[2001:db8::5]:53"), External: netip.MustParseAddrPort("192.0.2.1:40002"), UDP: true, Peer: true,
				Expires: now.Add(-time.Second), Owner: netip.MustParseAddr("2001:db8::1")},
		}, []string{
			"Opcode  Protocol  Internal",
			"\nMAP     tcp       10.0.0.5:8080",
			"192.0.2.1:40001  119            10.0.0.5",
			"10.0.0.5     010200000000000000000000\n",
			"\nPEER    udp       2001:db8::5.53",
			"  0  ",
			"Total records returned: 2\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := LSNPCPMappings(&b, tc.ms, now, Options{}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
			if strings.Contains(b.String(), " \n") {
				t.Errorf("trailing blanks in\n%s", b.String())
			}
		})
	}
}

func TestMRFDynamicRoutes(t *testing.T) {
	for _, tc := range []struct {
		name string
		rs   []mrf.DynamicRoute
		want []string
	}{
		{"none", nil, []string{"Dynamic Routes: vs\nTotal records returned: 0\n"}},
		{"two", []mrf.DynamicRoute{
			{Host: "pcef-1.example", Realm: "edge.example", Client: netip.MustParseAddr("10.0.0.7"), Idle: 2500 * time.Millisecond, Left: 57500 * time.Millisecond},
			{Host: "pcef-2.example", Realm: "edge.example", Idle: time.Second, Left: -1},
		}, []string{
			"Origin-Host     Origin-Realm  Client",
			"\npcef-1.example  edge.example  10.0.0.7  2     57\n",
			"\npcef-2.example  edge.example  -         1     -\n",
			"Total records returned: 2\n",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := MRFDynamicRoutes(&b, "/Common/vs", tc.rs, Options{Folder: "/Common"}); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("no %q in\n%s", w, b.String())
				}
			}
		})
	}
}
