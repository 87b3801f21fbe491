package transcripts

import (
	"encoding/binary"
	"encoding/hex"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// waitudp ADDR: wait (up to 10 s) until a UDP socket is bound to ADDR, or
// to its family's wildcard address at ADDR's port. A datagram sent before
// a member started in the background has bound is lost (a client's
// request times out), where waitport can retry a TCP connect; the kernel's
// socket table says when the member is ready without sending it anything.
func cmdWaitUDP(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: waitudp ADDR:PORT")
	}
	ap, err := netip.ParseAddrPort(args[0])
	if err != nil {
		ts.Fatalf("waitudp: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if udpBound(ap) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	ts.Fatalf("no UDP socket bound to %s within 10s", args[0])
}

// udpBound reports whether /proc/net/udp or udp6 lists a socket bound to
// ap (or to the wildcard address at its port).
func udpBound(ap netip.AddrPort) bool {
	for _, f := range []string{"/proc/net/udp", "/proc/net/udp6"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			fields := strings.Fields(line)
			if len(fields) < 2 {
				continue
			}
			local, err := procAddr(fields[1])
			if err == nil && local.Port() == ap.Port() && (local.Addr() == ap.Addr() || local.Addr().IsUnspecified() && local.Addr().Is4() == ap.Addr().Is4()) {
				return true
			}
		}
	}
	return false
}

// procAddr decodes a /proc/net address: the address's 32-bit words in
// host order (little-endian here), in hex, a colon, the port in hex.
func procAddr(s string) (netip.AddrPort, error) {
	h, p, _ := strings.Cut(s, ":")
	raw, err := hex.DecodeString(h)
	if err != nil || len(raw)%4 != 0 {
		return netip.AddrPort{}, strconv.ErrSyntax
	}
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(raw[i:], binary.LittleEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return netip.AddrPort{}, err
	}
	a, ok := netip.AddrFromSlice(raw)
	if !ok {
		return netip.AddrPort{}, strconv.ErrSyntax
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(port)), nil
}

func TestProcAddr(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"0100007F:13C4", "127.0.0.1:5060"},
		{"0A00537F:0035", "127.83.0.10:53"},
		{"00000000:1F90", "0.0.0.0:8080"},
		{"00000000000000000000000001000000:0035", "[::1]:53"},
	} {
		got, err := procAddr(tc.in)
		if err != nil || got.String() != tc.want {
			t.Errorf("procAddr(%q) = %v, %v; want %s", tc.in, got, err, tc.want)
		}
	}
}
