package icmpreject

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/cksum"
)

// TestMessages: the port unreachables' fields as RFC 792 and RFC 4443
// lay them out: type and code, a valid ICMP (IPv4) and quoted IP header
// checksum, the quoted IP header's addresses, protocol and length, the
// UDP header's ports and length, and the payload quoted up to the bound.
func TestMessages(t *testing.T) {
	client4, vs4 := netip.MustParseAddrPort("127.192.40.2:40001"), netip.MustParseAddrPort("127.192.40.1:53")
	client6, vs6 := netip.MustParseAddrPort("[2001:db8::2]:40001"), netip.MustParseAddrPort("[2001:db8::1]:53")
	long := []byte(strings.Repeat("x", 3000))
	for _, c := range []struct {
		name          string
		v6            bool
		payload       []byte
		quoted, ulen  int
		client, local netip.AddrPort
	}{
		{"ipv4 short", false, []byte("query"), 5, 13, client4, vs4},
		{"ipv4 empty", false, nil, 0, 8, client4, vs4},
		{"ipv4 long", false, long, 576 - 20 - 8 - 20 - 8, 3008, client4, vs4},
		{"ipv6 short", true, []byte("query"), 5, 13, client6, vs6},
		{"ipv6 long", true, long, 1280 - 40 - 8 - 40 - 8, 3008, client6, vs6},
	} {
		var m, ip, udp []byte
		client := netip.AddrPortFrom(c.client.Addr().Unmap(), c.client.Port())
		if c.v6 {
			m = Message6(client, c.local, c.payload)
			if m[0] != 1 || m[1] != 4 {
				t.Errorf("%s: type %d code %d, want 1 4", c.name, m[0], m[1])
			}
			ip, udp = m[8:48], m[48:56]
			if ip[0]>>4 != 6 || ip[6] != 17 || !bytes.Equal(ip[8:24], client.Addr().AsSlice()) || !bytes.Equal(ip[24:40], c.local.Addr().AsSlice()) {
				t.Errorf("%s: quoted IPv6 header % x", c.name, ip)
			}
			if n := int(binary.BigEndian.Uint16(ip[4:6])); n != c.ulen {
				t.Errorf("%s: quoted payload length %d, want %d", c.name, n, c.ulen)
			}
		} else {
			m = Message4(client, c.local, c.payload)
			if m[0] != 3 || m[1] != 3 {
				t.Errorf("%s: type %d code %d, want 3 3", c.name, m[0], m[1])
			}
			if cksum.Internet(m) != 0 {
				t.Errorf("%s: bad ICMP checksum", c.name)
			}
			ip, udp = m[8:28], m[28:36]
			if cksum.Internet(ip) != 0 {
				t.Errorf("%s: bad quoted IP header checksum", c.name)
			}
			if ip[0] != 0x45 || ip[9] != 17 || !bytes.Equal(ip[12:16], client.Addr().AsSlice()) || !bytes.Equal(ip[16:20], c.local.Addr().AsSlice()) {
				t.Errorf("%s: quoted IPv4 header % x", c.name, ip)
			}
			if n := int(binary.BigEndian.Uint16(ip[2:4])); n != 20+c.ulen {
				t.Errorf("%s: quoted total length %d, want %d", c.name, n, 20+c.ulen)
			}
		}
		if sp, dp := binary.BigEndian.Uint16(udp[0:2]), binary.BigEndian.Uint16(udp[2:4]); sp != c.client.Port() || dp != c.local.Port() {
			t.Errorf("%s: quoted ports %d > %d", c.name, sp, dp)
		}
		if n := int(binary.BigEndian.Uint16(udp[4:6])); n != c.ulen {
			t.Errorf("%s: quoted UDP length %d, want %d", c.name, n, c.ulen)
		}
		rest := m[len(m)-c.quoted:]
		if len(m) != 8+len(ip)+8+c.quoted || !bytes.Equal(rest, c.payload[:c.quoted]) {
			t.Errorf("%s: %d bytes quoted of the payload, want %d", c.name, len(m)-8-len(ip)-8, c.quoted)
		}
	}
}

// TestSenderNil: a nil Sender sends nothing, and says so.
func TestSenderNil(t *testing.T) {
	var s *Sender
	if s.PortUnreachable(netip.MustParseAddrPort("127.192.40.2:1"), netip.MustParseAddrPort("127.192.40.1:2"), nil) {
		t.Error("a nil Sender sent")
	}
}

// TestSenderAllow: a send the rate limit refuses is not made.
func TestSenderAllow(t *testing.T) {
	s := &Sender{Allow: func() bool { return false }}
	defer s.Close()
	if s.PortUnreachable(netip.MustParseAddrPort("127.192.40.2:1"), netip.MustParseAddrPort("127.192.40.1:2"), nil) {
		t.Error("sent over the limit")
	}
	if s.Sent.Load() != 0 {
		t.Error("counted a send over the limit")
	}
}
