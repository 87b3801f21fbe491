package mblbvs

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestSNATIdleAndRefusal: a server connection holding an address whose
// snat-translation sets tcp-idle-timeout takes it (snatIdle), one
// holding an address with a limit only or nothing takes none; a leg
// closed without ever being opened (a connect that failed, an engine a
// commit retired) gives its hold back; the engine is given ErrFull and
// preserve-strict's port as SourceRefused with their reset causes, and
// anything else as it is.
func TestSNATIdleAndRefusal(t *testing.T) {
	idleA, limA := netip.MustParseAddr("127.247.50.1"), netip.MustParseAddr("127.247.50.2")
	r := new(snatobj.Registry)
	_, pools, _ := r.Build(nil, map[string][]netip.Addr{"sp": {idleA, limA}}, nil,
		map[netip.Addr]config.SNATTranslation{idleA: {TCPIdle: 2 * time.Second, ConnLimit: 5}, limA: {ConnLimit: 5}})
	m := netip.MustParseAddrPort("127.247.50.9:80")
	cases := []struct {
		name string
		addr *snatobj.Addr
		want time.Duration
	}{
		{"tcp-idle-timeout", pools["sp"][0], 2 * time.Second},
		{"a limit only", pools["sp"][1], 0},
		{"nothing held", nil, 0},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mv := &VS{}
			local := netip.AddrPortFrom(idleA, uint16(40000+i))
			if c.addr != nil {
				h, ok := c.addr.Give()
				if !ok {
					t.Fatal("not given")
				}
				mv.holdSNAT(local, m, h)
			}
			l := &mblb.Leg{Local: local, Remote: m}
			if d := mv.snatIdle(l); d != c.want {
				t.Fatalf("snatIdle = %v, want %v", d, c.want)
			}
			mv.legClosed(l) // never opened: not in the table
			if c.addr != nil {
				if cur, _ := r.AddrCurrent(c.addr.Addr); cur.Cur != 0 {
					t.Fatalf("%d holding the address after the leg closed, want 0", cur.Cur)
				}
			}
			if mv.snatHeld.Load() != 0 {
				t.Fatal("a hold kept after the leg closed")
			}
		})
	}
	other := errors.New("connection refused")
	for _, c := range []struct {
		err   error
		cause rstcause.Cause
	}{
		{snatobj.ErrFull, rstcause.SNATLimit},
		{errSNATPort, rstcause.SNATPort},
		{other, 0},
	} {
		got := refused(c.err)
		var sr *mblb.SourceRefused
		switch {
		case c.cause == 0 && got != c.err:
			t.Errorf("refused(%v) = %v, want it unchanged", c.err, got)
		case c.cause != 0 && (!errors.As(got, &sr) || sr.Cause != c.cause || !errors.Is(got, c.err)):
			t.Errorf("refused(%v) = %v, want SourceRefused %v wrapping it", c.err, got, c.cause)
		}
	}
	if n := testing.AllocsPerRun(100, func() { _ = refused(snatobj.ErrFull) }); n != 0 {
		t.Errorf("a refusal allocates %v", n)
	}
	mv := &VS{}
	l := &mblb.Leg{Local: netip.AddrPortFrom(idleA, 40100), Remote: m}
	if n := testing.AllocsPerRun(100, func() { mv.snatIdle(l) }); n != 0 {
		t.Errorf("snatIdle with nothing held allocates %v", n)
	}
}
