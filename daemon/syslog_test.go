package daemon

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestRuleLogDestinations: a rule's log lines go to STATE-DIR/log/ltm
// and, once sys syslog names a remote server, to it as RFC 5424 over UDP.
func TestRuleLogDestinations(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	labelServer(t, "127.0.97.22:9000", "S1 Response")
	udp, err := net.ListenPacket("udp", "127.0.97.12:5514")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []struct{ cmd, err string }{
		{"create ltm pool app2 members add { 127.0.97.22:9000 }", ""},
		{"create ltm rule logit {\nwhen CLIENT_ACCEPTED { log local0.warn \"client [IP::client_addr]\" }\n}", ""},
		{"create ltm virtual vs_log destination 127.0.97.2:9000 pool app2 rules { logit }", ""},
		{"modify sys syslog remote-servers add { r1 { host syslog.example.com } }", "host \"syslog.example.com\" must be an IP address"},
		{"modify sys syslog remote-servers add { r1 { host 127.0.97.12 remote-port 5514 } }", ""},
	} {
		_, err := run(t, s, c.cmd)
		if (c.err == "") != (err == "") || !strings.Contains(err, c.err) {
			t.Fatalf("%s: error %q, want %q", c.cmd, err, c.err)
		}
	}
	if a := askVS(t, "127.0.97.2:9000", "C1"); a != "S1 Response" {
		t.Fatalf("virtual answered %q", a)
	}
	udp.SetReadDeadline(time.Now().Add(5 * time.Second))
	buf := make([]byte, 2048)
	n, _, err := udp.ReadFrom(buf)
	if err != nil {
		t.Fatalf("nothing reached the syslog server: %v", err)
	}
	if got := string(buf[:n]); !strings.HasPrefix(got, "<132>1 ") || !strings.HasSuffix(got, " tmm "+strconv.Itoa(os.Getpid())+" - - Rule /Common/logit <CLIENT_ACCEPTED>: client 127.0.0.1") {
		t.Errorf("syslog message %q", got)
	}
	e.logs.Sync()
	raw, err := os.ReadFile(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), " warning tmm[") || !strings.Contains(string(raw), "]: Rule /Common/logit <CLIENT_ACCEPTED>: client 127.0.0.1\n") {
		t.Errorf("log file:\n%s", raw)
	}
}
