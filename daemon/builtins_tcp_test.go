package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestBuiltinTCPProfilesActed checks that a virtual on one of F5's tcp
// built-ins gets the socket settings of F5's values for it (objects'
// TestBuiltinTCPValues checks the values themselves): Nagle, quick ACKs,
// buffers, the not-sent low-water marks, the user timeout of
// minimum-rto, MPTCP, the congestion control where Linux has it; that
// tcp-legacy, whose F5 values openltm does not act on, costs nothing;
// and that woodside, F5's own algorithm, is warned of.
func TestBuiltinTCPProfilesActed(t *testing.T) {
	defer func(f func() map[string]bool) { congestionAvailable = f }(congestionAvailable)
	congestionAvailable = func() map[string]bool { return map[string]bool{"cubic": true, "illinois": true} }
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	if out, err := run(t, s, "create ltm pool p members add { 127.252.130.11:20080 }"); err != "" {
		t.Fatalf("%s %s", out, err)
	}
	for _, c := range []struct {
		profile string
		want    *dataplane.TCPSide
	}{
		{"tcp-legacy", nil},
		{"tcp-lan-optimized", &dataplane.TCPSide{NotSentLowat: 131072, NotSentLow: 98304}},
		{"tcp-wan-optimized", &dataplane.TCPSide{Nagle: true, NotSentLowat: 131072, NotSentLow: 131072}},
		{"tcp-mobile-optimized", &dataplane.TCPSide{Nagle: true, QuickAck: true, SendBuffer: 131072, RecvBuffer: 131072, NotSentLowat: 131072, NotSentLow: 131072}},
		{"f5-tcp-lan", &dataplane.TCPSide{UserTimeout: dataplane.UserTimeout(8, 200*time.Millisecond), NotSentLowat: 65535}},
		{"f5-tcp-wan", &dataplane.TCPSide{QuickAck: true, SendBuffer: 262144, RecvBuffer: 131072, UserTimeout: dataplane.UserTimeout(8, 500*time.Millisecond), NotSentLowat: 262144, NotSentLow: 196608}},
		{"f5-tcp-mobile", &dataplane.TCPSide{SendBuffer: 262144, RecvBuffer: 131072, NotSentLowat: 262144, NotSentLow: 196608}},
		{"f5-tcp-progressive", &dataplane.TCPSide{SendBuffer: 262144, RecvBuffer: 131072, NotSentLowat: 262144, NotSentLow: 196608}},
		{"mptcp-mobile-optimized", &dataplane.TCPSide{Nagle: true, QuickAck: true, SendBuffer: 262144, RecvBuffer: 131072, Congestion: "illinois", NotSentLowat: 131072, NotSentLow: 131072, MPTCP: true}},
	} {
		run(t, s, "delete ltm virtual v")
		out, err := run(t, s, "create ltm virtual v destination 127.252.130.1:20080 pool p profiles replace-all-with { "+c.profile+" }")
		if err != "" {
			t.Fatalf("%s: %s %s", c.profile, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.profile, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if !sameSide(v.ClientTCP, c.want) || !sameSide(v.ServerTCP, c.want) {
			t.Errorf("%s: client %+v server %+v, want %+v", c.profile, v.ClientTCP, v.ServerTCP, c.want)
		}
		ws := strings.Join(tcpWarnings(e.schema, e.Config(), congestionAvailable()), "\n")
		woodside := strings.HasPrefix(c.profile, "f5-tcp-") && c.profile != "f5-tcp-lan"
		if got := strings.Contains(ws, "congestion-control woodside has no Linux equivalent"); got != woodside {
			t.Errorf("%s: warnings %q; woodside warned: %v, want %v", c.profile, ws, got, woodside)
		}
	}
}

// TestBuiltinChildrenActed checks the other children openltm shipped
// first with their parent's settings: optimized-caching's cache and
// wan-optimized-compression's policy are built from F5's values. The
// insecure-compatible ssl ones, which now carry their cipher strings and
// warn of the suites Go cannot do, are TestBuiltinSSLCiphersServe's.
func TestBuiltinChildrenActed(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.252.130.11:20443 }",
		"create ltm virtual v1 destination 127.252.130.1:20443 pool p profiles replace-all-with { tcp http optimized-caching wan-optimized-compression }",
	} {
		if out, err := run(t, s, c); err != "" || out != "" {
			t.Fatalf("%s: %q %q", c, out, err)
		}
	}
	cfg := e.Config()
	tr := &translator{s: e.schema, cfg: cfg}
	cc, err := tr.cacheConfig(cfg.Get(profileWebAccel, "/Common/optimized-caching"))
	if err != nil {
		t.Fatal(err)
	}
	if cc.Size != 10<<20 || cc.MaxAge != 86400*time.Second || cc.MaxObject != 2000000 || cc.MinObject != 0 || cc.MaxEntries != 10000 {
		t.Errorf("optimized-caching: %+v, want F5's cache-size 10 (MB), cache-max-age 86400, objects 0 to 2000000 bytes, 10000 entries", cc)
	}
	pol, err := tr.compressPolicy(cfg.Get(profileCompress, "/Common/wan-optimized-compression"))
	if err != nil {
		t.Fatal(err)
	}
	if pol.BufferSize != 131072 || !pol.AllowHTTP10 || pol.Level != 1 || pol.MinSize != 1024 {
		t.Errorf("wan-optimized-compression: buffer %d http/1.0 %v level %d min %d, want F5's 131072 true 1 1024", pol.BufferSize, pol.AllowHTTP10, pol.Level, pol.MinSize)
	}
}
