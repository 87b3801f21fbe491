package daemon

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

func TestShowPoolDistribution(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.0.108.11:9000", "S1 Response")
	labelServer(t, "127.0.108.12:9000", "S2 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.0.108.11:9000 127.0.108.12:9000 127.0.108.13:9000 { session user-disabled } }",
		"create ltm virtual vs destination 127.0.108.1:9000 pool p persist replace-all-with { source_addr { default yes } } profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	// Twelve connections from one address: a NAT in front.
	for i := 0; i < 12; i++ {
		d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.108.50")}}
		c, err := d.Dial("tcp", "127.0.108.1:9000")
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "hi\n")
		if _, err := bufio.NewReader(c).ReadString('\n'); err != nil {
			t.Fatal(err)
		}
		c.Close()
	}
	out, errs := run(t, s, "show ltm pool p distribution")
	if errs != "" {
		t.Fatal(errs)
	}
	for _, want := range []string{
		"Ltm::Pool Distribution: p\n",
		"  Persistence Records    1\n",
		"    Balances             each client connection\n",
		"    Persistence          source-addr (source_addr)\n",
		"    Client Connections   12: 127.0.108.50 12 (100%)\n",
		"1. member-disabled: member 127.0.108.13:9000 is disabled",
		"fix: modify ltm pool p members modify { 127.0.108.13:9000 { session user-enabled } }\n",
		"2. few-clients: vs: 127.0.108.50 carries 100% of 12 connections while it persists on the source address",
		"fix: modify ltm virtual vs persist replace-all-with { cookie { default yes } } profiles add { http oneconnect }\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("distribution lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "  127.0.108.1") != 3 || !strings.Contains(out, "12        100%") {
		t.Errorf("member table:\n%s", out)
	}
	// The plain show is unchanged, and the option needs a pool.
	if out, errs := run(t, s, "show ltm pool p"); errs != "" || strings.Contains(out, "Distribution") {
		t.Errorf("show ltm pool p: %q %q", out, errs)
	}
	if _, errs := run(t, s, "show ltm pool distribution"); !strings.Contains(errs, "needs a pool name") {
		t.Errorf("without a name: %q", errs)
	}
	// reset-stats of the virtual forgets where its traffic came from.
	if _, errs := run(t, s, "reset-stats ltm virtual vs"); errs != "" {
		t.Fatal(errs)
	}
	if out, _ := run(t, s, "show ltm pool p distribution"); !strings.Contains(out, "Client Connections   none") || strings.Contains(out, "few-clients") {
		t.Errorf("after reset-stats:\n%s", out)
	}
	found := false
	for _, sg := range s.Complete("show ltm pool p ") {
		found = found || sg.Text == "distribution"
	}
	if !found {
		t.Errorf("completion of show ltm pool p does not offer distribution: %v", s.Complete("show ltm pool p "))
	}
}
