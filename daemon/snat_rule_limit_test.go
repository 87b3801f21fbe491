package daemon

import (
	"net"
	"strings"
	"testing"
)

// TestSNATRuleLimit: a rule's snatpool and snat decisions, on a standard
// virtual (CLIENT_ACCEPTED) and an HTTP one (SERVER_INIT), hold their
// address's ltm snat-translation connection-limit as the virtual's own
// translation does: a snatpool's full address is passed over for the
// next, every one full resets the client, the address given back when
// the connection ends; show ltm snat-translation counts them.
func TestSNATRuleLimit(t *testing.T) {
	e, p := openWithPlane(t, t.TempDir())
	fromMember(t, "127.242.0.11:30201", fromHost, true)
	release := make(chan struct{})
	slowHTTPMember(t, "127.242.0.12:30203", func() <-chan struct{} { return release })
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.242.0.11:30201 }",
		"create ltm pool ph members add { 127.242.0.12:30203 }",
		"create ltm snatpool sp members add { 127.242.0.100 127.242.0.101 }",
		"modify ltm snat-translation 127.242.0.100 connection-limit 1",
		"modify ltm snat-translation 127.242.0.101 connection-limit 1",
		"create ltm snat-translation 127.242.0.102 address 127.242.0.102 connection-limit 1",
		"create ltm snat-translation 127.242.0.103 address 127.242.0.103 connection-limit 1",
		"create ltm rule r_pool { when CLIENT_ACCEPTED { snatpool sp } }",
		"create ltm rule r_snat { when CLIENT_ACCEPTED { snat 127.242.0.102 } }",
		"create ltm rule r_init { when SERVER_INIT { snat 127.242.0.103 } }",
		"create ltm virtual v_pool destination 127.242.0.1:30200 pool p rules { r_pool } profiles replace-all-with { tcp { } }",
		"create ltm virtual v_snat destination 127.242.0.1:30202 pool p rules { r_snat } profiles replace-all-with { tcp { } }",
		"create ltm virtual v_http destination 127.242.0.1:30204 pool ph rules { r_init } profiles replace-all-with { tcp { } http { } }",
	} {
		if out, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		} else if strings.Contains(c, "connection-limit") && strings.Contains(out, "without counting") && !strings.Contains(out, "rules' snat and snatpool decisions alike") {
			t.Errorf("%s: the warning still says rules' decisions are not counted: %q", c, out)
		}
	}
	var open []net.Conn
	defer func() {
		for _, c := range open {
			c.Close()
		}
	}()
	// The rule's snatpool: both addresses, then none.
	seen := map[string]bool{}
	var firstGot string
	for i, from := range []string{"127.242.1.5", "127.242.1.6"} {
		got, c := dialFrom(t, from, 0, "127.242.0.1:30200")
		if got != "127.242.0.100" && got != "127.242.0.101" {
			t.Fatalf("snatpool client %d: the member saw %q, want a snatpool address", i, got)
		}
		if i == 0 {
			firstGot = got
		}
		seen[got] = true
		open = append(open, c)
	}
	if len(seen) != 2 {
		t.Errorf("two clients of the rule's snatpool at a limit of 1 each: the member saw %v, want both addresses", seen)
	}
	if got, c := dialFrom(t, "127.242.1.7", 0, "127.242.0.1:30200"); got != "" {
		c.Close()
		t.Errorf("third snatpool client with both addresses full: the member saw %q, want a reset", got)
	}
	for _, a := range []string{"127.242.0.100", "127.242.0.101"} {
		if cur := waitCur(p, a, 1); cur != 1 {
			t.Errorf("%s: %d holding it, want 1", a, cur)
		}
	}
	open[0].Close()
	freed := firstGot
	if cur := waitCur(p, freed, 0); cur != 0 {
		t.Fatalf("the first snatpool client closed: %s still held by %d", freed, cur)
	}
	if got, c := dialFrom(t, "127.242.1.8", 0, "127.242.0.1:30200"); got != freed {
		t.Errorf("after a snatpool client closed: the member saw %q, want %s", got, freed)
	} else {
		open = append(open, c)
	}

	// The rule's snat address.
	got, c := dialFrom(t, "127.242.1.9", 0, "127.242.0.1:30202")
	if got != "127.242.0.102" {
		t.Fatalf("snat client: the member saw %q, want 127.242.0.102", got)
	}
	if got2, c2 := dialFrom(t, "127.242.1.10", 0, "127.242.0.1:30202"); got2 != "" {
		c2.Close()
		t.Errorf("second snat client at the limit: the member saw %q, want a reset", got2)
	}
	c.Close()
	if cur := waitCur(p, "127.242.0.102", 0); cur != 0 {
		t.Fatalf("the snat client closed: %d holding 127.242.0.102", cur)
	}
	if got, c := dialFrom(t, "127.242.1.10", 0, "127.242.0.1:30202"); got != "127.242.0.102" {
		t.Errorf("snat client after the first closed: the member saw %q, want 127.242.0.102", got)
	} else {
		c.Close()
	}

	// SERVER_INIT's snat on an HTTP virtual: the server connection holds
	// the address while the slow request is on it.
	slow := make(chan string, 1)
	var slowConn net.Conn
	go func() {
		got, c := httpFrom(t, "127.242.1.11", "127.242.0.1:30204", "/slow")
		slowConn = c
		slow <- got
	}()
	if cur := waitCur(p, "127.242.0.103", 1); cur != 1 {
		close(release)
		<-slow
		t.Fatalf("SERVER_INIT's snat: %d holding 127.242.0.103, want 1", cur)
	}
	if got, c := httpFrom(t, "127.242.1.12", "127.242.0.1:30204", "/"); got != "" {
		c.Close()
		t.Errorf("second HTTP client at the limit: the member saw %q, want it refused", got)
	}
	close(release)
	if got := <-slow; got != "127.242.0.103" {
		t.Errorf("the slow HTTP client: the member saw %q, want 127.242.0.103", got)
	}
	if slowConn != nil {
		slowConn.Close()
	}
	if cur := waitCur(p, "127.242.0.103", 0); cur != 0 {
		t.Fatalf("the HTTP client closed: %d holding 127.242.0.103", cur)
	}
	if got, c := httpFrom(t, "127.242.1.12", "127.242.0.1:30204", "/"); got != "127.242.0.103" {
		t.Errorf("HTTP client after the first closed: the member saw %q, want 127.242.0.103", got)
	} else {
		c.Close()
	}
	out, _ := run(t, s, "show ltm snat-translation 127.242.0.103")
	if !regexpMatch(`Refused \(limit\)\s+[1-9]`, out) {
		t.Errorf("show ltm snat-translation does not count the refusal:\n%s", out)
	}
}
