package dataplane

import (
	"fmt"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// TestHashPayloadPersistenceUDP runs a hash profile's payload key on a
// UDP virtual of three members: per flow (the first datagram's key
// decides, a new client port with the same key returns to its member) and
// with datagram-load-balancing (each datagram's key decides, so one
// client's datagrams for different accounts go where each account went
// first). A datagram without the key is balanced and recorded nowhere;
// with carp no record is kept at all.
func TestHashPayloadPersistenceUDP(t *testing.T) {
	t.Parallel()
	members := []string{"127.11.1.11:5400", "127.11.1.12:5400", "127.11.1.13:5400"}
	for i, m := range members {
		startUDPMember(t, m, string(rune('A'+i)))
	}
	for i, tc := range []struct {
		name  string
		dgram bool
		carp  bool
	}{
		{"per flow", false, false},
		{"datagram balancing", true, false},
		{"datagram balancing, carp", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.11.1.%d:53", i+1)
			cfg := udpBasic(vs, members...)
			cfg.Virtuals["/Common/vs"].DatagramLB = tc.dgram
			pl, err := persist.NewPayload(0, 0, `acct=`, `;`, 256)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/hash_payload", Method: PersistHash,
				Timeout: 300 * time.Second, Payload: pl, CARP: tc.carp}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			keys := []string{"1001", "1002", "1003", "1004", "1005", "1006"}
			first := map[string]string{}
			spread := map[string]bool{}
			one := dialUDP(t, "", vs) // the datagram-balancing client
			for _, k := range keys {
				c := one
				if !tc.dgram {
					c = dialUDP(t, "", vs)
				}
				first[k] = label(c.mustAsk("q;acct=" + k + ";"))
				spread[first[k]] = true
			}
			if len(spread) < 2 {
				t.Errorf("six keys all went to %v", spread)
			}
			for round := 0; round < 2; round++ {
				for j := range keys {
					// Reversed, then rotated: balancing alone would not
					// repeat the first round's choices.
					k := keys[len(keys)-1-j]
					if round == 1 {
						k = keys[(j+1)%len(keys)]
					}
					c := one
					if !tc.dgram {
						c = dialUDP(t, "", vs) // a new flow each time
					}
					if got := label(c.mustAsk("q;acct=" + k + ";")); got != first[k] {
						t.Fatalf("key %s went to %s, first to %s", k, got, first[k])
					}
				}
			}
			if tc.dgram {
				// Without the key, datagrams are balanced.
				seen := map[string]bool{}
				for j := 0; j < 6; j++ {
					seen[label(one.mustAsk("no key here"))] = true
				}
				if len(seen) < 2 {
					t.Errorf("keyless datagrams went to %v, want them balanced", seen)
				}
			}
			checkPayloadRecords(t, p, first, tc.carp)
		})
	}
}
