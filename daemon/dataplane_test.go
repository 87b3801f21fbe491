package daemon

import (
	"bufio"
	"io"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// labelServer answers every line with its label, like the field tools.
func labelServer(t *testing.T, addr, label string) {
	t.Helper()
	serveEach(t, addr, answerLabel(label))
}

// serveLabel answers every line of every connection ln accepts with
// label, until ln is closed.
func serveLabel(ln net.Listener, label string) { acceptEach(ln, answerLabel(label)) }

// answerLabel answers every line of a connection with label.
func answerLabel(label string) func(net.Conn) {
	return func(c net.Conn) {
		r := bufio.NewReader(c)
		for {
			if _, err := r.ReadString('\n'); err != nil {
				return
			}
			io.WriteString(c, label+"\n")
		}
	}
}

func TestCommitDrivesTraffic(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.0.31.11:9000", "S1 Response")
	labelServer(t, "127.0.31.12:9000", "S2 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.31.11:9000 127.0.31.12:9000 }",
		"create ltm virtual vs destination 127.0.31.1:9000 pool p profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		c, err := net.DialTimeout("tcp", "127.0.31.1:9000", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "C1\n")
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if err != nil {
			t.Fatal(err)
		}
		seen[strings.TrimSpace(line)]++
	}
	if seen["S1 Response"] != 2 || seen["S2 Response"] != 2 {
		t.Fatalf("round robin over two members: %v", seen)
	}
	// A destination already in use by another virtual is refused whole.
	if _, err := run(t, s, "create ltm virtual vs2 destination 127.0.31.1:9000 pool p"); err == "" {
		t.Fatal("duplicate destination accepted")
	}
	if out, _ := run(t, s, "list ltm virtual vs2"); out != "" {
		t.Fatalf("refused virtual exists: %s", out)
	}
}

func TestShows(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.0.32.11:9000", "S1 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.32.11:9000 }",
		"create ltm virtual vs destination 127.0.32.1:9000 pool p",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	c, err := net.DialTimeout("tcp", "127.0.32.1:9000", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "C1\n")
	if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	out, errText := run(t, s, "show sys connection cs-server-port 9000")
	if errText != "" || !strings.Contains(out, "  127.0.32.1:9000  ") || !strings.Contains(out, "Total records returned: 1\n") {
		t.Fatalf("show sys connection: %s %s", out, errText)
	}
	out, _ = run(t, s, "show ltm pool p members")
	for _, want := range []string{"Ltm::Pool: p", "| Ltm::Pool Member: 127.0.32.11:9000"} {
		if !strings.Contains(out, want) {
			t.Fatalf("show ltm pool lacks %q:\n%s", want, out)
		}
	}
	if out, errText = run(t, s, "show ltm virtual vs"); !strings.Contains(out, "Ltm::Virtual Server: vs") {
		t.Fatalf("show ltm virtual: %s %s", out, errText)
	}
	if _, errText = run(t, s, "delete sys connection cs-server-port 9000"); errText != "" {
		t.Fatal(errText)
	}
}

// What BIG-IP runs and openltm does not (a wildcard address, a
// persistence kind or an iRule command openltm lacks) is kept with a
// warning from tmsh and
// from a file alike; show names such a virtual and says why it carries no
// traffic, in both layouts.
func TestWhatCannotRunIsKept(t *testing.T) {
	dir := t.TempDir()
	e, _ := openWithPlane(t, dir)
	s := e.NewSession("admin").(*Session)
	out, errText := run(t, s, "create ltm virtual fwd destination 0.0.0.0:any ip-forward")
	if errText != "" || !strings.Contains(out, "Warning: ltm virtual /Common/fwd: destination /Common/any:0 has no address to listen on") ||
		!strings.Contains(out, "; kept, and it carries no traffic") {
		t.Fatalf("wildcard virtual: %q %q", out, errText)
	}
	conf := dir + "/fwd.conf"
	if err := os.WriteFile(conf, []byte("ltm virtual /Common/fwd2 {\n    destination /Common/0.0.0.0:any\n    ip-forward\n    mask any\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errText = run(t, s, "load sys config merge file "+conf)
	if errText != "" || !strings.Contains(out, "Warning: ltm virtual /Common/fwd2: destination /Common/any:0 has no address to listen on") {
		t.Fatalf("load: %q %q", out, errText)
	}
	// Kept: later, unrelated changes are not blocked by it.
	if _, errText = run(t, s, "create ltm pool unrelated"); errText != "" {
		t.Fatal(errText)
	}
	if out, _ = run(t, s, "list ltm virtual fwd"); !strings.Contains(out, "    ip-forward\n") {
		t.Fatalf("list: %s", out)
	}
	out, errText = run(t, s, "create ltm virtual v_ssl destination 127.0.33.1:443 persist replace-all-with { sip_info { default yes } }")
	if errText != "" || !strings.Contains(out, "persistence profile /Common/sip_info: sip persistence needs a sip profile on the virtual server; kept, and it carries no traffic") {
		t.Fatalf("sip persistence: %q %q", out, errText)
	}
	if _, errText = run(t, s, "modify ltm virtual v_ssl disabled"); errText != "" {
		t.Fatal(errText)
	}
	// An iRule with an F5 command openltm lacks (IP::reputation) is kept, and so
	// is the virtual using it.
	if _, errText = run(t, s, "create ltm rule stream_rule { when HTTP_RESPONSE { log local0. [IP::reputation [IP::client_addr]] } }"); errText != "" {
		t.Fatal(errText)
	}
	out, errText = run(t, s, "create ltm virtual v_stream destination 127.0.33.2:80 profiles add { http } rules { stream_rule }")
	if errText != "" || !strings.Contains(out, "Warning: ltm virtual /Common/v_stream: rule /Common/stream_rule uses F5 commands or events openltm does not implement yet; kept, and it carries no traffic") {
		t.Fatalf("virtual with a kept rule: %q %q", out, errText)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"show ltm virtual fwd", "  Reason           : openltm does not run it: destination /Common/any:0 has no address to listen on"},
		{"show ltm virtual fwd field-fmt", "    status.status-reason openltm does not run it: destination /Common/any:0 has no address to listen on"},
		{"show ltm virtual v_ssl", "  State            : disabled\n  Reason           : openltm does not run it: persistence profile /Common/sip_info: sip persistence needs a sip profile on the virtual server"},
		{"show ltm virtual v_ssl", "  Destination      : 127.0.33.1:443\n"},
		{"show ltm virtual", "Ltm::Virtual Server: fwd2\n"},
		{"show ltm virtual v_stream", "  Reason           : openltm does not run it: rule /Common/stream_rule uses F5 commands or events openltm does not implement yet\n"},
	} {
		out, errText := run(t, s, tc.cmd)
		if errText != "" || !strings.Contains(out, tc.want) {
			t.Errorf("%s: want %q in\n%s%s", tc.cmd, tc.want, out, errText)
		}
	}
}

func TestRuntimeTablesInsideAModule(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{"ltm", "show persistence persist-records", "delete persistence persist-records", "exit", "sys", "show connection", "delete connection"} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
}

// A virtual address's status rolls up from its virtual servers: none
// (made by hand), unknown (a virtual without a pool), disabled.
func TestShowVirtualAddress(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm virtual-address 127.0.34.9",
		"create ltm virtual nopool destination 127.0.34.1:80",
		"create ltm virtual-address 127.0.34.2 enabled no",
	} {
		if _, errText := run(t, s, c); errText != "" {
			t.Fatalf("%s: %s", c, errText)
		}
	}
	out, errText := run(t, s, "show ltm virtual-address")
	for _, want := range []string{
		"Ltm::Virtual Address: 127.0.34.1\n---------------------------------------------------------------------\nStatus\n  Availability : unknown\n  State        : enabled\n  Reason       : The children virtual server(s) either don't have service checking enabled",
		"Ltm::Virtual Address: 127.0.34.2\n---------------------------------------------------------------------\nStatus\n  Availability : unknown\n  State        : disabled\n  Reason       : The virtual address has no virtual servers",
		"Ltm::Virtual Address: 127.0.34.9\n",
	} {
		if errText != "" || !strings.Contains(out, want) {
			t.Fatalf("want %q in\n%s%s", want, out, errText)
		}
	}
}
