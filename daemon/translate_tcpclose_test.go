package daemon

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestTCPCloseTranslated: the fastl4 and tcp profiles' close handling
// reaches the virtual's TCPClose, time-wait 0, max-retrans/minimum-rto
// and md5-signature its sides (the pass phrase in clear, though the
// configuration keeps it sealed); defaults cost nothing (nil); bad values
// and md5-signature without a usable pass phrase are refused.
func TestTCPCloseTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.14.9.11:80 }",
		"create ltm profile fastl4 loose loose-close enabled tcp-close-timeout 7 client-timeout 3",
		"create ltm profile fastl4 rst reset-on-client-fin enabled tcp-time-wait-timeout 0",
		"create ltm profile fastl4 tw tcp-time-wait-timeout 500",
		"create ltm profile tcp timers close-wait-timeout 4 fin-wait-timeout 6 zero-window-timeout 1500 time-wait-timeout 0 max-retrans 3 minimum-rto 200",
		"create ltm profile tcp shorter close-wait-timeout 2 fin-wait-timeout 9",
		"create ltm profile tcp md5 md5-signature enabled md5-signature-passphrase Sesame42",
		"create ltm profile tcp buf proxy-buffer-high 40000",
		"create ltm profile tcp pace rate-pace-max-rate 125000 proxy-buffer-high 40000 proxy-buffer-low 10000 mptcp enabled",
		"create ltm profile tcp nopace rate-pace disabled rate-pace-max-rate 125000",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not act") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	if out, _ := run(t, s, "list ltm profile tcp md5"); strings.Contains(out, "Sesame42") {
		t.Fatalf("the pass phrase is listed in clear: %s", out)
	}
	timers := &dataplane.TCPSide{NoLinger: true, UserTimeout: 3 * time.Second}
	for _, c := range []struct {
		name, profiles string
		close          *dataplane.TCPClose
		client, server *dataplane.TCPSide
	}{
		{"tcp defaults", "tcp", nil, nil, nil},
		{"fastl4 defaults", "fastL4", nil, nil, nil},
		{"loose", "loose", &dataplane.TCPClose{Loose: true, AfterFIN: 7 * time.Second, ClientTimeout: 3 * time.Second}, nil, nil},
		{"reset on client fin", "rst", &dataplane.TCPClose{ResetOnClientFIN: true}, &dataplane.TCPSide{NoLinger: true}, &dataplane.TCPSide{NoLinger: true}},
		{"time-wait not 0", "tw", nil, nil, nil},
		{"tcp timers", "timers", &dataplane.TCPClose{AfterFIN: 4 * time.Second, FinWait: 6 * time.Second, ZeroWindow: 1500 * time.Millisecond}, timers, timers},
		{"shorter of two sides", "timers { context clientside } shorter { context serverside }", &dataplane.TCPClose{AfterFIN: 2 * time.Second, FinWait: 6 * time.Second, ZeroWindow: 1500 * time.Millisecond}, timers, nil},
		{"md5", "md5", nil, &dataplane.TCPSide{MD5Key: "Sesame42"}, &dataplane.TCPSide{MD5Key: "Sesame42"}},
		{"proxy buffer", "tcp { context clientside } buf { context serverside }", nil, nil, &dataplane.TCPSide{NotSentLowat: 40000}},
		{"pacing, low, mptcp", "pace", nil, &dataplane.TCPSide{PacingRate: 125000, NotSentLowat: 40000, NotSentLow: 10000, MPTCP: true}, &dataplane.TCPSide{PacingRate: 125000, NotSentLowat: 40000, NotSentLow: 10000, MPTCP: true}},
		{"rate-pace disabled", "nopace", nil, nil, nil},
	} {
		run(t, s, "delete ltm virtual v")
		if out, err := run(t, s, "create ltm virtual v destination 127.14.9.1:80 pool p profiles replace-all-with { "+c.profiles+" }"); err != "" {
			t.Fatalf("%s: %s %s", c.name, out, err)
		}
		dc, skipped := Translate(e.schema, e.reveal(e.Config())[0])
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.name, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if (v.TCPClose == nil) != (c.close == nil) || v.TCPClose != nil && *v.TCPClose != *c.close {
			t.Errorf("%s: close %+v, want %+v", c.name, v.TCPClose, c.close)
		}
		if !sameSide(v.ClientTCP, c.client) || !sameSide(v.ServerTCP, c.server) {
			t.Errorf("%s: client %+v server %+v; want %+v %+v", c.name, v.ClientTCP, v.ServerTCP, c.client, c.server)
		}
	}
	for _, bad := range []struct{ setup, cmd, why string }{
		{"", "modify ltm profile tcp timers close-wait-timeout -1", "is not a valid value"},
		{"", "modify ltm profile tcp timers zero-window-timeout soon", "is not a valid value"},
		{"", "modify ltm profile fastl4 loose loose-close sometimes", "is not a valid value"},
		{"", "modify ltm profile fastl4 loose client-timeout -5", "is not a valid value"},
		{"", "modify ltm profile tcp buf proxy-buffer-high 0", "out of range"},
		{"", "modify ltm profile tcp pace rate-pace-max-rate -1", "is not a valid value"},
		{"", "modify ltm profile tcp pace rate-pace-max-rate 4294967295", "out of range"},
		{"", "modify ltm profile tcp pace mptcp sometimes", "is not a valid value"},
		{"", "modify ltm profile tcp pace proxy-buffer-low 0", "out of range"},
		{"modify ltm virtual v profiles replace-all-with { buf }", "modify ltm profile tcp buf proxy-buffer-low 50000", "proxy-buffer-low (50000) may not be above proxy-buffer-high (40000)"},
		{"modify ltm virtual v profiles replace-all-with { md5 }", "modify ltm profile tcp md5 md5-signature-passphrase none", "md5-signature enabled needs an md5-signature-passphrase"},
		{"", "modify ltm profile tcp md5 md5-signature-passphrase " + strings.Repeat("k", 81), "md5-signature enabled needs an md5-signature-passphrase"},
	} {
		if bad.setup != "" {
			if out, err := run(t, s, bad.setup); err != "" {
				t.Fatalf("%s: %s %s", bad.setup, out, err)
			}
		}
		before := e.Config()
		if _, err := run(t, s, bad.cmd); !strings.Contains(err, bad.why) {
			t.Errorf("%s: error %q, want %q", bad.cmd, err, bad.why)
		}
		if e.Config() != before {
			t.Errorf("%s changed the configuration", bad.cmd)
		}
	}
}
