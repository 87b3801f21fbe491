package daemon

import (
	"errors"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRejectVirtual: a reject virtual resets every connection at once
// (the client sees the reset), drops
// its UDP datagrams, counts the connections in show ltm virtual; what
// BIG-IP refuses of it is refused with nothing changed, and a type flag
// replaces the virtual's type.
func TestRejectVirtual(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	labelServer(t, "127.4.4.11:9000", "S1 Response")
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.4.4.11:9000 }",
		"create ltm virtual v_rej destination 127.4.4.1:9000 reject profiles replace-all-with { tcp { } }",
		"create ltm virtual v_udp destination 127.4.4.1:53 ip-protocol udp reject profiles replace-all-with { udp { } }",
		"create ltm virtual v_ok destination 127.4.4.2:9000 pool p profiles replace-all-with { tcp { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	for i := 0; i < 3; i++ {
		// The reset may come before connect returns (the handshake was
		// still completing) or at the first read.
		c, err := net.DialTimeout("tcp", "127.4.4.1:9000", 2*time.Second)
		if err == nil {
			c.SetDeadline(time.Now().Add(3 * time.Second))
			if _, err = io.WriteString(c, "C1\n"); err == nil {
				_, err = c.Read(make([]byte, 16)) // else the write took the reset
			}
			c.Close()
		}
		if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, syscall.EPIPE) {
			t.Fatalf("connection %d to the reject virtual: %v, want a reset", i, err)
		}
	}
	// UDP: no answer.
	u, err := net.Dial("udp", "127.4.4.1:53")
	if err != nil {
		t.Fatal(err)
	}
	defer u.Close()
	u.Write([]byte("query"))
	u.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, err := u.Read(make([]byte, 64)); err == nil {
		t.Fatalf("the UDP reject virtual answered %d bytes", n)
	}
	out, _ := run(t, s, "show ltm virtual v_rej")
	if !regexp.MustCompile(`Total Connections\s+3\s`).MatchString(out) || !strings.Contains(out, "Availability     : available") {
		t.Errorf("show ltm virtual v_rej:\n%s", out)
	}
	if out, _ := run(t, s, "list ltm virtual v_rej"); !strings.Contains(out, "    reject\n") {
		t.Errorf("list:\n%s", out)
	}
	for _, tc := range []struct{ cmd, want string }{
		{"modify ltm virtual v_rej pool p", "cannot have a pool"},
		{"create ltm virtual v_bad destination 127.4.4.3:9000 reject pool p", "cannot have a pool"},
		{"create ltm virtual v_bad destination 127.4.4.3:9000 reject ip-forward", "one type"},
	} {
		if _, err := run(t, s, tc.cmd); !strings.Contains(err, tc.want) {
			t.Errorf("%s: error %q, want %q", tc.cmd, err, tc.want)
		}
	}
	if out, _ := run(t, s, "list ltm virtual v_rej pool"); strings.Contains(out, "pool p") {
		t.Errorf("refused modify changed the virtual:\n%s", out)
	}
	// Another type flag replaces reject (BIG-IP keeps one type).
	if _, err := run(t, s, "modify ltm virtual v_rej ip-forward"); err != "" {
		t.Fatal(err)
	}
	if out, _ := run(t, s, "list ltm virtual v_rej"); strings.Contains(out, "reject") || !strings.Contains(out, "ip-forward") {
		t.Errorf("after ip-forward:\n%s", out)
	}
	// v_ok still carries traffic.
	c, err := net.DialTimeout("tcp", "127.4.4.2:9000", 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	io.WriteString(c, "C1\n")
	if b, err := io.ReadAll(io.LimitReader(c, 12)); err != nil || string(b) != "S1 Response\n" {
		t.Fatalf("v_ok: %q %v", b, err)
	}
}
