package dataplane

import (
	"fmt"
	"testing"
	"time"
)

// TestMatchAcross runs match-across-services, -virtuals and -pools with
// real clients and members: a record made through one virtual server (or
// one pool) is honoured through another exactly when the profile's
// setting reaches it, and only to a member the other side may use.
func TestMatchAcross(t *testing.T) {
	t.Parallel()
	type across struct{ services, virtuals, pools bool }
	cases := []struct {
		name string
		set  across
		// second is the second virtual's address (":9001" on the
		// first's address or another one); poolB its pool's nodes.
		second string
		poolB  []string
		follow bool // the second virtual sends each client to its first member's node
	}{
		{"services, same address", across{services: true}, "1", []string{"11", "12"}, true},
		{"no setting, same address", across{}, "1", []string{"11", "12"}, false},
		{"services, other address", across{services: true}, "2", []string{"11", "12"}, false},
		{"virtuals, other address", across{virtuals: true}, "2", []string{"11", "12"}, true},
		{"virtuals, node not in the pool", across{virtuals: true}, "2", []string{"13", "12"}, true},
		{"pools only, other virtual", across{pools: true}, "2", []string{"11", "12"}, false},
	}
	for i, tc := range cases {
		net := fmt.Sprintf("127.28.%d.", 10+i)
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, n := range []string{"11", "12", "13"} {
				startServer(t, net+n+":9000", "N"+n)
				startServer(t, net+n+":9001", "N"+n)
			}
			p, _ := newPlane(t)
			cfg := basic(net+"1:9000", net+"11:9000", net+"12:9000")
			pers := srcAddr(time.Hour)
			pers.MatchAcrossServices, pers.MatchAcrossVirtuals, pers.MatchAcrossPools = tc.set.services, tc.set.virtuals, tc.set.pools
			cfg.Virtuals["/Common/vs"].Persist = pers
			var members []string
			inB := map[string]bool{}
			for _, n := range tc.poolB {
				members = append(members, net+n+":9001")
				inB["N"+n+" Response"] = true
			}
			withPool(cfg, "/Common/b", members...)
			vs2 := net + tc.second + ":9001"
			cfg.Virtuals["/Common/vs2"] = &Virtual{Name: "/Common/vs2", Destination: ap(vs2), Enabled: true,
				TranslateAddress: true, TranslatePort: true, Pool: "/Common/b", SNAT: SNAT{Type: SNATNone}, Persist: pers}
			mustApply(t, p, cfg)
			// A stray client of the second virtual first, so that the two
			// rotations differ and only persistence can line them up.
			askFrom(t, net+"99", vs2)
			same := 0
			for j := 0; j < 3; j++ {
				src := fmt.Sprintf("%s%d", net, 50+j)
				first := askFrom(t, src, net+"1:9000")
				second := askFrom(t, src, vs2)
				if !inB[second] {
					t.Fatalf("client %s: second virtual answered %q, not one of its pool's members", src, second)
				}
				switch {
				case second == first:
					same++
				case tc.follow && inB[first]:
					t.Fatalf("client %s: first on %q, second on %q", src, first, second)
				}
				// Its own record keeps it there afterwards.
				if again := askFrom(t, src, vs2); again != second {
					t.Fatalf("client %s: second virtual %q, then %q", src, second, again)
				}
			}
			if !tc.follow && same == 3 {
				t.Fatalf("every client followed its record without the setting")
			}
		})
	}
}

// TestMatchAcrossPools: a client persisted to a member of the pool its
// virtual used before stays there after the virtual changes pools, with
// match-across-pools; without, it is balanced in the new pool.
func TestMatchAcrossPools(t *testing.T) {
	t.Parallel()
	for i, acrossPools := range []bool{true, false} {
		net := fmt.Sprintf("127.28.%d.", 20+i)
		t.Run(fmt.Sprint("match-across-pools ", acrossPools), func(t *testing.T) {
			t.Parallel()
			for _, n := range []string{"11", "12", "13", "14"} {
				startServer(t, net+n+":9000", "N"+n)
			}
			p, _ := newPlane(t)
			build := func(pool string) *Config {
				cfg := basic(net+"1:9000", net+"11:9000", net+"12:9000")
				withPool(cfg, "/Common/b", net+"13:9000", net+"14:9000")
				pers := srcAddr(time.Hour)
				pers.MatchAcrossPools = acrossPools
				cfg.Virtuals["/Common/vs"].Persist = pers
				cfg.Virtuals["/Common/vs"].Pool = pool
				return cfg
			}
			mustApply(t, p, build("/Common/b"))
			src := net + "50"
			before := askFrom(t, src, net+"1:9000")
			if before != "N13 Response" && before != "N14 Response" {
				t.Fatalf("pool b answered %q", before)
			}
			mustApply(t, p, build("/Common/pool"))
			for j := 0; j < 2; j++ {
				got := askFrom(t, src, net+"1:9000")
				if acrossPools && got != before {
					t.Fatalf("with match-across-pools: %q, want %q", got, before)
				}
				if !acrossPools && got != "N11 Response" && got != "N12 Response" {
					t.Fatalf("without match-across-pools: %q, want the new pool's member", got)
				}
			}
			// Another client is balanced in the virtual's pool either way.
			if got := askFrom(t, net+"51", net+"1:9000"); got != "N11 Response" && got != "N12 Response" {
				t.Fatalf("new client: %q", got)
			}
		})
	}
}
