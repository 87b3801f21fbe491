package lsn

import (
	"net/netip"
	"testing"
	"time"
)

func TestSteerChoose(t *testing.T) {
	vp, other := &Pool{Name: "/Common/vs_pool"}, &Pool{Name: "/Common/other"}
	cases := []struct {
		name     string
		set      func(s *Steer)
		lp       *Pool
		wantPool *Pool
		wantWish bool
		wantOff  bool
	}{
		{"nothing chosen keeps the virtual's pool", func(*Steer) {}, vp, vp, false, false},
		{"nothing chosen and no pool", func(*Steer) {}, nil, nil, false, false},
		{"LSN::pool replaces it", func(s *Steer) { s.SetPool(other) }, vp, other, false, false},
		{"LSN::pool without a virtual pool", func(s *Steer) { s.SetPool(other) }, nil, other, false, false},
		{"LSN::disable", func(s *Steer) { s.SetPort(4000); s.Disable() }, vp, nil, false, true},
		{"LSN::pool after LSN::disable", func(s *Steer) { s.Disable(); s.SetPool(other) }, vp, other, false, false},
		{"LSN::port is a wish", func(s *Steer) { s.SetPort(4000) }, vp, vp, true, false},
		{"LSN::inbound is a wish", func(s *Steer) { s.SetInbound(false) }, vp, vp, true, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Steer
			c.set(&s)
			p, w, off := s.Choose(c.lp)
			if p != c.wantPool || (w != nil) != c.wantWish || off != c.wantOff {
				t.Fatalf("Choose = %v, %+v, %v; want pool %v, wish %v, off %v", p, w, off, c.wantPool, c.wantWish, c.wantOff)
			}
		})
	}
	var s Steer
	s.SetAddr(netip.MustParseAddr("198.51.100.7"))
	s.SetPort(4000)
	s.SetPersistence("address-port", 30*time.Second)
	s.SetInbound(true)
	_, w, _ := s.Choose(vp)
	if w.Addr.String() != "198.51.100.7" || w.Port != 4000 || w.PersistTimeout != 30*time.Second || w.Inbound != "enabled" || string(w.Persist) != "address-port" {
		t.Fatalf("wishes %+v", *w)
	}
}
