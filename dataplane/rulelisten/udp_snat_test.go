package rulelisten

import (
	"net"
	"net/netip"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// TestOpenUDPSNATHold: a relay holds the ltm snat-translation address
// its source gives while it lasts (the address's current connections)
// and gives it back when it ends; the address's udp-idle-timeout
// replaces the relay's idle (a relay idle for a minute ends at the
// translation's second); a refused source (every address full) sends
// the server nothing and closes the listener.
func TestOpenUDPSNATHold(t *testing.T) {
	const xlat = "127.238.6.100"
	for _, tc := range []struct {
		name   string
		refuse bool
	}{
		{"held", false},
		{"refused", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.238.6.3")})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var got atomic.Int32
			go func() {
				b := make([]byte, 2048)
				for {
					n, from, err := srv.ReadFromUDPAddrPort(b)
					if err != nil {
						return
					}
					got.Add(1)
					srv.WriteToUDPAddrPort(append([]byte("re "), b[:n]...), from)
				}
			}()
			var r snatobj.Registry
			a := netip.MustParseAddr(xlat)
			_, pools, _ := r.Build(nil, map[string][]netip.Addr{"sp": {a}}, nil,
				map[netip.Addr]config.SNATTranslation{a: {ConnLimit: 1, UDPIdle: time.Second}})
			var next atomic.Uint32
			source := func(netip.AddrPort, int) Source {
				if tc.refuse {
					return Source{Err: snatobj.ErrFull}
				}
				src, h, err := snatobj.PickPool(pools["sp"], &next, true, true, true)
				return Source{Src: netip.AddrPortFrom(src, 0), Hold: h, Err: err}
			}
			server := netip.MustParseAddrPort(srv.LocalAddr().String())
			l, err := OpenUDP(Spec{Bind: netip.MustParseAddrPort("127.238.6.1:0"), Timeout: 30 * time.Second}, server, source, time.Minute, nil)
			if err != nil {
				t.Fatal(err)
			}
			peer, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.238.6.2")}, net.UDPAddrFromAddrPort(l.Addr()))
			if err != nil {
				t.Fatal(err)
			}
			defer peer.Close()
			peer.Write([]byte("one"))
			if !tc.refuse {
				b := make([]byte, 64)
				peer.SetDeadline(time.Now().Add(10 * time.Second))
				if n, err := peer.Read(b); err != nil || string(b[:n]) != "re one" {
					t.Fatalf("relay: %q %v", b[:n], err)
				}
				if st, _ := r.AddrCurrent(a); st.Cur != 1 {
					t.Errorf("while the relay lasts: %d holding %s, want 1", st.Cur, xlat)
				}
			}
			select {
			case <-l.Done():
			case <-time.After(20 * time.Second):
				t.Fatal("the relay did not end (the translation's udp-idle-timeout, or the refusal)")
			}
			if st, _ := r.AddrCurrent(a); st.Cur != 0 {
				t.Errorf("after the relay: %d holding %s, want 0", st.Cur, xlat)
			}
			if n := got.Load(); tc.refuse != (n == 0) {
				t.Errorf("the server got %d datagrams (refused: %v)", n, tc.refuse)
			}
		})
	}
}
