package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// TestHashPayloadPersistence runs a hash persistence profile that finds
// its key in the client's first bytes (hash-offset and hash-length, or
// the bytes between hash-start-pattern and hash-end-pattern within
// hash-buffer-limit) on an L4 virtual with three members: a key's
// connections all reach one member, different keys spread over the pool,
// and a client whose key is not within the limit is balanced as usual
// and recorded nowhere. With hash-algorithm carp the same holds with no
// records kept.
func TestHashPayloadPersistence(t *testing.T) {
	members := []string{"127.7.1.11:7001", "127.7.1.12:7001", "127.7.1.13:7001"}
	for i, m := range members {
		startServer(t, m, string(rune('A'+i)))
	}
	for i, tc := range []struct {
		name        string
		off, length int
		start, end  string
		limit       int
		carp        bool
		line        func(key string) string // a client's first line carrying key
	}{
		{name: "offset and length", off: 4, length: 8,
			line: func(k string) string { return "ACCT" + k + " balance?" }},
		{name: "patterns", start: `user=`, end: `[;&\s]`, limit: 64,
			line: func(k string) string { return "op=get&user=" + k + "&v=1" }},
		{name: "carp", start: `user=`, end: `[;&\s]`, limit: 64, carp: true,
			line: func(k string) string { return "op=get&user=" + k + "&v=1" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.7.1.%d:7001", i+1)
			cfg := basic(vs, members...)
			pl, err := persist.NewPayload(tc.off, tc.length, tc.start, tc.end, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/hash_payload", Method: PersistHash,
				Timeout: 300 * time.Second, Payload: pl, CARP: tc.carp}
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			connect := func(first string) string {
				t.Helper()
				c, err := net.DialTimeout("tcp", vs, 5*time.Second)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := c.Write([]byte(first + "\n")); err != nil {
					t.Fatal(err)
				}
				line, err := bufio.NewReader(c).ReadString('\n')
				if err != nil {
					t.Fatalf("%q: %v", first, err)
				}
				return strings.Fields(line)[0]
			}
			keys := []string{"10000001", "10000002", "10000003", "10000004", "10000005", "10000006"}
			first := map[string]string{}
			spread := map[string]bool{}
			for _, k := range keys {
				first[k] = connect(tc.line(k))
				spread[first[k]] = true
			}
			for round := 0; round < 3; round++ {
				for _, k := range keys {
					if got := connect(tc.line(k)); got != first[k] {
						t.Fatalf("key %s went to %s, first to %s", k, got, first[k])
					}
				}
			}
			if len(spread) < 2 {
				t.Errorf("six keys all went to %v", spread)
			}
			if tc.limit > 0 {
				// The key past the buffer limit: not found, balanced.
				far := strings.Repeat("x", tc.limit) + tc.line("10000001")
				seen := map[string]bool{}
				for j := 0; j < 6; j++ {
					seen[connect(far)] = true
				}
				if len(seen) < 2 {
					t.Errorf("clients whose key is past the limit went to %v, want them balanced", seen)
				}
			}
			for k, m := range checkPayloadRecords(t, p, first, tc.carp) {
				if !strings.HasSuffix(m, ":7001") {
					t.Errorf("record %q -> %s: not a member", k, m)
				}
			}
		})
	}
}

// checkPayloadRecords: the persistence table holds one record per key
// sent (first: each key's first member), pointing at that member; none
// with carp. It returns the records' members by key.
func checkPayloadRecords(t *testing.T, p *Plane, first map[string]string, carp bool) map[string]string {
	t.Helper()
	recs := map[string]string{}
	p.PersistRecords(persist.Filter{}, func(r *persist.Record) bool {
		recs[r.Key.Str] = r.Member.String()
		return true
	})
	want := len(first)
	if carp {
		want = 0
	}
	if len(recs) != want {
		t.Errorf("records %v, want %d", recs, want)
	}
	for k, m := range recs {
		if first[k] == "" {
			t.Errorf("record %q -> %s: not one of the keys sent", k, m)
		}
	}
	return recs
}
