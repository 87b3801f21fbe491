//go:build linux

package l4

import (
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"golang.org/x/sys/unix"
)

// TestListenOptsVLANs sets a listener's VLAN options as a commit does and
// reads them back from the socket, then accepts a real loopback client
// and reads the interface it arrived on: the loopback's index where the
// listener keeps arrivals, 0 where it does not.
func TestListenOptsVLANs(t *testing.T) {
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("no loopback interface: %v", err)
	}
	tests := []struct {
		name    string
		vl      *config.VLANFilter
		device  string
		arrival int
		admits  bool
	}{
		{"no vlans", nil, "", 0, true},
		{"enabled on lo alone", &config.VLANFilter{Ifindex: []int{lo.Index}, Device: "lo"}, "lo", lo.Index, true},
		{"enabled on lo and another", &config.VLANFilter{Ifindex: []int{lo.Index, 1 << 20}}, "", lo.Index, true},
		{"enabled elsewhere", &config.VLANFilter{Ifindex: []int{1 << 20}}, "", lo.Index, false},
		{"disabled on lo", &config.VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, "", lo.Index, false},
		{"disabled elsewhere", &config.VLANFilter{Ifindex: []int{1 << 20}, Disabled: true}, "", lo.Index, true},
	}
	ap := netip.MustParseAddrPort("127.87.3.1:0")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := rawsock.Listen(ap, false)
			if err != nil {
				t.Fatal(err)
			}
			l := &Listener{Addr: ap}
			l.fd = fd
			defer unix.Close(fd)
			// A listener that had options before: each commit sets them anew.
			l.ListenOpts(nil, false, &config.VLANFilter{Ifindex: []int{lo.Index}, Device: "lo"}, false)
			l.ListenOpts(nil, false, tc.vl, false)
			dev, err := unix.GetsockoptString(fd, unix.SOL_SOCKET, unix.SO_BINDTODEVICE)
			if err != nil {
				t.Fatal(err)
			}
			if dev != tc.device {
				t.Errorf("SO_BINDTODEVICE %q, want %q", dev, tc.device)
			}
			pi, err := unix.GetsockoptInt(fd, unix.IPPROTO_IP, unix.IP_PKTINFO)
			if err != nil {
				t.Fatal(err)
			}
			if want := tc.vl != nil; (pi != 0) != want {
				t.Errorf("IP_PKTINFO %d, want set %v", pi, want)
			}
			c, err := net.DialTimeout("tcp", rawsock.Sockname(fd).String(), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			afd, _, errno := rawsock.Accept4(fd, unix.SOCK_CLOEXEC)
			if errno != 0 {
				t.Fatal(errno)
			}
			defer unix.Close(afd)
			got := rawsock.ArrivalIf(afd)
			if got != tc.arrival {
				t.Errorf("arrival interface %d, want %d", got, tc.arrival)
			}
			if tc.vl != nil && tc.vl.Admits(got) != tc.admits {
				t.Errorf("admits %v, want %v", !tc.admits, tc.admits)
			}
		})
	}
}
