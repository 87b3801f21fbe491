package tlsprof

import (
	"crypto/tls"
	"encoding/binary"
	"testing"
)

// serverHelloRecord is a ServerHello in a handshake record: version,
// random, session ID, suite and extensions (type, data).
func serverHelloRecord(version uint16, random []byte, id []byte, suite uint16, exts ...[]byte) []byte {
	body := binary.BigEndian.AppendUint16(nil, version)
	body = append(body, random...)
	body = append(body, byte(len(id)))
	body = append(body, id...)
	body = binary.BigEndian.AppendUint16(body, suite)
	body = append(body, 0)
	var eb []byte
	for _, e := range exts {
		eb = append(eb, e...)
	}
	body = binary.BigEndian.AppendUint16(body, uint16(len(eb)))
	body = append(body, eb...)
	msg := append([]byte{msgServerHello, 0, byte(len(body) >> 8), byte(len(body))}, body...)
	return append([]byte{recordHandshake, 3, 3, byte(len(msg) >> 8), byte(len(msg))}, msg...)
}

func ext(t uint16, data ...byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, t)
	b = binary.BigEndian.AppendUint16(b, uint16(len(data)))
	return append(b, data...)
}

// TestServerHelloScan: the scan finds the first ServerHello that is not
// a HelloRetryRequest, whole, however the bytes are cut, and gives up on
// bytes that are no hello.
func TestServerHelloScan(t *testing.T) {
	random := make([]byte, 32)
	random[0] = 7
	tls12 := serverHelloRecord(tls.VersionTLS12, random, []byte{1, 2, 3}, 0xc02b, ext(0xff01, 0))
	tls13 := serverHelloRecord(tls.VersionTLS12, random, nil, 0x1301, ext(43, 3, 4), ext(51, 0, 29, 0))
	hrr := serverHelloRecord(tls.VersionTLS12, helloRetryRandom, nil, 0x1301, ext(43, 3, 4))
	ccs := []byte{20, 3, 3, 0, 1, 1}
	app := []byte{23, 3, 3, 0, 2, 9, 9}
	for _, tc := range []struct {
		name    string
		chunks  [][]byte
		version uint16
		suite   uint16
		reneg   bool
		none    bool
	}{
		{name: "tls12", chunks: [][]byte{tls12}, version: tls.VersionTLS12, suite: 0xc02b, reneg: true},
		{name: "tls13 flight", chunks: [][]byte{append(append(append([]byte{}, tls13...), ccs...), app...)}, version: tls.VersionTLS13, suite: 0x1301, reneg: true},
		{name: "cut", chunks: [][]byte{tls12[:3], tls12[3:20], tls12[20:]}, version: tls.VersionTLS12, suite: 0xc02b, reneg: true},
		{name: "after a retry", chunks: [][]byte{append(append([]byte{}, hrr...), ccs...), tls13}, version: tls.VersionTLS13, suite: 0x1301, reneg: true},
		{name: "no renegotiation_info", chunks: [][]byte{serverHelloRecord(tls.VersionTLS12, random, nil, 0xc02f)}, version: tls.VersionTLS12, suite: 0xc02f},
		{name: "plaintext", chunks: [][]byte{[]byte("HTTP/1.1 400 Bad Request\r\n\r\n")}, none: true},
		{name: "alert", chunks: [][]byte{{21, 3, 3, 0, 2, 2, 40}}, none: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s serverHelloScan
			var got *ServerHello
			for _, c := range tc.chunks {
				if s.done {
					break
				}
				if h := s.feed(c); h != nil {
					got = h
				}
			}
			if tc.none {
				if got != nil || !s.done {
					t.Fatalf("found %+v (done %v) in bytes that are no hello", got, s.done)
				}
				return
			}
			if got == nil {
				t.Fatal("no hello found")
			}
			if got.Version != tc.version || got.Suite != tc.suite || got.SecureRenegotiation() != tc.reneg {
				t.Fatalf("got version %x suite %x reneg %v", got.Version, got.Suite, got.SecureRenegotiation())
			}
		})
	}
}
