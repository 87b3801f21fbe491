package mrf

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
)

func TestReader(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		term string
		max  int
		want []string
		err  error
	}{
		{"lines", "a\nbb\nccc\n", "\n", 0, []string{"a", "bb", "ccc"}, io.EOF},
		{"partial tail dropped", "a\nbb", "\n", 0, []string{"a"}, io.EOF},
		{"empty messages", "\n\nx\n", "\n", 0, []string{"", "", "x"}, io.EOF},
		{"crlf", "one\r\ntwo\r\n", "\r\n", 0, []string{"one", "two"}, io.EOF},
		{"multibyte term split", "ab||cd||", "||", 0, []string{"ab", "cd"}, io.EOF},
		{"at max", "abcd\n", "\n", 4, []string{"abcd"}, io.EOF},
		{"over max", "abcde\n", "\n", 4, nil, ErrTooLarge},
		{"over max without term", "abcdefghij", "\n", 4, nil, ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Reader{R: iotest.OneByteReader(bytes.NewReader([]byte(tc.in))), Term: []byte(tc.term), Max: tc.max}
			var got []string
			var err error
			for range 100 {
				var m []byte
				if m, err = r.Next(); err != nil {
					break
				}
				got = append(got, string(m))
			}
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %q, want %q", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Fatalf("got %q, want %q", got, tc.want)
				}
			}
		})
	}
}

func TestReaderNoTerminator(t *testing.T) {
	r := Reader{R: bytes.NewReader([]byte("whole chunk"))}
	m, err := r.Next()
	if err != nil || string(m) != "whole chunk" {
		t.Fatalf("%q %v", m, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
}

// FuzzReader checks that framing never panics, that every message is
// free of the terminator and within max, and that messages joined with
// the terminator are a prefix of the input.
func FuzzReader(f *testing.F) {
	f.Add([]byte("a\nb\n"), []byte("\n"), uint16(0))
	f.Add([]byte("xx||yy||zz"), []byte("||"), uint16(3))
	f.Add([]byte{0, 1, 2, 0, 1}, []byte{0, 1}, uint16(1))
	f.Fuzz(func(t *testing.T, in, term []byte, max uint16) {
		if len(term) == 0 || len(term) > 8 {
			return
		}
		r := Reader{R: iotest.HalfReader(bytes.NewReader(in)), Term: term, Max: int(max)}
		var joined []byte
		for range len(in) + 2 {
			m, err := r.Next()
			if err != nil {
				break
			}
			if bytes.Contains(m, term) {
				t.Fatalf("message %q holds the terminator %q", m, term)
			}
			if max > 0 && len(m) > int(max) {
				t.Fatalf("message of %d bytes over max %d", len(m), max)
			}
			joined = Frame(joined, m, term)
		}
		if !bytes.HasPrefix(in, joined) {
			t.Fatalf("messages %q are not a prefix of %q", joined, in)
		}
	})
}
