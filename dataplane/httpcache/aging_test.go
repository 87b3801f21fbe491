package httpcache

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestAgingRate: cache-aging-rate wears an unused entry's priority down,
// so that after long enough disuse the least recently used entry goes
// whatever priority a rule once gave it; rate 0 never wears it.
func TestAgingRate(t *testing.T) {
	for _, tc := range []struct {
		name string
		rate int
		idle time.Duration // between the stores and /4's
		prio []int8        // of /1, /2, /3, stored in that order
		want string        // /1 /2 /3 /4 kept after /4 is stored
	}{
		{"rate 0 never ages", 0, 59 * time.Minute, []int8{5, 0, 0}, "true false true true"},
		{"rate 10, still high", 10, 300 * time.Millisecond, []int8{5, 0, 0}, "true false true true"},
		{"rate 10, worn off", 10, 500 * time.Millisecond, []int8{5, 0, 0}, "false true true true"},
		{"rate 9, not yet", 9, 900 * time.Millisecond, []int8{5, 0, 0}, "true false true true"},
		{"rate 9, worn off", 9, time.Second, []int8{5, 0, 0}, "false true true true"},
		{"rate 1, not yet", 1, 200 * time.Second, []int8{5, 0, 0}, "true false true true"},
		{"rate 1, worn off", 1, 256 * time.Second, []int8{5, 0, 0}, "false true true true"},
		// Worn down unevenly: 8-7=1 against 3-7=0, /2 (3) goes first even
		// though /1 is older.
		{"rate 10, lowest left goes", 10, 700 * time.Millisecond, []int8{8, 3, 9}, "true false true true"},
	} {
		cfg := testConfig()
		cfg.MaxEntries, cfg.AgingRate = 3, tc.rate
		c := mustNew(t, cfg)
		for i, p := range tc.prio {
			c.StorePriority([]byte("a"), []byte(fmt.Sprint("/", i+1)), response("200 OK"), body100, p, t0)
		}
		now := t0.Add(tc.idle)
		if !c.Store([]byte("a"), []byte("/4"), response("200 OK"), body100, now) {
			t.Fatalf("%s: /4 not stored", tc.name)
		}
		var got []bool
		for i := 1; i <= 4; i++ {
			_, ok := c.Lookup(nil, []byte("a"), []byte(fmt.Sprint("/", i)), true, now)
			got = append(got, ok)
		}
		if s := fmt.Sprint(got[0], got[1], got[2], got[3]); s != tc.want {
			t.Errorf("%s: kept %s, want %s", tc.name, s, tc.want)
		}
	}
}

// TestAgingRenewedByUse: a hit renews an entry's priority, so one that
// is asked for keeps it.
func TestAgingRenewedByUse(t *testing.T) {
	cfg := testConfig()
	cfg.MaxEntries, cfg.AgingRate = 3, 10
	c := mustNew(t, cfg)
	c.StorePriority([]byte("a"), []byte("/1"), response("200 OK"), body100, 5, t0)
	c.Store([]byte("a"), []byte("/2"), response("200 OK"), body100, t0)
	c.Store([]byte("a"), []byte("/3"), response("200 OK"), body100, t0)
	later := t0.Add(time.Second)
	c.Lookup(nil, []byte("a"), []byte("/1"), true, later) // renewed, and now the most recent
	c.Lookup(nil, []byte("a"), []byte("/2"), true, later)
	c.Lookup(nil, []byte("a"), []byte("/3"), true, later)
	// /1 is the least recently used, but its priority is fresh: /2 goes.
	c.Store([]byte("a"), []byte("/4"), response("200 OK"), body100, later.Add(100*time.Millisecond))
	if _, ok := c.Lookup(nil, []byte("a"), []byte("/1"), true, later); !ok {
		t.Error("/1, used since, was evicted")
	}
	if _, ok := c.Lookup(nil, []byte("a"), []byte("/2"), true, later); ok {
		t.Error("/2 was kept")
	}
}

// TestIncludeOverride: the answers to cache-uri-include-override URIs
// are kept despite what their members say, fresh for cache-max-age when
// the member gave them no lifetime; the other rules still hold, and
// exclude still wins.
func TestIncludeOverride(t *testing.T) {
	date := "Date: " + httpDate(t0)
	for _, tc := range []struct {
		name    string
		uri     string
		head    []byte
		want    bool
		expires time.Duration // from t0, when kept
	}{
		{"no-store, overridden", "/app/a.js", response("200 OK", "Cache-Control: no-store"), true, time.Hour},
		{"no-store, not listed", "/other/a.js", response("200 OK", "Cache-Control: no-store"), false, 0},
		{"private", "/app/b", response("200 OK", "Cache-Control: private, max-age=60"), true, time.Minute},
		{"no-cache max-age=0", "/app/c", response("200 OK", "Cache-Control: no-cache, max-age=0"), true, time.Hour},
		{"Pragma no-cache", "/app/d", response("200 OK", "Pragma: no-cache"), true, time.Hour},
		{"Expires in the past", "/app/e", response("200 OK", date, "Expires: "+httpDate(t0.Add(-time.Minute))), true, time.Hour},
		{"Set-Cookie still refused", "/app/f", response("200 OK", "Cache-Control: no-store", "Set-Cookie: s=1"), false, 0},
		{"status still refused", "/app/g", response("302 Found", "Location: /x"), false, 0},
		{"excluded wins", "/app/private/h", response("200 OK", "Cache-Control: no-store"), false, 0},
		{"include list passed by", "/app/i", response("200 OK"), true, time.Hour},
	} {
		cfg := testConfig()
		cfg.URIInclude = []string{`^/only-this$`}
		cfg.URIOverride = []string{`^/app/`}
		cfg.URIExclude = []string{`/private/`}
		c := mustNew(t, cfg)
		got := c.Store([]byte("a"), []byte(tc.uri), tc.head, body100, t0)
		if got != tc.want {
			t.Errorf("%s: stored %v, want %v", tc.name, got, tc.want)
			continue
		}
		if !got {
			continue
		}
		if _, ok := c.Lookup(nil, []byte("a"), []byte(tc.uri), false, t0.Add(tc.expires-time.Second)); !ok {
			t.Errorf("%s: stale before %v", tc.name, tc.expires)
		}
		if _, ok := c.Lookup(nil, []byte("a"), []byte(tc.uri), false, t0.Add(tc.expires)); ok {
			t.Errorf("%s: still fresh at %v", tc.name, tc.expires)
		}
	}
}

// TestAgingOverrideRefused: a rate off BIG-IP's scale, and an override
// pattern that is no regular expression, are refused.
func TestAgingOverrideRefused(t *testing.T) {
	for _, tc := range []struct {
		mod  func(*Config)
		want string
	}{
		{func(c *Config) { c.AgingRate = 11 }, "cache-aging-rate 11 is out of range: 0 to 10"},
		{func(c *Config) { c.AgingRate = -1 }, "cache-aging-rate -1 is out of range: 0 to 10"},
		{func(c *Config) { c.URIOverride = []string{"*.js"} }, `cache-uri-include-override "*.js" is not a regular expression`},
	} {
		cfg := testConfig()
		tc.mod(&cfg)
		if _, err := New(cfg); err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("New = %v, want %q", err, tc.want)
		}
	}
}
