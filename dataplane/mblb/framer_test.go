package mblb

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/big"
	"testing"
)

func TestLengthFramer(t *testing.T) {
	be16 := func(v uint16) []byte { return binary.BigEndian.AppendUint16(nil, v) }
	cases := []struct {
		name     string
		field    LengthField
		max      int
		buf      []byte
		size     int
		complete bool
		err      error
	}{
		{"short header", LengthField{Size: 2}, 0, []byte{0}, 0, false, nil},
		{"1 byte", LengthField{Size: 1}, 0, []byte{3, 'a', 'b', 'c', 'x'}, 4, true, nil},
		{"2 byte partial", LengthField{Size: 2}, 0, append(be16(5), 'a'), 7, false, nil},
		{"2 byte little", LengthField{Size: 2, LittleEndian: true}, 0, []byte{2, 0, 'a', 'b'}, 4, true, nil},
		{"4 byte offset", LengthField{Offset: 2, Size: 4}, 0, []byte{9, 9, 0, 0, 0, 1, 'z'}, 7, true, nil},
		{"8 byte", LengthField{Size: 8}, 0, binary.BigEndian.AppendUint64(nil, 0), 8, true, nil},
		{"8 byte little", LengthField{Size: 8, LittleEndian: true}, 0, append(binary.LittleEndian.AppendUint64(nil, 1), 'q'), 9, true, nil},
		{"includes header", LengthField{Size: 2, IncludesHeader: true}, 0, append(be16(4), 'a', 'b'), 4, true, nil},
		{"adjust trailer", LengthField{Size: 2, Adjust: 2}, 0, append(be16(1), 'a', '\r', '\n'), 5, true, nil},
		{"negative adjust", LengthField{Size: 2, Adjust: -1}, 0, append(be16(2), 'a'), 3, true, nil},
		{"shorter than header", LengthField{Size: 2, IncludesHeader: true}, 0, be16(1), 0, false, ErrBadLength},
		{"zero with adjust", LengthField{Size: 1, IncludesHeader: true, Adjust: -5}, 0, []byte{2}, 0, false, ErrBadLength},
		{"over max", LengthField{Size: 4}, 100, []byte{0, 0, 1, 0}, 0, false, ErrTooLarge},
		{"at max", LengthField{Size: 4}, 104, []byte{0, 0, 0, 100}, 104, false, nil},
		{"huge 8 byte", LengthField{Size: 8}, 0, bytes.Repeat([]byte{0xff}, 8), 0, false, ErrTooLarge},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := &LengthFramer{Field: tc.field, Max: tc.max}
			size, complete, err := f.Frame(tc.buf)
			if !errors.Is(err, tc.err) || (err == nil) != (tc.err == nil) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if size != tc.size || complete != tc.complete {
				t.Fatalf("got (%d, %v), want (%d, %v)", size, complete, tc.size, tc.complete)
			}
		})
	}
}

func TestDelimiterFramer(t *testing.T) {
	cases := []struct {
		name   string
		delim  string
		max    int
		chunks []string // appended one by one
		want   []string
		err    error
	}{
		{"one read", "\r\n", 0, []string{"ab\r\ncd\r\n"}, []string{"ab\r\n", "cd\r\n"}, nil},
		{"split delimiter", "\r\n", 0, []string{"abc\r", "\nxy", "z\r\n"}, []string{"abc\r\n", "xyz\r\n"}, nil},
		{"byte by byte", "END", 0, []string{"h", "iE", "N", "DE", "ND"}, []string{"hiEND", "END"}, nil},
		{"too long", "\n", 4, []string{"abcdef"}, nil, ErrTooLarge},
		{"fits max", "\n", 4, []string{"abc\n"}, []string{"abc\n"}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fr, err := Framing{Mode: Delimiter, Delimiter: []byte(tc.delim)}.New(tc.max)
			if err != nil {
				t.Fatal(err)
			}
			var buf []byte
			var got []string
			for _, c := range tc.chunks {
				buf = append(buf, c...)
				for {
					size, ok, err := fr.Frame(buf)
					if err != nil {
						if !errors.Is(err, tc.err) {
							t.Fatalf("err %v, want %v", err, tc.err)
						}
						return
					}
					if !ok {
						break
					}
					got = append(got, string(buf[:size]))
					buf = buf[size:]
				}
			}
			if tc.err != nil {
				t.Fatalf("no error, want %v", tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("messages %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("messages %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestPerReadFramer(t *testing.T) {
	var f PerReadFramer
	if n, ok, _ := f.Frame(nil); n != 0 || ok {
		t.Fatal("empty read made a message")
	}
	if n, ok, _ := f.Frame([]byte("abc")); n != 3 || !ok {
		t.Fatal("a read is not one message")
	}
}

// FuzzLengthFramer checks the length framer against arbitrary headers and
// settings: it never panics, never returns a size beyond the limit or below
// its own header, and agrees with arithmetic on unbounded integers.
func FuzzLengthFramer(f *testing.F) {
	f.Add([]byte{0, 4, 'a', 'b', 'c', 'd'}, 0, 2, false, int64(0), false, 1024)
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, 0, 8, true, int64(-9), true, 0)
	f.Add([]byte{1, 2, 3}, 2, 1, false, int64(1<<40), false, 10)
	f.Fuzz(func(t *testing.T, buf []byte, offset, size int, little bool, adjust int64, incl bool, max int) {
		size = []int{1, 2, 4, 8}[uint(size)%4]
		offset = int(uint(offset) % 16)
		max = int(uint(max) % (1 << 24))
		lf := &LengthFramer{Field: LengthField{Offset: offset, Size: size, LittleEndian: little, Adjust: adjust, IncludesHeader: incl}, Max: max}
		n, complete, err := lf.Frame(buf)
		hdr := offset + size
		if len(buf) < hdr {
			if n != 0 || complete || err != nil {
				t.Fatalf("short buffer gave (%d, %v, %v)", n, complete, err)
			}
			return
		}
		field := buf[offset:hdr]
		if little {
			field = bytes.Clone(field)
			for i, j := 0, len(field)-1; i < j; i, j = i+1, j-1 {
				field[i], field[j] = field[j], field[i]
			}
		}
		want := new(big.Int).SetBytes(field)
		want.Add(want, big.NewInt(adjust))
		if !incl {
			want.Add(want, big.NewInt(int64(hdr)))
		}
		switch {
		case err == nil:
			if want.Cmp(big.NewInt(int64(n))) != 0 {
				t.Fatalf("size %d, want %s", n, want)
			}
			if n < hdr || (max > 0 && n > max) || complete != (len(buf) >= n) {
				t.Fatalf("size %d complete %v: header %d max %d buffer %d", n, complete, hdr, max, len(buf))
			}
		case errors.Is(err, ErrBadLength):
			if want.Cmp(big.NewInt(int64(hdr))) >= 0 && want.Sign() > 0 && want.Cmp(big.NewInt(1<<40)) <= 0 {
				t.Fatalf("bad length for %s (header %d)", want, hdr)
			}
		case errors.Is(err, ErrTooLarge):
			if !(max > 0 && want.Cmp(big.NewInt(int64(max))) > 0) && want.Cmp(big.NewInt(1<<40)) <= 0 &&
				new(big.Int).SetBytes(field).Cmp(big.NewInt(1<<40)) <= 0 {
				t.Fatalf("too large for %s (max %d)", want, max)
			}
		default:
			t.Fatalf("unexpected error %v", err)
		}
	})
}
