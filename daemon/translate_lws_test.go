package daemon

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestLWSFolding: lws-separator and lws-width fold the header-insert
// lines longer than the width, as the member receives them; a separator
// that is not a line end and spaces or tabs is refused, nothing changed.
func TestLWSFolding(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.4.10.11:8080")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	heads := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				var head strings.Builder
				for {
					l, err := r.ReadString('\n')
					if err != nil {
						return
					}
					head.WriteString(l)
					if l == "\r\n" {
						break
					}
				}
				heads <- head.String()
				io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
			}()
		}
	}()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.4.10.11:8080 }",
		`create ltm profile http h_lws defaults-from http header-insert "X-Long: alpha beta gamma delta epsilon" lws-separator "\r\n\t" lws-width 24`,
		"create ltm virtual v destination 127.4.10.1:80 pool p profiles replace-all-with { tcp { } h_lws { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	request := func() string {
		c, err := net.DialTimeout("tcp", "127.4.10.1:80", 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second))
		io.WriteString(c, "GET / HTTP/1.1\r\nHost: www\r\nConnection: close\r\n\r\n")
		io.ReadAll(c)
		select {
		case h := <-heads:
			return h
		case <-time.After(3 * time.Second):
			t.Fatal("the member saw no request")
		}
		return ""
	}
	if h := request(); !strings.Contains(h, "X-Long: alpha beta gamma\r\n\tdelta epsilon\r\n") {
		t.Errorf("folded at 24 columns:\n%q", h)
	}
	if _, err := run(t, s, "modify ltm profile http h_lws lws-separator none"); err != "" {
		t.Fatal(err)
	}
	if h := request(); !strings.Contains(h, "X-Long: alpha beta gamma delta epsilon\r\n") {
		t.Errorf("lws-separator none:\n%q", h)
	}
	for _, c := range []string{
		`modify ltm profile http h_lws lws-separator ", "`,
		`modify ltm profile http h_lws lws-separator "\r\n"`,
		"modify ltm profile http h_lws lws-width 0",
	} {
		if _, err := run(t, s, c); !strings.Contains(err, "lws-") {
			t.Errorf("%s: error %q", c, err)
		}
	}
	if out, _ := run(t, s, "list ltm profile http h_lws lws-separator"); !strings.Contains(out, "lws-separator none") {
		t.Errorf("after refused modifies:\n%s", out)
	}
}
