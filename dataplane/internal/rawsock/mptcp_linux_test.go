//go:build linux

package rawsock

import (
	"net/netip"
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestListenMPTCP: a listener asked for Multipath TCP is an MPTCP socket
// where the kernel has it enabled, plain TCP otherwise, as is one not
// asked for it.
func TestListenMPTCP(t *testing.T) {
	b, _ := os.ReadFile("/proc/sys/net/mptcp/enabled")
	kernel := strings.TrimSpace(string(b)) == "1"
	cases := []struct {
		name  string
		mptcp bool
		want  int
	}{
		{"asked", true, map[bool]int{true: unix.IPPROTO_MPTCP, false: unix.IPPROTO_TCP}[kernel]},
		{"not asked", false, unix.IPPROTO_TCP},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fd, err := Listen(netip.MustParseAddrPort("127.14.24.1:0"), tc.mptcp)
			if err != nil {
				t.Fatal(err)
			}
			defer unix.Close(fd)
			if p, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_PROTOCOL); err != nil || p != tc.want {
				t.Errorf("SO_PROTOCOL %d (%v), want %d", p, err, tc.want)
			}
		})
	}
}
