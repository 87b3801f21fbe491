package wsframe

import (
	"bytes"
	"errors"
	"testing"
)

func TestParseAppend(t *testing.T) {
	for _, h := range []Header{
		{Fin: true, Opcode: OpText, Length: 0},
		{Fin: true, Opcode: OpBinary, Length: 125},
		{Fin: false, Opcode: OpText, Length: 126, Masked: true, Key: [4]byte{1, 2, 3, 4}},
		{Fin: true, Opcode: OpContinuation, Length: 65535},
		{Fin: true, Opcode: OpBinary, Length: 65536, RSV: 4, Masked: true, Key: [4]byte{9, 8, 7, 6}},
		{Fin: true, Opcode: OpClose, Length: 2},
	} {
		b := h.Append(nil)
		for cut := 0; cut < len(b); cut++ {
			if _, n, err := Parse(b[:cut]); n != 0 || err != nil {
				t.Fatalf("%+v cut at %d: n %d err %v", h, cut, n, err)
			}
		}
		got, n, err := Parse(append(b, 0xAA))
		if err != nil || n != len(b) || got != h {
			t.Errorf("%+v: got %+v n %d (want %d) err %v", h, got, n, len(b), err)
		}
	}
}

func TestParseRefuses(t *testing.T) {
	for name, b := range map[string][]byte{
		"reserved opcode":     {0x83, 0},
		"long ping":           {0x89, 126, 0, 200},
		"fragmented close":    {0x08, 0},
		"top bit of length":   {0x82, 127, 0x80, 0, 0, 0, 0, 0, 0, 1},
		"reserved control op": {0x8B, 0},
	} {
		if _, _, err := Parse(b); !errors.Is(err, ErrProtocol) {
			t.Errorf("%s: err %v, want ErrProtocol", name, err)
		}
	}
}

func TestMask(t *testing.T) {
	key := [4]byte{0x11, 0x22, 0x33, 0x44}
	plain := []byte("the quick brown fox jumps over the lazy dog, twice over")
	whole := append([]byte(nil), plain...)
	Mask(key, 0, whole)
	for i := range whole {
		if whole[i] != plain[i]^key[i%4] {
			t.Fatalf("byte %d", i)
		}
	}
	// In pieces at odd offsets, the same.
	pieces := append([]byte(nil), plain...)
	for _, cut := range [][2]int{{0, 3}, {3, 4}, {4, 21}, {21, len(plain)}} {
		Mask(key, uint64(cut[0]), pieces[cut[0]:cut[1]])
	}
	if !bytes.Equal(pieces, whole) {
		t.Fatal("masking in pieces differs")
	}
	other := [4]byte{5, 6, 7, 8}
	Mask(KeyXOR(key, other), 0, whole)
	Mask(other, 0, whole)
	if !bytes.Equal(whole, plain) {
		t.Fatal("KeyXOR does not turn one key into the other")
	}
	if KeyNumber(KeyOf(0xDEADBEEF)) != 0xDEADBEEF {
		t.Fatal("KeyOf and KeyNumber disagree")
	}
}
