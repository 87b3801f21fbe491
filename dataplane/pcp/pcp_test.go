package pcp

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

func mapRequest(version uint8, opts ...byte) []byte {
	b := make([]byte, headerLen+mapLen)
	b[0], b[1] = version, OpMap
	binary.BigEndian.PutUint32(b[4:], 600)
	x := netip.MustParseAddr("::ffff:192.0.2.7").As16()
	copy(b[8:], x[:])
	p := b[headerLen:]
	p[0] = 0xaa
	p[12] = 6
	binary.BigEndian.PutUint16(p[16:], 8080)
	p[30], p[31] = 0xff, 0xff
	return append(b, opts...)
}

func TestParse(t *testing.T) {
	third := append([]byte{OptThirdParty, 0, 0, 16}, netip.MustParseAddr("::ffff:192.0.2.9").AsSlice()...)
	for _, tc := range []struct {
		name string
		msg  []byte
		code uint8
		ok   bool
	}{
		{"one octet", []byte{2}, 0, false},
		{"a response", []byte{2, 0x81, 0, 0}, 0, false},
		{"version 1", mapRequest(1), UnsuppVersion, true},
		{"map", mapRequest(2), Success, true},
		{"short map", mapRequest(2)[:40], MalformedRequest, true},
		{"odd length", append(mapRequest(2), 0), MalformedRequest, true},
		{"opcode 5", append([]byte{2, 5}, make([]byte, 22)...), UnsuppOpcode, true},
		{"third party", mapRequest(2, third...), Success, true},
		{"third party twice", mapRequest(2, append(third, third...)...), MalformedOption, true},
		{"prefer failure", mapRequest(2, OptPreferFailure, 0, 0, 0), Success, true},
		{"prefer failure with data", mapRequest(2, OptPreferFailure, 0, 0, 4, 0, 0, 0, 0), MalformedOption, true},
		{"unknown mandatory option", mapRequest(2, 77, 0, 0, 0), UnsuppOption, true},
		{"filter (not applied)", mapRequest(2, append([]byte{OptFilter, 0, 0, 20}, make([]byte, 20)...)...), UnsuppOption, true},
		{"unknown optional option", mapRequest(2, 200, 0, 0, 0), Success, true},
		{"option past the end", mapRequest(2, 200, 0, 0, 8), MalformedOption, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, code, ok := Parse(tc.msg)
			if ok != tc.ok || ok && code != tc.code {
				t.Fatalf("Parse: %s ok=%v, want %s ok=%v", ResultName(code), ok, ResultName(tc.code), tc.ok)
			}
			if tc.name == "map" && (r.InternalPort != 8080 || r.Protocol != 6 || r.Client != netip.MustParseAddr("192.0.2.7") || !Unspecified(r.ExtAddr) || r.Nonce[0] != 0xaa) {
				t.Errorf("fields: %+v", r)
			}
			if tc.name == "third party" && r.ThirdParty != netip.MustParseAddr("192.0.2.9") {
				t.Errorf("third party %s", r.ThirdParty)
			}
		})
	}
}

func TestResponse(t *testing.T) {
	r, _, _ := Parse(mapRequest(2))
	resp := Response{Opcode: OpMap, Result: Success, Lifetime: 120, Epoch: 7, Req: &r,
		ExtAddr: netip.MustParseAddr("198.51.100.4"), ExtPort: 40001}
	b := resp.Append(nil)
	if len(b) != headerLen+mapLen || b[1] != 0x81 || b[3] != Success ||
		binary.BigEndian.Uint32(b[4:]) != 120 || binary.BigEndian.Uint32(b[8:]) != 7 {
		t.Fatalf("header % x", b[:headerLen])
	}
	p := b[headerLen:]
	if p[0] != 0xaa || binary.BigEndian.Uint16(p[16:]) != 8080 || binary.BigEndian.Uint16(p[18:]) != 40001 ||
		netip.AddrFrom16([16]byte(p[20:36])).Unmap() != netip.MustParseAddr("198.51.100.4") {
		t.Errorf("payload % x", p)
	}
	v1 := Response{Opcode: OpMap, Result: UnsuppVersion, Req: &Request{Version: 1}}
	if b := v1.Append(nil); len(b) != headerLen || b[0] != Version {
		t.Errorf("UNSUPP_VERSION answer % x", b)
	}
}
