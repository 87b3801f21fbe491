package http3

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// TestArrivalMigrate: a QUIC connection that moves to a new client
// address (quic-go's client: Conn.AddPath on a Transport over a new
// local socket, Probe, Switch) keeps being served on the same
// connection, admitted once, and keeps its handshake's arrival; the new
// address, which only short-header packets came from, is not noted.
func TestArrivalMigrate(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skip("no lo:", err)
	}
	backend, err := net.Listen("tcp", "127.26.206.1:0")
	if err != nil {
		t.Skipf("loopback 127.26.206.1: %v", err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ok "+r.URL.Path)
	})}
	go hs.Serve(backend)
	t.Cleanup(func() { hs.Close() })
	cert, pool := selfSigned(t)
	pc, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.26.206.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	d := &dialer{addr: backend.Addr().String()}
	var accepted atomic.Int32
	var arrival atomic.Int64
	tc := &tls.Config{Certificates: []tls.Certificate{cert}}
	l, err := Listen(pc, func() *tls.Config { return tc }, &Config{}, func(c *Conn) (Client, bool) {
		accepted.Add(1)
		arrival.Store(int64(c.Arrival))
		return d, true
	})
	if err != nil {
		t.Fatal(err)
	}
	l.SetArrival(true)
	go l.Serve()
	t.Cleanup(l.Close)

	sock := func(a string) *net.UDPConn {
		u, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(a)))
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	tr1 := &quic.Transport{Conn: sock("127.26.206.2:0")}
	defer tr1.Close()
	tr2 := &quic.Transport{Conn: sock("127.26.206.3:0")}
	defer tr2.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	qc, err := tr1.Dial(ctx, pc.LocalAddr(), &tls.Config{RootCAs: pool, ServerName: "h3.test", NextProtos: []string{http3.NextProtoH3}}, &quic.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer qc.CloseWithError(0, "")
	cc := (&http3.Transport{}).NewClientConn(qc)
	get := func(path string) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, "GET", "https://h3.test"+path, nil)
		resp, err := cc.RoundTrip(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "ok "+path {
			t.Fatalf("GET %s: %d %q", path, resp.StatusCode, body)
		}
	}
	get("/before")
	old := netip.MustParseAddrPort(tr1.Conn.LocalAddr().String())
	moved := netip.MustParseAddrPort(tr2.Conn.LocalAddr().String())
	if got := arrival.Load(); got != int64(lo.Index) {
		t.Fatalf("the handshake's arrival = %d, want lo's %d", got, lo.Index)
	}

	path, err := qc.AddPath(tr2)
	if err != nil {
		t.Fatalf("AddPath: %v", err)
	}
	if err := path.Probe(ctx); err != nil {
		t.Fatalf("probing the new path: %v", err)
	}
	if err := path.Switch(); err != nil {
		t.Fatalf("switching to the new path: %v", err)
	}
	get("/after")
	// The server's side of the connection now talks to the new address.
	remote := func() (n int, ra netip.AddrPort) {
		l.conns.Range(func(k, _ any) bool {
			n++
			ra = netip.MustParseAddrPort(k.(*quic.Conn).RemoteAddr().String())
			return true
		})
		return n, ra
	}
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if _, ra := remote(); ra == moved {
			break
		}
	}
	if n, ra := remote(); n != 1 || ra != moved {
		t.Errorf("the server's connections: %d, remote %s, want 1 at %s (moved from %s)", n, ra, moved, old)
	}
	// Admitted once: the arrival is read at admission only, so the
	// connection keeps its handshake's (lo's) after it moved.
	if n := accepted.Load(); n != 1 {
		t.Errorf("admitted %d times, want once (the same connection)", n)
	}
	if got := l.ac.arrival(old); got != lo.Index {
		t.Errorf("the handshake's address: arrival %d, want lo's %d", got, lo.Index)
	}
	if got := l.ac.arrival(moved); got != 0 {
		t.Errorf("the new address (short headers only): arrival %d, want 0 (not noted)", got)
	}
}
