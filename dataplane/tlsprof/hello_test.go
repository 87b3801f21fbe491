package tlsprof

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"testing"
)

// hello is the start of a handshake record holding one hello message of
// type typ with session ID id (the rest of the message left out).
func hello(typ byte, id []byte, recLen int) []byte {
	b := []byte{recordHandshake, 3, 1, byte(recLen >> 8), byte(recLen), typ, 0, 1, 0, 3, 3}
	b = append(b, make([]byte, 32)...)
	b = append(b, byte(len(id)))
	b = append(b, id...)
	return append(b, 0, 2, 0x13, 1) // what follows: cipher suites
}

func TestHelloScan(t *testing.T) {
	id := bytes.Repeat([]byte{0xab}, 32)
	tests := []struct {
		name  string
		in    []byte
		split int // feed in pieces of this many bytes (0: at once)
		want  []byte
	}{
		{"client hello, 32-byte ID", hello(msgClientHello, id, 200), 0, id},
		{"server hello, 8-byte ID, byte by byte", hello(msgServerHello, id[:8], 200), 1, id[:8]},
		{"split inside the ID", hello(msgClientHello, id, 200), 50, id},
		{"no ID", hello(msgServerHello, nil, 200), 3, nil},
		{"not a handshake record", append([]byte{23}, hello(msgClientHello, id, 200)[1:]...), 0, nil},
		{"not a hello", append(hello(msgClientHello, id, 200)[:5:5], append([]byte{11}, hello(msgClientHello, id, 200)[6:]...)...), 0, nil},
		{"ID longer than 32", hello(msgClientHello, bytes.Repeat([]byte{1}, 33), 200), 0, nil},
		{"record too short for its ID", hello(msgClientHello, id, 40), 0, nil},
		{"stream ends early", hello(msgClientHello, id, 200)[:60], 7, nil},
		{"a short line of plaintext", []byte("ok\n"), 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s helloScan
			step := tt.split
			if step == 0 {
				step = len(tt.in)
			}
			for i := 0; i < len(tt.in) && !s.done; i += step {
				s.feed(tt.in[i:min(i+step, len(tt.in))])
			}
			if !s.done && len(tt.in) >= helloMax {
				t.Fatalf("not done after %d bytes", len(tt.in))
			}
			if got := s.id(); !bytes.Equal(got, tt.want) {
				t.Fatalf("id %s, want %s", hex.EncodeToString(got), hex.EncodeToString(tt.want))
			}
		})
	}
}

// clientHello is the first flight of a crypto/tls client asking for
// serverName (none when empty).
func clientHello(t *testing.T, serverName string) []byte {
	t.Helper()
	c := &firstFlight{}
	tls.Client(c, &tls.Config{ServerName: serverName, InsecureSkipVerify: true}).Handshake()
	if len(c.out) == 0 {
		t.Fatal("the client wrote no hello")
	}
	return c.out
}

// firstFlight keeps what a TLS client writes and ends its handshake.
type firstFlight struct {
	helloBytes
	out []byte
}

func (c *firstFlight) Write(p []byte) (int, error) { c.out = append(c.out, p...); return len(p), nil }

// refragment splits the one handshake record of rec into two records,
// the first carrying cut bytes of the message.
func refragment(rec []byte, cut int) []byte {
	msg := rec[recordHeader:]
	first := append([]byte{recordHandshake, rec[1], rec[2], byte(cut >> 8), byte(cut)}, msg[:cut]...)
	rest := len(msg) - cut
	return append(append(first, recordHandshake, rec[1], rec[2], byte(rest>>8), byte(rest)), msg[cut:]...)
}

func TestParseClientHello(t *testing.T) {
	api := clientHello(t, "api.example")
	bare := clientHello(t, "")
	split := refragment(api, 40)
	tests := []struct {
		name string
		in   []byte
		done bool
		sni  string
		ok   bool // a hello was read
	}{
		{"whole hello with SNI", api, true, "api.example", true},
		{"whole hello without SNI", bare, true, "", true},
		{"record header only", api[:recordHeader], false, "", false},
		{"cut inside the record", api[:len(api)-1], false, "", false},
		{"over two records", split, true, "api.example", true},
		{"first of two records", split[:recordHeader+40], false, "", false},
		{"second record cut", split[:len(split)-3], false, "", false},
		{"not TLS", []byte("GET / HTTP/1.1\r\nHost: api.example\r\n\r\n"), true, "", false},
		{"a ServerHello", append(append([]byte(nil), api[:recordHeader]...), append([]byte{msgServerHello}, api[recordHeader+1:]...)...), true, "", false},
		{"a malformed hello", append(append([]byte(nil), api[:recordHeader+4]...), make([]byte, len(api)-recordHeader-4)...), true, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, done := ParseClientHello(tt.in)
			if done != tt.done || (h != nil) != tt.ok {
				t.Fatalf("hello %v done %v, want hello %v done %v", h != nil, done, tt.ok, tt.done)
			}
			if h != nil && h.ServerName != tt.sni {
				t.Fatalf("server name %q, want %q", h.ServerName, tt.sni)
			}
		})
	}
	// Byte by byte, the hello is done exactly when its last byte is in.
	for n := 1; n <= len(split); n++ {
		if _, done := ParseClientHello(split[:n]); done != (n == len(split)) {
			t.Fatalf("%d of %d bytes: done %v", n, len(split), done)
		}
	}
}
