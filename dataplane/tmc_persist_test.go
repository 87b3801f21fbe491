package dataplane

import (
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
)

// TestTrafficMatchingDestPersist: on a virtual listening on several
// addresses, dest-addr persistence keys on the address each client
// reached, whether the virtual is plain TCP, HTTP or message-based, so
// each address keeps a record of its own (and may stick to a member of
// its own) rather than all following the first address.
func TestTrafficMatchingDestPersist(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct {
		name string
		mblb *MBLB
		http bool
	}{
		{name: "tcp"},
		{name: "http", mblb: &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, http: true},
		{name: "message", mblb: &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := byte(10 + i)
			addr := func(host byte) string { return netip.AddrFrom4([4]byte{127, 65, n, host}).String() }
			member := addr(100) + ":7000"
			if tc.http {
				startHTTPServer(t, member, "M1")
			} else {
				startServer(t, member, "M1")
			}
			p, _ := newPlane(t)
			cfg := mblbConfig(addr(1)+":0", tc.mblb, member)
			v := cfg.Virtuals["/Common/vs"]
			v.Addresses = []netip.Addr{netip.MustParseAddr(addr(1)), netip.MustParseAddr(addr(2)), netip.MustParseAddr(addr(3))}
			v.PortRanges = []PortRange{{Low: 8080, High: 8080}}
			v.Persist = &Persistence{Profile: "/Common/dest_addr", Method: PersistDestAddr, Timeout: time.Minute}
			mustApply(t, p, cfg)
			reached := []string{addr(2), addr(3)}
			for _, a := range reached {
				to := a + ":8080"
				if tc.http {
					r, _, err := dialHTTPVS(t, to).do(httpReq("h", "/"))
					if err != nil || r.Header.Get("X-Member") != "M1" {
						t.Fatalf("%s: %v %v", to, r, err)
					}
				} else if got := dialFrom(t, "127.65."+fmt.Sprint(n)+".50", to).mustAsk("hi"); got != "M1 Response" {
					t.Fatalf("%s: %q", to, got)
				}
			}
			var keys []string
			p.PersistRecords(persist.Filter{Mode: persist.DestAddress}, func(r *persist.Record) bool {
				keys = append(keys, r.Key.String())
				return true
			})
			slices.Sort(keys)
			if !slices.Equal(keys, reached) {
				t.Fatalf("dest-addr records keyed on %v, want %v (the addresses reached)", keys, reached)
			}
		})
	}
}
