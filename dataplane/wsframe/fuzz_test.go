package wsframe

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzRelay feeds arbitrary bytes through a relay, with and without
// rules that collect and edit every frame, and checks that it never
// panics and that what it writes is whole frames.
func FuzzRelay(f *testing.F) {
	f.Add(encode(wire{true, OpText, true, k1, "hello"}, wire{false, OpBinary, true, k1, "ab"}, wire{true, OpContinuation, true, k1, "c"}), uint8(3))
	f.Add([]byte{0x81, 0xFE, 0x00, 0x02, 1, 2, 3, 4, 'h', 'i'}, uint8(1))
	f.Add([]byte{0x89, 0x80, 0, 0, 0, 0}, uint8(7))
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		n := int(step%16) + 1
		for _, h := range []Hooks{nil, &hooks{
			frame: func(f *Frame) error {
				if f.Header().Opcode == OpText {
					f.Collect(4)
				}
				if f.Header().Opcode == OpBinary {
					f.Prepend([]byte("<"))
					f.Append([]byte(">"))
				}
				return nil
			},
			data: func(f *Frame) error { return f.ReplacePayload(1, 2, []byte("xyz")) },
		}} {
			var dst, peer bytes.Buffer
			r := &Relay{Side: FromClient, Mode: Remask, Hooks: h, Src: &chunked{b: in, n: n},
				Dst: &Out{W: &dst, ToServer: true}, Peer: &Out{W: &peer}, MaxCollect: 4096}
			err := r.Run(nil)
			if err == nil {
				t.Fatal("Run returned nil before its source ended")
			}
			if errors.Is(err, io.EOF) {
				// A clean end: everything written is whole frames.
				b := dst.Bytes()
				for len(b) > 0 {
					hd, k, perr := Parse(b)
					if perr != nil || k == 0 || uint64(len(b)-k) < hd.Length {
						t.Fatalf("output does not frame: %v (k %d)", perr, k)
					}
					b = b[k+int(hd.Length):]
				}
			}
		}
	})
}
