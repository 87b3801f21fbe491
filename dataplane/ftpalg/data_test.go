package ftpalg

import (
	"bytes"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"
)

// pair returns the two ends of a loopback TCP connection.
func pair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := Listen(netip.MustParseAddr("127.0.228.250"))
	if err != nil {
		t.Skipf("loopback address 127.0.228.250: %v", err)
	}
	defer ln.Close()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	return c, s
}

// TestJoin: the bytes of both directions pass, a FIN is passed on as a
// half-close, and the count sees every byte.
func TestJoin(t *testing.T) {
	for _, c := range []struct {
		name   string
		up     []byte
		down   []byte
		idleTO time.Duration
	}{
		{"download", nil, bytes.Repeat([]byte("d"), 200<<10), time.Minute},
		{"upload", bytes.Repeat([]byte("u"), 100<<10), nil, 0},
		{"both", []byte("hello"), []byte("world"), time.Minute},
	} {
		client, pa := pair(t)
		pb, member := pair(t)
		var counted [2]int
		counts := make(chan [2]int, 1)
		go func() {
			Join(pa, pb, c.idleTO, func(n int, fromA bool) {
				if fromA {
					counted[0] += n
				} else {
					counted[1] += n
				}
			})
			counts <- counted
		}()
		go func() {
			client.Write(c.up)
			client.CloseWrite()
		}()
		go func() {
			member.Write(c.down)
			member.CloseWrite()
		}()
		gotDown, _ := io.ReadAll(client)
		gotUp, _ := io.ReadAll(member)
		client.Close()
		member.Close()
		got := <-counts
		if !bytes.Equal(gotUp, c.up) || !bytes.Equal(gotDown, c.down) {
			t.Errorf("%s: %d bytes up, %d down; want %d, %d", c.name, len(gotUp), len(gotDown), len(c.up), len(c.down))
		}
		if got != [2]int{len(c.up), len(c.down)} {
			t.Errorf("%s: counted %v", c.name, got)
		}
	}
}

// TestAcceptFrom: a listener takes its peer's connection and turns away
// others; without one it gives up at its deadline.
func TestAcceptFrom(t *testing.T) {
	peer := netip.MustParseAddr("127.0.228.251")
	for _, c := range []struct {
		name  string
		froms []string
		ok    bool
	}{
		{"peer", []string{"127.0.228.251"}, true},
		{"stray then peer", []string{"127.0.228.252", "127.0.228.251"}, true},
		{"stray only", []string{"127.0.228.252"}, false},
	} {
		ln, err := Listen(netip.MustParseAddr("127.0.228.250"))
		if err != nil {
			t.Skipf("loopback: %v", err)
		}
		to := ln.Addr().(*net.TCPAddr)
		res := make(chan error, 1)
		go func() {
			conn, err := AcceptFrom(ln, peer, time.Now().Add(2*time.Second))
			if conn != nil {
				conn.Close()
			}
			res <- err
		}()
		for _, f := range c.froms {
			d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(f)}}
			if conn, err := d.Dial("tcp", to.String()); err == nil {
				defer conn.Close()
			}
		}
		if err := <-res; (err == nil) != c.ok {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// TestListenRange: passive listeners take ports of the range only, each
// a free one, and a range with none free is an error.
func TestListenRange(t *testing.T) {
	addr := netip.MustParseAddr("127.91.5.1")
	probe, err := Listen(addr)
	if err != nil {
		t.Skipf("skipped: cannot listen on %s: %v", addr, err)
	}
	first := AddrOf(probe.Addr()).Port()
	probe.Close()
	if first > 65000 {
		first = 40000
	}
	last := first + 2
	var ls []*net.TCPListener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	seen := map[uint16]bool{}
	for range 3 {
		l, err := ListenRange(addr, first, last)
		if err != nil {
			t.Skipf("skipped: ports %d-%d are not all free: %v", first, last, err)
		}
		ls = append(ls, l)
		p := AddrOf(l.Addr()).Port()
		if p < first || p > last || seen[p] {
			t.Fatalf("port %d: outside %d-%d or taken twice", p, first, last)
		}
		seen[p] = true
	}
	if l, err := ListenRange(addr, first, last); err == nil {
		l.Close()
		t.Fatal("a full range gave a listener")
	}
}
