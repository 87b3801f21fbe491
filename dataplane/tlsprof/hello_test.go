package tlsprof

import (
	"bytes"
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
			if got := s.id(); !bytes.Equal(got, tt.want) {
				t.Fatalf("id %s, want %s", hex.EncodeToString(got), hex.EncodeToString(tt.want))
			}
		})
	}
}
