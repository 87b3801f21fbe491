package daemon

import (
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// TestHSLSendsToPoolMembers: a rule's HSL::send reaches the syslog pool's
// member over UDP, from a real virtual, and is counted.
func TestHSLSendsToPoolMembers(t *testing.T) {
	dir := t.TempDir()
	logs := &syncBuf{}
	e, err := Open(Options{StateDir: dir, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	defer p.Close()
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs)
		}
	}()
	labelServer(t, "127.0.97.21:9000", "S1 Response")
	udp, err := net.ListenPacket("udp", "127.0.97.11:5514")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, err string }{
		{"create ltm pool app members add { 127.0.97.21:9000 }", ""},
		{"create ltm pool syslog_pool members add { 127.0.97.11:5514 }", ""},
		{"create ltm rule hsl_log {\nwhen CLIENT_ACCEPTED {\n  set hsl [HSL::open -proto UDP -pool syslog_pool]\n  HSL::send $hsl \"<134>client [IP::client_addr] to [IP::local_addr]\"\n}\n}", ""},
		{"create ltm virtual vs_hsl destination 127.0.97.1:9000 pool app rules { hsl_log }", ""},
	} {
		_, err := run(t, s, c.cmd)
		if (c.err == "") != (err == "") || !strings.Contains(err, c.err) {
			t.Fatalf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if a := askVS(t, "127.0.97.1:9000", "C1"); a != "S1 Response" {
		t.Fatalf("virtual answered %q", a)
	}
	udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 1024)
	n, _, err := udp.ReadFrom(buf)
	if err != nil {
		t.Fatalf("no HSL message: %v", err)
	}
	if got := string(buf[:n]); got != "<134>client 127.0.0.1 to 127.0.97.1" {
		t.Errorf("HSL message %q", got)
	}
	// The datagram may arrive before the sender counts it sent.
	eventually(t, 10*time.Second, "the message counted as sent", func() bool {
		st := e.HSLStats()
		return len(st) == 1 && st[0].Sent == 1
	})
	if st := e.HSLStats(); len(st) != 1 || st[0].Pool != "syslog_pool" || st[0].Sent != 1 {
		t.Errorf("stats %+v", st)
	}
	out, errText := run(t, s, "show sys syslog")
	for _, w := range []string{"Sys::Syslog", "Local Log File", "log/ltm", "Sys::High Speed Logging: syslog_pool (UDP)", "Sent", "Dropped (Queue Full)"} {
		if !strings.Contains(out, w) || errText != "" {
			t.Errorf("show sys syslog lacks %q (%s):\n%s", w, errText, out)
		}
	}
}
