package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestMonitorOptsTranslated: ip-dscp, the adaptive settings, an http
// monitor's account and an https monitor's TLS (its own cert, key,
// cipherlist and compatibility, or a server-ssl profile) reach the
// dataplane, without the kept-only warning, and listed as set.
func TestMonitorOptsTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	pki := newTestPKI(t)
	crt, key := pki.leaf(t, "mon", "monitor.example", true)
	mustRun(t, s,
		"install sys crypto cert mon.crt from-local-file "+crt,
		"install sys crypto key mon.key from-local-file "+key,
		"create ltm profile server-ssl mon_ssl cert mon.crt key mon.key ciphers ECDHE",
	)
	for _, c := range []string{
		"create ltm monitor http m_auth username monitor password s3cret ip-dscp 46",
		"create ltm monitor https m_tls username monitor password s3cret cert mon.crt key mon.key cipherlist ECDHE compatibility disabled",
		"create ltm monitor https m_prof ssl-profile mon_ssl",
		"create ltm monitor tcp m_adapt adaptive enabled adaptive-limit 150 adaptive-divergence-type absolute adaptive-divergence-value 40 adaptive-sampling-timespan 60",
		"create ltm monitor udp m_udp ip-dscp 10",
		"create ltm monitor inband m_inb_adapt adaptive enabled adaptive-divergence-type absolute adaptive-divergence-value 40 adaptive-limit 500 adaptive-sampling-timespan 60 response-time 2",
	} {
		out, err := run(t, s, c)
		if err != "" {
			t.Fatalf("%s: %s", c, err)
		}
		if strings.Contains(out, "does not act on") {
			t.Errorf("%s: %s", c, out)
		}
	}
	// What a probe cannot act on stays kept-only: an external program's
	// sockets, a tcp monitor's account.
	for _, c := range []string{
		"create ltm monitor inband m_inband ip-dscp 10",
		"create ltm monitor tcp m_tcp_user username monitor",
	} {
		if out, err := run(t, s, c); err != "" || !strings.Contains(out, "does not act on") {
			t.Errorf("%s: %q %q, want the kept-only warning", c, out, err)
		}
	}
	dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	if m := dc.Monitors["/Common/m_auth"]; m == nil || m.Username != "monitor" || m.Password != "s3cret" || m.DSCP != 46 || m.TLS != nil || m.Adaptive != nil {
		t.Errorf("m_auth: %+v", m)
	}
	if m := dc.Monitors["/Common/m_tls"]; m == nil || m.Username != "monitor" || m.TLS == nil || m.TLS.Ciphers != "ECDHE" || m.TLS.Compatibility ||
		m.TLS.Certificate == nil || m.TLS.Certificate.Leaf.Subject.CommonName != "monitor.example" || m.TLS.Profile != nil {
		t.Errorf("m_tls: %+v", m)
	}
	if m := dc.Monitors["/Common/https"]; m == nil || m.TLS == nil || !m.TLS.Compatibility || m.TLS.Ciphers != "DEFAULT:+SHA:+3DES:+kEDH" {
		t.Errorf("built-in https: %+v", m)
	}
	if m := dc.Monitors["/Common/m_prof"]; m == nil || m.TLS == nil || m.TLS.Profile == nil || len(m.TLS.Profile.Certificates) != 1 || m.TLS.ProfileID == "" {
		t.Errorf("m_prof: %+v", m)
	}
	want := dataplane.AdaptiveMonitor{Divergence: 40, Limit: 150 * time.Millisecond, Timespan: time.Minute}
	if m := dc.Monitors["/Common/m_adapt"]; m == nil || m.Adaptive == nil || *m.Adaptive != want {
		t.Errorf("m_adapt: %+v", m)
	}
	inbWant := dataplane.AdaptiveMonitor{Divergence: 40, Limit: 500 * time.Millisecond, Timespan: time.Minute}
	if m := dc.Monitors["/Common/m_inb_adapt"]; m == nil || m.Adaptive == nil || *m.Adaptive != inbWant || m.Inband == nil || m.Inband.ResponseTime != 2*time.Second {
		t.Errorf("m_inb_adapt: %+v", m)
	}
	if m := dc.Monitors["/Common/m_udp"]; m == nil || m.DSCP != 10 {
		t.Errorf("m_udp: %+v", m)
	}
	// The same configuration translated again keeps the profile's ID, so
	// a commit leaves the monitor's instances running.
	dc2, _ := Translate(e.schema, e.reveal(e.Config())[0])
	if a, b := dc.Monitors["/Common/m_prof"].TLS.ProfileID, dc2.Monitors["/Common/m_prof"].TLS.ProfileID; a != b {
		t.Errorf("profile ID changed without a change: %q, %q", a, b)
	}
	out, _ := run(t, s, "list ltm monitor http m_auth")
	for _, w := range []string{"username monitor", "password $M$", "ip-dscp 46"} {
		if !strings.Contains(out, w) {
			t.Errorf("list lacks %q:\n%s", w, out)
		}
	}
	out, _ = run(t, s, "list ltm monitor https m_tls")
	for _, w := range []string{"cert mon.crt", "key mon.key", "cipherlist ECDHE", "compatibility disabled"} {
		if !strings.Contains(out, w) {
			t.Errorf("list lacks %q:\n%s", w, out)
		}
	}
}

// TestMonitorOptsRefused: what cannot run is refused, and nothing changes.
func TestMonitorOptsRefused(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	pki := newTestPKI(t)
	crt, _ := pki.leaf(t, "mon", "monitor.example", true)
	mustRun(t, s, "install sys crypto cert mon.crt from-local-file "+crt)
	for _, c := range []struct{ cmd, err string }{
		{"create ltm monitor http bad ip-dscp 64", `"64" is out of range for "ip-dscp"`},
		{"create ltm monitor udp bad ip-dscp 99", `"99" is out of range for "ip-dscp"`},
		{"create ltm monitor tcp bad adaptive-divergence-type median", "median"},
		{"create ltm monitor tcp bad adaptive enabled adaptive-limit indefinite", `adaptive-limit "indefinite" is not a number`},
		{"create ltm monitor https bad cert mon.crt", "cert and key go together"},
		{"create ltm monitor https bad cert nosuch.crt key nosuch.key", "(/Common/nosuch.crt) was not found"},
		{"create ltm monitor https bad ssl-profile nosuch", "nosuch"},
		{"create ltm monitor https bad cipherlist BOGUS", "cipherlist"},
	} {
		_, err := run(t, s, c.cmd)
		if err == "" || !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q, want one saying %q", c.cmd, err, c.err)
		}
		if out, _ := run(t, s, "list ltm monitor"); strings.Contains(out, " bad ") {
			t.Fatalf("%s: refused, yet kept:\n%s", c.cmd, out)
		}
	}
}
