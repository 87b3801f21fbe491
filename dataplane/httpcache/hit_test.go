package httpcache

import (
	"fmt"
	"testing"
	"time"
)

// TestLookupHitCounts: each hit counts on its entry, this one included,
// and reports the answer's age and head length; a new answer for the URI
// starts again from none.
func TestLookupHitCounts(t *testing.T) {
	c := mustNew(t, testConfig())
	c.Store([]byte("a"), []byte("/x"), response("200 OK", "Age: 4"), body100, t0)
	for i, tc := range []struct {
		after time.Duration
		head  bool
		hits  uint64
		age   int64
	}{
		{0, false, 1, 4},
		{3 * time.Second, true, 2, 7},
		{10 * time.Second, false, 3, 14},
	} {
		out, hit, ok := c.LookupHit(nil, []byte("a"), []byte("/x"), tc.head, t0.Add(tc.after))
		if !ok || hit.Hits != tc.hits || hit.Age != tc.age {
			t.Fatalf("lookup %d: ok %v, %+v; want hits %d age %d", i, ok, hit, tc.hits, tc.age)
		}
		if want := fmt.Sprintf("Age: %d\r\n\r\n", tc.age); string(out[hit.HeadLen-len(want):hit.HeadLen]) != want {
			t.Errorf("lookup %d: head ends %q", i, out[:hit.HeadLen])
		}
		if body := out[hit.HeadLen:]; (len(body) == 0) != tc.head {
			t.Errorf("lookup %d: body of %d bytes", i, len(body))
		}
	}
	c.Store([]byte("a"), []byte("/x"), response("200 OK"), body100, t0)
	if _, hit, _ := c.LookupHit(nil, []byte("a"), []byte("/x"), true, t0); hit.Hits != 1 {
		t.Errorf("a new answer's first hit counts %d", hit.Hits)
	}
}

// TestEvictPriority: making room passes over the entries a rule gave a
// priority (CACHE::priority) for those of a lower one, least recently
// used first among them.
func TestEvictPriority(t *testing.T) {
	for _, tc := range []struct {
		name string
		prio []int8 // of /1, /2, /3, stored in that order
		want string // /1 /2 /3 /4 kept after /4 is stored
	}{
		{"none", []int8{0, 0, 0}, "false true true true"},
		{"oldest kept", []int8{5, 0, 0}, "true false true true"},
		{"lowest goes", []int8{5, 3, 8}, "true false true true"},
		{"all high", []int8{9, 9, 9}, "false true true true"},
	} {
		cfg := testConfig()
		cfg.MaxEntries = 3
		c := mustNew(t, cfg)
		for i, p := range tc.prio {
			c.StorePriority([]byte("a"), []byte(fmt.Sprint("/", i+1)), response("200 OK"), body100, p, t0)
		}
		if !c.Store([]byte("a"), []byte("/4"), response("200 OK"), body100, t0) {
			t.Fatalf("%s: /4 not stored", tc.name)
		}
		var got []bool
		for i := 1; i <= 4; i++ {
			_, ok := c.Lookup(nil, []byte("a"), []byte(fmt.Sprint("/", i)), true, t0)
			got = append(got, ok)
		}
		if s := fmt.Sprint(got[0], got[1], got[2], got[3]); s != tc.want {
			t.Errorf("%s: kept %s, want %s", tc.name, s, tc.want)
		}
	}
}
