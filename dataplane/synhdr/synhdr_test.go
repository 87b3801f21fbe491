package synhdr

import (
	"bytes"
	"strings"
	"testing"
)

// ip4 is an IPv4 header (tos, ttl, protocol) before tcp.
func ip4(tos, ttl, proto byte, tcp []byte) []byte {
	h := []byte{0x45, tos, 0, 0, 0, 0, 0x40, 0, ttl, proto, 0, 0, 127, 69, 0, 1, 127, 69, 0, 2}
	return append(h, tcp...)
}

// ip6 is an IPv6 header (traffic class, hop limit, next header) before tcp.
func ip6(tc, hops, next byte, tcp []byte) []byte {
	h := make([]byte, 40)
	h[0], h[1], h[6], h[7] = 0x60|tc>>4, tc<<4, next, hops
	return append(h, tcp...)
}

// tcpHdr is a TCP SYN header with opts, padded to whole words.
func tcpHdr(opts ...byte) []byte {
	for len(opts)%4 != 0 {
		opts = append(opts, 0)
	}
	h := make([]byte, 20, 20+len(opts))
	h[12] = byte((20+len(opts))/4) << 4
	h[13] = 0x02
	return append(h, opts...)
}

// linuxOpts is what a Linux client's SYN carries: MSS 1400, SACK
// permitted, timestamps, NOP, window scale 7.
var linuxOpts = []byte{2, 4, 0x05, 0x78, 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		name     string
		b        []byte
		ok       bool
		ttl, tos byte
		mss      uint16
		kind     byte
		last     bool
		want     []byte
		found    bool
	}{
		{name: "ipv4 linux", b: ip4(0x10, 61, 6, tcpHdr(linuxOpts...)), ok: true, ttl: 61, tos: 0x10, mss: 1400, kind: 3, want: []byte{7}, found: true},
		{name: "ipv4 timestamps", b: ip4(0, 64, 6, tcpHdr(linuxOpts...)), ok: true, ttl: 64, mss: 1400, kind: 8, want: []byte{0, 0, 0, 1, 0, 0, 0, 0}, found: true},
		{name: "ipv4 sack permitted has no value", b: ip4(0, 64, 6, tcpHdr(linuxOpts...)), ok: true, ttl: 64, mss: 1400, kind: 4, want: []byte{}, found: true},
		{name: "ipv4 absent", b: ip4(0, 64, 6, tcpHdr(linuxOpts...)), ok: true, ttl: 64, mss: 1400, kind: 28},
		{name: "ipv6", b: ip6(0xb8, 57, 6, tcpHdr(2, 4, 0x05, 0xa0, 28, 6, 127, 69, 0, 9)), ok: true, ttl: 57, tos: 0xb8, mss: 1440, kind: 28, want: []byte{127, 69, 0, 9}, found: true},
		{name: "first of two", b: ip4(0, 64, 6, tcpHdr(253, 4, 1, 2, 253, 4, 3, 4)), ok: true, ttl: 64, kind: 253, want: []byte{1, 2}, found: true},
		{name: "last of two", b: ip4(0, 64, 6, tcpHdr(253, 4, 1, 2, 253, 4, 3, 4)), ok: true, ttl: 64, kind: 253, last: true, want: []byte{3, 4}, found: true},
		{name: "after end of list", b: ip4(0, 64, 6, tcpHdr(0, 0, 0, 0, 28, 4, 1, 2)), ok: true, ttl: 64, kind: 28},
		{name: "length past the end", b: ip4(0, 64, 6, tcpHdr(1, 28, 9, 1, 2)), ok: true, ttl: 64, kind: 28},
		{name: "length below 2", b: ip4(0, 64, 6, tcpHdr(28, 1, 28, 4, 1, 2)), ok: true, ttl: 64, kind: 28},
		{name: "bad mss length", b: ip4(0, 64, 6, tcpHdr(2, 3, 5, 0)), ok: true, ttl: 64},
		{name: "udp", b: ip4(0, 64, 17, tcpHdr()), ok: false},
		{name: "ipv6 extension header", b: ip6(0, 64, 0, tcpHdr()), ok: false},
		{name: "short tcp", b: ip4(0, 64, 6, make([]byte, 10)), ok: false},
		{name: "offset past the end", b: ip4(0, 64, 6, tcpHdr(2, 4, 5, 0))[:43], ok: false},
		{name: "not ip", b: []byte{0x20, 0, 0}, ok: false},
		{name: "empty", b: nil, ok: false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, ok := Parse(c.b)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			if s.TTL != c.ttl || s.TOS != c.tos || s.MSS != c.mss {
				t.Errorf("ttl %d tos %#x mss %d, want %d %#x %d", s.TTL, s.TOS, s.MSS, c.ttl, c.tos, c.mss)
			}
			if c.kind == 0 {
				return
			}
			v, found := s.Option(c.kind, c.last)
			if found != c.found || !bytes.Equal(v, c.want) {
				t.Errorf("option %d = %v %v, want %v %v", c.kind, v, found, c.want, c.found)
			}
		})
	}
}

func TestParsePicks(t *testing.T) {
	for _, c := range []struct {
		in    string
		named map[byte]bool // kind: last
		err   string
	}{
		{in: "none"},
		{in: ""},
		{in: "{28 first}", named: map[byte]bool{28: false}},
		{in: "{28 first} {253 last} {2 last}", named: map[byte]bool{28: false, 253: true, 2: true}},
		{in: "{255 last}", named: map[byte]bool{255: true}},
		{in: "{1 first}", err: "from 2 to 255"},
		{in: "{256 first}", err: "from 2 to 255"},
		{in: "{28 middle}", err: "expected {KIND first|last}"},
		{in: "{28}", err: "expected {KIND first|last}"},
		{in: "28 first", err: "expected {KIND first|last}"},
		{in: "{28 first", err: "without its }"},
		{in: "{28 first} {28 last}", err: "named twice"},
	} {
		p, err := ParsePicks(c.in)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.in, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if p.Empty() != (len(c.named) == 0) {
			t.Errorf("%q: Empty %v", c.in, p.Empty())
		}
		for k := 0; k < 256; k++ {
			named, last := p.Named(byte(k))
			wl, want := c.named[byte(k)]
			if named != want || last != wl {
				t.Errorf("%q: kind %d named %v last %v, want %v %v", c.in, k, named, last, want, wl)
			}
		}
	}
}
