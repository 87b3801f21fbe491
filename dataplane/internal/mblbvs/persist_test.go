package mblbvs

import (
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

func TestPersistKeyEncoding(t *testing.T) {
	for _, c := range []struct {
		mode    persist.Mode
		timeout time.Duration
		key     string
	}{
		{persist.Universal, -1, "session 42"},
		{persist.Universal, 90 * time.Second, "a b c"},
		{persist.SourceAddress, 0, "10.1.2.0"},
		{persist.Universal, 1500 * time.Millisecond, ""},
	} {
		mode, to, key, ok := decodePersist(encodePersist(c.mode, c.timeout, c.key))
		if !ok || mode != c.mode || to != c.timeout || key != c.key {
			t.Errorf("%+v came back as %v %v %q %v", c, mode, to, key, ok)
		}
	}
	for _, bad := range []string{"", "1", "1 x key", "x 5 key"} {
		if _, _, _, ok := decodePersist(bad); ok {
			t.Errorf("%q decoded", bad)
		}
	}
}

func TestMaskBits(t *testing.T) {
	for _, c := range []struct {
		mask string
		want int
	}{{"255.255.255.0", 24}, {"255.255.0.0", 16}, {"0.0.0.0", 0}, {"255.255.255.255", 32}, {"ffff:ffff:ffff:ffff::", 64}} {
		if got := maskBits(netip.MustParseAddr(c.mask)); got != c.want {
			t.Errorf("%s: %d, want %d", c.mask, got, c.want)
		}
	}
}

func TestPersistKeyEncodingAllocations(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { encodePersist(persist.Cookie, -1, "w2-77b1e0") }); n > 1 {
		t.Errorf("encode: %v allocations, want at most 1", n)
	}
	s := encodePersist(persist.Universal, 90*time.Second, "acct-7")
	if n := testing.AllocsPerRun(100, func() { decodePersist(s) }); n != 0 {
		t.Errorf("decode: %v allocations, want 0", n)
	}
}
