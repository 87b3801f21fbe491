package daemon

import (
	"bufio"
	"log/slog"
	"net"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// lineSink collects what loopback sinks receive: UDP datagrams, or TCP
// lines.
type lineSink struct {
	mu    sync.Mutex
	lines map[string][]string
}

func (s *lineSink) add(who, line string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lines[who] = append(s.lines[who], line)
}

func (s *lineSink) get(who string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.lines[who]...)
}

func (s *lineSink) udp(t *testing.T, addr string) {
	t.Helper()
	c, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	go func() {
		buf := make([]byte, 4096)
		for {
			n, _, err := c.ReadFrom(buf)
			if err != nil {
				return
			}
			s.add(addr, string(buf[:n]))
		}
	}()
}

func (s *lineSink) tcp(t *testing.T, addr string) {
	t.Helper()
	serveEach(t, addr, func(c net.Conn) {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			s.add(addr, sc.Text())
		}
	})
}

// publisherEngine is an engine with a dataplane, for the publisher tests.
func publisherEngine(t *testing.T) (*syncBuf, *Session) {
	t.Helper()
	logs := &syncBuf{}
	e, err := Open(Options{StateDir: t.TempDir(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	p := dataplane.New(dataplane.Options{Logger: e.Logger()})
	t.Cleanup(p.Close)
	if err := e.AttachDataplane(p); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("log:\n%s", logs)
		}
	})
	return logs, e.NewSession("admin").(*Session)
}

// TestPublisherFromARule: a rule's HSL::open -publisher reaches both of
// the publisher's destinations from a real virtual: the raw one over
// UDP as the rule wrote it, the remote-syslog one over TCP behind an
// RFC 3164 header; the local-syslog one writes ltmd's log.
func TestPublisherFromARule(t *testing.T) {
	logs, s := publisherEngine(t)
	sink := &lineSink{lines: map[string][]string{}}
	sink.udp(t, "127.0.253.31:5514")
	sink.tcp(t, "127.0.253.32:6514")
	labelServer(t, "127.0.253.21:9000", "S1 Response")
	mustRun(t, s,
		"create ltm pool app members add { 127.0.253.21:9000 }",
		"create ltm pool raw_pool members add { 127.0.253.31:5514 }",
		"create ltm pool sys_pool members add { 127.0.253.32:6514 }",
		"create sys log-config destination remote-high-speed-log raw_hsl pool-name raw_pool protocol udp",
		"create sys log-config destination remote-high-speed-log sys_hsl pool-name sys_pool protocol tcp",
		"create sys log-config destination remote-syslog sys_fmt remote-high-speed-log sys_hsl format rfc3164 default-facility local3 default-severity notice",
		"create sys log-config publisher pub_two destinations replace-all-with { raw_hsl sys_fmt local-syslog }",
		"create ltm rule pub_log {\nwhen CLIENT_ACCEPTED {\n  set hsl [HSL::open -publisher pub_two]\n  HSL::send $hsl \"client [IP::client_addr]\"\n  HSL::send $hsl \"<190>own [IP::local_addr]\\n\"\n}\n}",
		"create ltm virtual vs_pub destination 127.0.253.20:9000 pool app rules { pub_log }",
	)
	if a := askVS(t, "127.0.253.20:9000", "C1"); a != "S1 Response" {
		t.Fatalf("virtual answered %q", a)
	}
	eventually(t, 10*time.Second, "two messages at each sink", func() bool {
		return len(sink.get("127.0.253.31:5514")) == 2 && len(sink.get("127.0.253.32:6514")) == 2
	})
	if got, want := strings.Join(sink.get("127.0.253.31:5514"), "|"), "client 127.0.0.1|<190>own 127.0.253.20\n"; got != want {
		t.Errorf("raw destination got %q; want %q", got, want)
	}
	header := `[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \S+ tmm: `
	wants := []*regexp.Regexp{regexp.MustCompile(`^<157>` + header + `client 127\.0\.0\.1$`), regexp.MustCompile(`^<190>` + header + `own 127\.0\.253\.20$`)}
	for i, l := range sink.get("127.0.253.32:6514") {
		if !wants[i].MatchString(l) {
			t.Errorf("syslog destination line %d: %q does not match %s", i, l, wants[i])
		}
	}
	eventually(t, 10*time.Second, "the local-syslog line in ltmd's log", func() bool {
		return strings.Contains(logs.String(), "msg=\"client 127.0.0.1\"")
	})
}

// TestPublisherDistributions: a destination's distribution over a
// two-member pool: replicated gives each member every message, balanced
// spreads them.
func TestPublisherDistributions(t *testing.T) {
	_, s := publisherEngine(t)
	sink := &lineSink{lines: map[string][]string{}}
	for _, a := range []string{"127.0.253.41:5514", "127.0.253.42:5514", "127.0.253.43:5514", "127.0.253.44:5514"} {
		sink.udp(t, a)
	}
	labelServer(t, "127.0.253.22:9000", "S1 Response")
	mustRun(t, s,
		"create ltm pool app members add { 127.0.253.22:9000 }",
		"create ltm pool rep_pool members add { 127.0.253.41:5514 127.0.253.42:5514 }",
		"create ltm pool bal_pool members add { 127.0.253.43:5514 127.0.253.44:5514 }",
		"create sys log-config destination remote-high-speed-log rep_hsl pool-name rep_pool protocol udp distribution replicated",
		"create sys log-config destination remote-high-speed-log bal_hsl pool-name bal_pool protocol udp distribution balanced",
		"create sys log-config publisher rep_pub destinations replace-all-with { rep_hsl }",
		"create sys log-config publisher bal_pub destinations replace-all-with { bal_hsl }",
		"create ltm rule dist_log {\nwhen CLIENT_ACCEPTED {\n  set r [HSL::open -publisher rep_pub]\n  set b [HSL::open -publisher /Common/bal_pub]\n  for {set i 0} {$i < 4} {incr i} {\n    HSL::send $r \"r$i\"\n    HSL::send $b \"b$i\"\n  }\n}\n}",
		"create ltm virtual vs_dist destination 127.0.253.23:9000 pool app rules { dist_log }",
	)
	if a := askVS(t, "127.0.253.23:9000", "C1"); a != "S1 Response" {
		t.Fatalf("virtual answered %q", a)
	}
	eventually(t, 10*time.Second, "every message", func() bool {
		return len(sink.get("127.0.253.41:5514")) == 4 && len(sink.get("127.0.253.42:5514")) == 4 &&
			len(sink.get("127.0.253.43:5514"))+len(sink.get("127.0.253.44:5514")) == 4
	})
	if got := strings.Join(sink.get("127.0.253.41:5514"), " "); got != "r0 r1 r2 r3" {
		t.Errorf("replicated member 1 got %q", got)
	}
	if a, b := len(sink.get("127.0.253.43:5514")), len(sink.get("127.0.253.44:5514")); a == 0 || b == 0 {
		t.Errorf("balanced: members got %d and %d messages; want both some", a, b)
	}
}

// TestPublisherRefusals: what a publisher or destination cannot be.
func TestPublisherRefusals(t *testing.T) {
	_, s := publisherEngine(t)
	mustRun(t, s,
		"create ltm pool log_pool members add { 127.0.253.51:5514 }",
		"create sys log-config destination remote-high-speed-log hsl1 pool-name log_pool",
		"create sys log-config publisher pub1 destinations replace-all-with { hsl1 }",
	)
	for _, c := range []struct{ cmd, err string }{
		{"create sys log-config publisher pub2 destinations replace-all-with { nosuch }", "01020036:3: The requested log destination (/Common/nosuch) was not found."},
		{"create sys log-config destination remote-high-speed-log nopool protocol udp", "pool-name is required"},
		{"create sys log-config destination remote-high-speed-log badpool pool-name nosuch_pool", "01020036:3: The requested pool (/Common/nosuch_pool) was not found."},
		{"create sys log-config destination remote-syslog rs1 format rfc5424", "remote-high-speed-log is required"},
		{"create sys log-config destination remote-syslog rs2 remote-high-speed-log local-syslog", "is not a sys log-config destination remote-high-speed-log"},
		{"create sys log-config destination remote-syslog rs3 remote-high-speed-log hsl1 default-severity loud", `"loud" is not a valid value for "default-severity"`},
		{"create sys log-config destination remote-high-speed-log d1 pool-name log_pool distribution random", `"random" is not a valid value for "distribution"`},
		{"delete sys log-config destination remote-high-speed-log hsl1", "in use by a Log Publisher (/Common/pub1)"},
	} {
		_, err := run(t, s, c.cmd)
		if !strings.Contains(err, c.err) {
			t.Errorf("%s: error %q; want %q", c.cmd, err, c.err)
		}
	}
	out, _ := run(t, s, "list sys log-config publisher pub1")
	if !strings.Contains(out, "hsl1 { }") {
		t.Errorf("list after the refusals:\n%s", out)
	}
}
