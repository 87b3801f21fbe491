package daemon

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// httpFromPort is httpFrom from the address and port from: the body of
// a GET / ("" when refused, reset or not a 200).
func httpFromPort(t *testing.T, from netip.AddrPort, vip string) string {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(from)}
	c, err := d.Dial("tcp", vip)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: strict.test\r\nConnection: close\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		return ""
	}
	return string(b)
}

// TestSNATPreserveStrictHTTP: an ltm snat's source-port preserve-strict
// on HTTP virtuals (the event loops' dial and the goroutines'): the
// server connection leaves from exactly the client's port on the
// translation address, and is not made when that port is in use there
// (the client is refused, the member not blamed: a later client is
// served).
func TestSNATPreserveStrictHTTP(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.242.0.31:30231")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		from, _ := netip.ParseAddrPort(r.RemoteAddr)
		fmt.Fprint(w, netip.AddrPortFrom(from.Addr().Unmap(), from.Port()))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	taken, err := net.Listen("tcp", "127.242.0.130:31250")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool ph members add { 127.242.0.31:30231 }",
		"create ltm virtual v_loop destination 127.242.0.3:30230 pool ph profiles replace-all-with { tcp { } http { } }",
		"create ltm rule r_wait { when HTTP_REQUEST { after 1 } }",
		"create ltm virtual v_gor destination 127.242.0.3:30232 pool ph rules { r_wait } profiles replace-all-with { tcp { } http { } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	out, errs := run(t, s, "create ltm snat s_strict origins add { 127.242.6.0/24 } translation 127.242.0.130 source-port preserve-strict")
	if errs != "" {
		t.Fatal(errs)
	}
	if strings.Contains(out, "preserve-strict") && regexpMatch(`preserve-strict[^;]*;[^"]*HTTP and the other message-based virtuals`, out) {
		t.Errorf("the warning still names HTTP virtuals as taking another port: %q", out)
	}
	client := netip.MustParseAddr("127.242.6.5")
	for i, vip := range []string{"127.242.0.3:30230", "127.242.0.3:30232"} {
		port := uint16(31240 + i)
		if got, want := httpFromPort(t, netip.AddrPortFrom(client, port), vip), fmt.Sprintf("127.242.0.130:%d", port); got != want {
			t.Errorf("%s, port free: the member saw %q, want %s", vip, got, want)
		}
		if got := httpFromPort(t, netip.AddrPortFrom(client, 31250), vip); got != "" {
			t.Errorf("%s, the client's port in use on the translation address: the member saw %q, want it refused", vip, got)
		}
		port = uint16(31242 + i)
		if got, want := httpFromPort(t, netip.AddrPortFrom(client, port), vip), fmt.Sprintf("127.242.0.130:%d", port); got != want {
			t.Errorf("%s, after a refusal: the member saw %q, want %s (the member not blamed)", vip, got, want)
		}
	}
}
