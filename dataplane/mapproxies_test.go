package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// TestSourceAddrMapProxies: with a class of proxy networks on a
// source-addr profile, clients from any address of a proxy network
// persist as one (on the network's address, or on map-proxy-address),
// while other clients keep a record each.
func TestSourceAddrMapProxies(t *testing.T) {
	members := []string{"127.7.7.11:7001", "127.7.7.12:7001"}
	for i, m := range members {
		startServer(t, m, string(rune('A'+i)))
	}
	for i, tc := range []struct {
		name    string
		proxy   string // map-proxy-address, "" for none
		wantKey string
	}{
		{"network's address", "", "127.7.9.0"},
		{"map-proxy-address", "10.9.9.9", "10.9.9.9"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.7.7.%d:7001", i+1)
			cfg := basic(vs, members...)
			pm := &ProxyMap{Nets: []netip.Prefix{netip.MustParsePrefix("127.7.9.0/24")}}
			if tc.proxy != "" {
				pm.Addr = netip.MustParseAddr(tc.proxy)
			}
			prof := &Persistence{Profile: "/Common/src_proxies", Method: PersistSourceAddr, Timeout: 300 * time.Second, Proxies: pm}
			cfg.Virtuals["/Common/vs"].Persist = prof
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			from := func(src string) string {
				t.Helper()
				d := net.Dialer{Timeout: 5 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
				c, err := d.Dial("tcp", vs)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				fmt.Fprintf(c, "hello\n")
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					t.Fatalf("from %s: %v", src, err)
				}
				return strings.Fields(line)[0]
			}
			first := from("127.7.9.1")
			for j := 2; j <= 8; j++ {
				if got := from(fmt.Sprintf("127.7.9.%d", j)); got != first {
					t.Fatalf("proxy client 127.7.9.%d went to %s, 127.7.9.1 to %s", j, got, first)
				}
			}
			seen := map[string]bool{}
			for j := 1; j <= 4; j++ {
				seen[from(fmt.Sprintf("127.7.10.%d", j))] = true
			}
			if len(seen) != 2 {
				t.Errorf("clients outside the proxy networks went to %v, want both members", seen)
			}
			keys := map[string]bool{}
			p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
				keys[r.Key.String()] = true
				return true
			})
			if len(keys) != 5 || !keys[tc.wantKey] || !keys["127.7.10.1"] {
				t.Errorf("records %v, want %s and one per other client", keys, tc.wantKey)
			}
		})
	}
}
