//go:build linux

package dataplane

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// udpSockets are the plane's unconnected UDP sockets bound to local.
func udpSockets(t *testing.T, local netip.AddrPort) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list descriptors: %v", err)
	}
	var out []int
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || !strings.HasPrefix(l, "socket:") {
			continue
		}
		if ty, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TYPE); err != nil || ty != unix.SOCK_DGRAM {
			continue
		}
		if _, err := unix.Getpeername(fd); err == nil {
			continue
		}
		if sa, err := unix.Getsockname(fd); err == nil && addrOf(sa) == local {
			out = append(out, fd)
		}
	}
	return out
}

// answerTTL sends msg from c and returns the answer's TTL as received
// (IP_RECVTTL); 0 when no answer came within the tries.
func answerTTL(t *testing.T, c *net.UDPConn, msg string) int {
	t.Helper()
	rc, _ := c.SyscallConn()
	rc.Control(func(fd uintptr) { unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTTL, 1) })
	buf, oob := make([]byte, 2048), make([]byte, 128)
	for i := 0; i < 5; i++ {
		c.Write([]byte(msg))
		c.SetReadDeadline(time.Now().Add(time.Second))
		_, oobn, _, _, err := c.ReadMsgUDP(buf, oob)
		if err != nil {
			continue
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range msgs {
			if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TTL && len(m.Data) >= 4 {
				return int(int32(m.Data[0]) | int32(m.Data[1])<<8 | int32(m.Data[2])<<16 | int32(m.Data[3])<<24)
			}
		}
	}
	return 0
}

// TestUDPSocketSettings: a UDP virtual's client side (the udp profile's
// ip-tos-to-client, ip-ttl-*, ip-df-mode, send-buffer-size,
// no-checksum) is on every listening socket, and the client receives its
// answers with that TTL; the server side is on the member socket; a
// commit without them takes the listener's back.
func TestUDPSocketSettings(t *testing.T) {
	vsAddr, member := "127.3.3.1:5300", "127.3.3.2:5300"
	m := startUDPMember(t, member, "M1")
	p, _ := newPlane(t)
	cfg := udpBasic(vsAddr, member)
	v := cfg.Virtuals["/Common/vs"]
	v.ClientTCP = &TCPSide{TOS: 0x20, SetTOS: true, TTL: 17, DF: DFClear, SendBuffer: 100000, NoChecksum: true}
	v.ServerTCP = &TCPSide{TTL: 33, DF: DFSet, SendBuffer: 60000, NoChecksum: true}
	mustApply(t, p, cfg)
	c := dialUDP(t, "", vsAddr)
	if ttl := answerTTL(t, c.c, "hello"); ttl != 17 {
		t.Fatalf("answer's TTL %d, want 17", ttl)
	}
	ls := udpSockets(t, ap(vsAddr))
	if len(ls) == 0 {
		t.Fatal("no listening socket")
	}
	for _, fd := range ls {
		r, err := sockopt.Read(fd)
		if err != nil {
			t.Fatal(err)
		}
		if r.TOS != 0x20 || r.TTL != 17 || r.PMTUDisc != unix.IP_PMTUDISC_DONT || r.SendBuffer != 200000 || !r.NoChecksum {
			t.Errorf("listening socket %+v", r)
		}
	}
	src := m.sources()
	if len(src) == 0 {
		t.Fatal("the member saw nothing")
	}
	r, err := sockopt.Read(proxySocket(t, src[0], ap(member)))
	if err != nil {
		t.Fatal(err)
	}
	if r.TOS != 0 || r.TTL != 33 || r.PMTUDisc != unix.IP_PMTUDISC_DO || r.SendBuffer != 120000 || !r.NoChecksum {
		t.Errorf("member socket %+v", r)
	}
	mustApply(t, p, udpBasic(vsAddr, member))
	for _, fd := range udpSockets(t, ap(vsAddr)) {
		r, _ := sockopt.Read(fd)
		if r.TOS != 0 || r.TTL == 17 || r.PMTUDisc != unix.IP_PMTUDISC_WANT || r.NoChecksum || r.SendBuffer == 200000 {
			t.Errorf("listening socket after the settings were dropped %+v", r)
		}
	}
	if ttl := answerTTL(t, c.c, "again"); ttl == 17 || ttl == 0 {
		t.Errorf("answer's TTL %d after the settings were dropped", ttl)
	}
}

// TestUDPAllowNoPayload: a datagram without a payload is dropped unless
// the udp profile's allow-no-payload is enabled, then forwarded (the
// member answers it).
func TestUDPAllowNoPayload(t *testing.T) {
	for i, allow := range []bool{false, true} {
		vsAddr, member := "127.3.4."+strconv.Itoa(2*i+1)+":5300", "127.3.4."+strconv.Itoa(2*i+2)+":5300"
		t.Run("allow="+strconv.FormatBool(allow), func(t *testing.T) {
			m := startUDPMember(t, member, "M1")
			p, _ := newPlane(t)
			cfg := udpBasic(vsAddr, member)
			cfg.Virtuals["/Common/vs"].AllowNoPayload = allow
			mustApply(t, p, cfg)
			c := dialUDP(t, "", vsAddr)
			if allow {
				if got := c.mustAsk(""); got != "M1:" {
					t.Fatalf("answer to an empty datagram %q, want M1:", got)
				}
				return
			}
			c.c.Write(nil)
			if got := c.mustAsk("x"); got != "M1:x" {
				t.Fatalf("answer %q, want M1:x (the empty datagram dropped)", got)
			}
			if n := len(m.sources()); n != 1 {
				t.Errorf("the member saw %d datagrams, want 1 (the empty one dropped)", n)
			}
		})
	}
}
