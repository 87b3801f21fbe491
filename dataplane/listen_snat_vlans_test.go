package dataplane

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// TestListenTCPSNATVLANs: a rule's TCP listen relay takes its
// connection's arrival interface (lo, where this host's connections
// arrive) for the SNAT's choice: a SNAT enabled on lo translates the
// relay's server connection, one disabled on lo (or enabled on another
// interface) leaves it to the wider SNAT.
func TestListenTCPSNATVLANs(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no lo: %v", err)
	}
	wide := SNATObject{Name: "/Common/wide", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.0.0/16")}, Addrs: []netip.Addr{netip.MustParseAddr("127.247.9.100")}}
	narrow := func(vl *VLANFilter) SNATObject {
		return SNATObject{Name: "/Common/narrow", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.11.0/24")}, Addrs: []netip.Addr{netip.MustParseAddr("127.247.9.101")}, VLANs: vl}
	}
	for i, c := range []struct {
		name string
		vl   *VLANFilter
		want string
	}{
		{"enabled on lo", &VLANFilter{Ifindex: []int{lo.Index}}, "127.247.9.101"},
		{"disabled on lo", &VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, "127.247.9.100"},
		{"enabled on another", &VLANFilter{Ifindex: []int{lo.Index + 1000}}, "127.247.9.100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := 30710 + 10*i
			vsAddr, member, related := fmt.Sprintf("127.247.10.1:%d", base), fmt.Sprintf("127.247.10.2:%d", base), fmt.Sprintf("127.247.10.3:%d", base+1)
			startServer(t, member, "C")
			rs := startServer(t, related, "D")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, fmt.Sprintf(`when CLIENT_ACCEPTED {
    set l [listen { proto 6; timeout 30; server 127.247.10.3 %d; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`, base+1))
			cfg.SNATs = []SNATObject{wide, narrow(c.vl)}
			mustApply(t, p, cfg)
			data := dataAddr(t, dialFrom(t, "127.247.11.9", vsAddr))
			dc := dialFrom(t, "127.247.11.9", data)
			if got := dc.mustAsk("list"); got != "D Response" {
				t.Fatalf("related connection: %q, want the rule's server", got)
			}
			var from []netip.AddrPort
			for range 100 {
				rs.mu.Lock()
				from = append(from[:0], rs.remotes...)
				rs.mu.Unlock()
				if len(from) > 0 {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if len(from) != 1 || from[0].Addr().String() != c.want {
				t.Errorf("the relay's server saw %v, want %s", from, c.want)
			}
		})
	}
}

// TestListenUDPSNATVLANs: a rule's UDP listen relay reads its first
// datagram's arrival interface (lo) for the SNAT's choice, as the TCP
// relay does.
func TestListenUDPSNATVLANs(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no lo: %v", err)
	}
	wide := SNATObject{Name: "/Common/wide", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.0.0/16")}, Addrs: []netip.Addr{netip.MustParseAddr("127.247.19.100")}}
	for i, c := range []struct {
		name string
		vl   *VLANFilter
		want string
	}{
		{"enabled on lo", &VLANFilter{Ifindex: []int{lo.Index}}, "127.247.19.101"},
		{"disabled on lo", &VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, "127.247.19.100"},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := 30810 + 10*i
			vsAddr, member := fmt.Sprintf("127.247.20.1:%d", base), fmt.Sprintf("127.247.20.2:%d", base)
			startServer(t, member, "C")
			udpService(t, fmt.Sprintf("127.247.20.3:%d", base+1), func(from netip.AddrPort, _ []byte) []byte { return []byte(from.Addr().String()) })
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, fmt.Sprintf(`when CLIENT_ACCEPTED {
    set l [listen { proto 17; timeout 30; server 127.247.20.3 %d; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`, base+1))
			narrow := SNATObject{Name: "/Common/narrow", Origins: []netip.Prefix{netip.MustParsePrefix("127.247.21.0/24")}, Addrs: []netip.Addr{netip.MustParseAddr("127.247.19.101")}, VLANs: c.vl}
			cfg.SNATs = []SNATObject{wide, narrow}
			mustApply(t, p, cfg)
			data := dataAddr(t, dialFrom(t, "127.247.21.9", vsAddr))
			uc, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(ap("127.247.21.9:0")), net.UDPAddrFromAddrPort(ap(data)))
			if err != nil {
				t.Fatal(err)
			}
			defer uc.Close()
			uc.Write([]byte("ping"))
			b := make([]byte, 64)
			uc.SetDeadline(time.Now().Add(5 * time.Second))
			n, _ := uc.Read(b)
			if got := string(b[:n]); got != c.want {
				t.Errorf("the relay's server saw %q, want %s", got, c.want)
			}
		})
	}
}
