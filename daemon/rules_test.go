package daemon

import (
	"bufio"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane"
)

// syncBuf is a log sink the dataplane's goroutines may write concurrently.
type syncBuf struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// askVS sends one line and returns the answer, or "reset"/"closed".
func askVS(t *testing.T, addr, msg string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		if strings.Contains(err.Error(), "reset") {
			return "reset"
		}
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, msg+"\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err == io.EOF:
		return "closed"
	case err != nil && strings.Contains(err.Error(), "reset"):
		return "reset"
	case err != nil:
		t.Fatal(err)
	}
	return strings.TrimSpace(line)
}

func TestRulesOnVirtuals(t *testing.T) {
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
	labelServer(t, "127.0.72.11:9000", "S1 Response")
	labelServer(t, "127.0.72.12:9000", "S2 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p1 members add { 127.0.72.11:9000 }",
		"create ltm pool p2 members add { 127.0.72.12:9000 }",
		"create ltm data-group internal vip_clients type ip records add { 127.0.72.100/32 { data p2 } }",
		"create ltm rule init {\nwhen RULE_INIT { set static::greeting \"hello\" }\n}",
		"create ltm rule route {\nwhen CLIENT_ACCEPTED {\n  set p [class match -value [IP::client_addr] equals vip_clients]\n  if { $p ne \"\" } { pool $p }\n}\n}",
		"create ltm rule answer {\nwhen CLIENT_ACCEPTED { TCP::collect }\nwhen CLIENT_DATA {\n  if { [TCP::payload] starts_with \"boom\" } { error \"boom requested\" }\n  TCP::respond \"$static::greeting [string trim [TCP::payload]]\\n\"\n  TCP::close\n}\n}",
		"create ltm virtual vs1 destination 127.0.72.1:9000 pool p1 rules { route }",
		"create ltm virtual vs2 destination 127.0.72.2:9000 rules { init answer }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if a := askVS(t, "127.0.72.1:9000", "C1"); a != "S1 Response" {
		t.Fatalf("default pool: %q", a)
	}
	// A client listed in the data group goes to the pool the record names.
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.72.100")}}
	c, err := d.Dial("tcp", "127.0.72.1:9000")
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "C2\n")
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if line != "S2 Response\n" {
		t.Fatalf("data group routing: %q", line)
	}
	// RULE_INIT ran when the program was built; a virtual with no pool
	// answers by itself.
	if a := askVS(t, "127.0.72.2:9000", "bob"); a != "hello bob" {
		t.Fatalf("respond: %q", a)
	}
	if a := askVS(t, "127.0.72.2:9000", "boom"); a != "reset" {
		t.Fatalf("runtime error: %q", a)
	}
	for i := 0; i < 100 && !strings.Contains(logs.String(), "TCL error"); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if !strings.Contains(logs.String(), `level=ERROR msg="TCL error: /Common/answer <CLIENT_DATA> - boom requested`) {
		t.Fatalf("log:\n%s", logs)
	}

	// A rule edit takes effect on the next connection; the data group too.
	for _, cmd := range []string{
		"modify ltm rule answer {\nwhen CLIENT_ACCEPTED { TCP::respond \"$static::greeting again\\n\"; TCP::close }\n}",
		"modify ltm data-group internal vip_clients records replace-all-with { 127.0.0.0/8 { data p2 } }",
	} {
		if _, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s", cmd, err)
		}
	}
	if a := askVS(t, "127.0.72.2:9000", "x"); a != "hello again" {
		t.Fatalf("after modify: %q", a)
	}
	if a := askVS(t, "127.0.72.1:9000", "C1"); a != "S2 Response" {
		t.Fatalf("after the data group change: %q", a)
	}

	// A rule that does not compile is refused; the virtuals keep running.
	if _, err := run(t, s, "modify ltm rule route {\nwhen CLIENT_ACCEPTED { exec ls }\n}"); !strings.Contains(err, "01070151") {
		t.Fatalf("bad rule accepted: %q", err)
	}
	if a := askVS(t, "127.0.72.1:9000", "C1"); a != "S2 Response" {
		t.Fatalf("after the refused change: %q", a)
	}
}

func TestTranslateSkipsVirtualsWithBrokenRules(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.72.21:9000 }",
		"create ltm rule ok {\nwhen CLIENT_ACCEPTED { pool p }\n}",
		"create ltm virtual vs destination 127.0.72.20:9000 pool p rules { ok }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	cfg := e.Config().Clone()
	rk := e.schema.Kind("ltm rule")
	bad := cfg.Get(rk, "/Common/ok").Clone()
	bad.Props["definition"].Str = "when CLIENT_ACCEPTED { exec ls }"
	cfg.Put(bad)
	for _, tc := range []struct {
		name string
		cfg  func() (*dataplane.Config, []string)
		want string
	}{
		{"engine", func() (*dataplane.Config, []string) { tr := e.translate(cfg); return tr.dc, tr.skipped }, "rule /Common/ok does not compile"},
		{"standalone", func() (*dataplane.Config, []string) { return Translate(e.schema, cfg) }, "rule /Common/ok does not compile"},
		{"running", func() (*dataplane.Config, []string) {
			tr := e.translate(e.Config())
			if v := tr.dc.Virtuals["/Common/vs"]; v == nil || v.Rules != nil {
				t.Errorf("translating built the program before the translation runs: %+v", v)
			}
			undo := e.rules.rt.start(e.log, tr)
			t.Cleanup(undo)
			return tr.dc, tr.skipped
		}, ""},
	} {
		dc, skipped := tc.cfg()
		if tc.want == "" {
			if len(skipped) != 0 || dc.Virtuals["/Common/vs"] == nil || dc.Virtuals["/Common/vs"].Rules == nil {
				t.Errorf("%s: skipped %v, virtual %+v", tc.name, skipped, dc.Virtuals["/Common/vs"])
			}
			continue
		}
		if dc.Virtuals["/Common/vs"] != nil || len(skipped) != 1 || !strings.Contains(skipped[0], tc.want) {
			t.Errorf("%s: skipped %v, want %q", tc.name, skipped, tc.want)
		}
	}
}
