//go:build linux

package sklookup

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/netnstest"
)

// inNetns runs the calling test again in a network namespace of its own:
// the steering attaches to a whole namespace. It reports true in that run.
func inNetns(t *testing.T) bool {
	t.Helper()
	return netnstest.Alone(t, "SKLOOKUP_NETNS")
}

func listen(t *testing.T, ap string) (*net.TCPListener, int) {
	t.Helper()
	var lc net.ListenConfig
	lc.SetMultipathTCP(false) // a Multipath TCP listener cannot go in a socket map
	l, err := lc.Listen(context.Background(), "tcp", ap)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	f, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return l.(*net.TCPListener), int(f.Fd())
}

// accepted is the local address of the next connection l accepts, or
// an invalid one within a few seconds.
func accepted(l *net.TCPListener) netip.AddrPort {
	l.SetDeadline(time.Now().Add(5 * time.Second))
	c, err := l.Accept()
	if err != nil {
		return netip.AddrPort{}
	}
	defer c.Close()
	return netip.MustParseAddrPort(c.LocalAddr().String())
}

func TestSteer(t *testing.T) {
	if !inNetns(t) {
		return
	}
	s, err := Open()
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	defer s.Close()
	wl, wfd := listen(t, "127.212.0.1:0")
	sl, _ := listen(t, "127.212.0.1:30080")
	_, ofd := listen(t, "127.212.0.2:0")
	addr := netip.MustParseAddr("127.212.0.1")
	if err := s.Sync([]Wildcard{{addr, wfd}, {netip.MustParseAddr("127.212.0.2"), ofd}}, []netip.AddrPort{netip.MustParseAddrPort("127.212.0.1:30080")}); err != nil {
		t.Fatal(err)
	}
	dial := func(src, dst string) error {
		d := net.Dialer{Timeout: 5 * time.Second}
		if src != "" {
			d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(src)}
		}
		c, err := d.Dial("tcp", dst)
		if err == nil {
			c.Close()
		}
		return err
	}
	for _, tc := range []struct {
		src, dst string
		on       *net.TCPListener // nil: refused
	}{
		{"", "127.212.0.1:30081", wl},
		{"", "127.212.0.1:443", wl},
		{"127.212.0.9", "127.212.0.1:30082", wl},
		{"", "127.212.0.1:30080", sl},             // the port-specific listener wins
		{"127.212.0.1", "127.212.0.1:30083", nil}, // the address talking to itself: not steered
		{"", "127.212.0.3:30081", nil},            // no wildcard there
	} {
		err := dial(tc.src, tc.dst)
		if tc.on == nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Errorf("%s -> %s: %v, want refused", tc.src, tc.dst, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s -> %s: %v", tc.src, tc.dst, err)
			continue
		}
		if got := accepted(tc.on); got.String() != tc.dst {
			t.Errorf("%s -> %s: accepted as %v", tc.src, tc.dst, got)
		}
	}
	// The second address goes: its ports are refused again; the first
	// stays.
	if err := s.Sync([]Wildcard{{addr, wfd}}, nil); err != nil {
		t.Fatal(err)
	}
	if err := dial("", "127.212.0.2:30081"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after the address went: %v", err)
	}
	if err := dial("", "127.212.0.1:30084"); err != nil || accepted(wl).Port() != 30084 {
		t.Errorf("the address that stayed: %v", err)
	}
	// Closed: nothing is steered.
	s.Close()
	if err := dial("", "127.212.0.1:30085"); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("after Close: %v", err)
	}
}

func TestKeyOf(t *testing.T) {
	for _, tc := range []struct {
		addr string
		port uint16
		fam  byte
		at8  byte
	}{
		{"127.212.0.1", 80, 2, 127},
		{"::ffff:127.212.0.1", 0, 2, 127},
		{"2001:db8::1", 443, 10, 0x20},
	} {
		k := keyOf(netip.MustParseAddr(tc.addr), tc.port)
		if k[0] != tc.fam || k[4] != byte(tc.port) || k[5] != byte(tc.port>>8) || k[8] != tc.at8 {
			t.Errorf("%s:%d: %x", tc.addr, tc.port, k)
		}
	}
}
