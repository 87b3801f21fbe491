package daemon

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"
)

// TestSNATTranslationIdleHTTP2Members: an HTTP/2 member connection (an
// http2 profile on the server side) from an address whose ltm
// snat-translation sets tcp-idle-timeout 1 is closed once no stream has
// been open on it for that second, though the profile's
// connection-idle-timeout is 300: the member sees it close, the address
// (connection-limit 1) is given back, and the next client's request is
// served over a new connection; show ltm snat-translation counts both
// connections.
func TestSNATTranslationIdleHTTP2Members(t *testing.T) {
	t.Parallel()
	e, p := openWithPlane(t, t.TempDir())
	ln, err := net.Listen("tcp", "127.255.137.31:30131")
	if err != nil {
		t.Fatal(err)
	}
	var opened, closed atomic.Int64
	var protos http.Protocols
	protos.SetHTTP1(true)
	protos.SetUnencryptedHTTP2(true)
	srv := &http.Server{Protocols: &protos,
		ConnState: func(_ net.Conn, s http.ConnState) {
			switch s {
			case http.StateNew:
				opened.Add(1)
			case http.StateClosed, http.StateHijacked:
				closed.Add(1)
			}
		},
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			from, _ := netip.ParseAddrPort(r.RemoteAddr)
			fmt.Fprintf(w, "%s %d", from.Addr().Unmap(), r.ProtoMajor)
		})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	s := e.NewSession("admin").(*Session)
	runAll(t, s,
		"create ltm pool p2 members add { 127.255.137.31:30131 }",
		"create ltm profile http2 h2m connection-idle-timeout 300",
		"create ltm virtual v_h2m destination 127.255.137.3:30130 pool p2 profiles replace-all-with { tcp { } http { } httprouter { } h2m { context serverside } }",
		"create ltm snat-translation 127.255.137.102 address 127.255.137.102 connection-limit 1 tcp-idle-timeout 1",
		"create ltm snat s_h2 origins add { 127.255.138.0/24 } translation 127.255.137.102",
	)
	const vip = "127.255.137.3:30130"
	for i, from := range []string{"127.255.138.5", "127.255.138.6"} {
		got, c := httpFrom(t, from, vip, "/")
		if c != nil {
			c.Close()
		}
		if got != "127.255.137.102 2" {
			t.Fatalf("client %s: the member saw %q, want 127.255.137.102 over HTTP/2", from, got)
		}
		if cur := waitCur(p, "127.255.137.102", 0); cur != 0 {
			t.Fatalf("client %s: %d holding the address after tcp-idle-timeout 1, want 0", from, cur)
		}
		for j := 0; j < 100 && closed.Load() < int64(i+1); j++ {
			time.Sleep(50 * time.Millisecond)
		}
		if o, c := opened.Load(), closed.Load(); o != int64(i+1) || c != int64(i+1) {
			t.Fatalf("client %s: the member saw %d connections opened and %d closed, want %d of each", from, o, c, i+1)
		}
	}
	if out, _ := run(t, s, "show ltm snat-translation 127.255.137.102"); !regexpMatch(`Total Connections\s+2\b`, out) || !regexpMatch(`Current Connections\s+0\b`, out) {
		t.Errorf("show ltm snat-translation does not count the two member connections:\n%s", out)
	}
}
