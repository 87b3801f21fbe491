package iiop

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

// TestParseEveryTypeVersionOrder builds each message type in GIOP 1.0,
// 1.1 and 1.2, big- and little-endian, and reads back its type, request
// id, reply expectation and object key.
func TestParseEveryTypeVersionOrder(t *testing.T) {
	key := []byte("obj/key-7")
	for minor := uint8(0); minor <= 2; minor++ {
		for _, little := range []bool{false, true} {
			cases := []struct {
				name    string
				msg     []byte
				typ     Type
				hasID   bool
				id      uint32
				expects bool
				key     []byte
			}{
				{"request", AppendRequest(nil, minor, little, 0x01020304, true, key, "echo", []byte("args")), Request, true, 0x01020304, true, key},
				{"oneway", AppendRequest(nil, minor, little, 9, false, key, "notify", nil), Request, true, 9, false, key},
				{"reply", AppendReply(nil, minor, little, 77, 0, []byte("m1")), Reply, true, 77, false, nil},
				{"cancel", AppendCancelRequest(nil, minor, little, 5), CancelRequest, true, 5, false, nil},
				{"locate", AppendLocateRequest(nil, minor, little, 6, key), LocateRequest, true, 6, true, key},
				{"locatereply", AppendLocateReply(nil, minor, little, 6, 1), LocateReply, true, 6, false, nil},
				{"close", AppendHeaderOnly(nil, minor, little, CloseConnection), CloseConnection, false, 0, false, nil},
				{"error", AppendHeaderOnly(nil, minor, little, MessageError), MessageError, false, 0, false, nil},
			}
			for _, c := range cases {
				t.Run(fmt.Sprintf("1.%d/little=%v/%s", minor, little, c.name), func(t *testing.T) {
					n, ok, err := Framer{}.Frame(c.msg)
					if err != nil || !ok || n != len(c.msg) {
						t.Fatalf("Frame = %d %v %v, want %d true", n, ok, err, len(c.msg))
					}
					m, err := Parse(c.msg)
					if err != nil {
						t.Fatal(err)
					}
					if m.Type != c.typ || m.HasID != c.hasID || m.RequestID != c.id || m.Expects != c.expects || !bytes.Equal(m.Key, c.key) || m.Little() != little || m.Minor != minor {
						t.Fatalf("Parse = %+v key %q, want type %v id %v/%d expects %v key %q", m, m.Key, c.typ, c.hasID, c.id, c.expects, c.key)
					}
					// SetRequestID rewrites the id where it lies, in
					// the message's byte order, and nothing else.
					b := append([]byte(nil), c.msg...)
					m.SetRequestID(b, 0xa0b0c0d0)
					m2, err := Parse(b)
					if err != nil {
						t.Fatal(err)
					}
					want := c.id
					if c.hasID {
						want = 0xa0b0c0d0
					}
					if m2.RequestID != want || m2.Type != c.typ || !bytes.Equal(m2.Key, c.key) || m2.Expects != c.expects {
						t.Fatalf("after SetRequestID: %+v, want id %#x", m2, want)
					}
					if c.hasID {
						m2.SetRequestID(b, c.id)
					}
					if !bytes.Equal(b, c.msg) {
						t.Fatalf("SetRequestID back: % x, want % x", b, c.msg)
					}
				})
			}
			t.Run(fmt.Sprintf("1.%d/little=%v/bodies", minor, little), func(t *testing.T) {
				if op := RequestOperation(AppendRequest(nil, minor, little, 1, true, key, "get_name", nil)); op != "get_name" {
					t.Fatalf("operation %q", op)
				}
				if b := ReplyBody(AppendReply(nil, minor, little, 1, 0, []byte("member-a"))); string(b) != "member-a" {
					t.Fatalf("reply body %q", b)
				}
			})
		}
	}
}

// TestFragments: a 1.1 or 1.2 request split after its request id has no
// key and is Partial; its Fragment carries (in 1.2) the same request id;
// 1.0 has no fragments.
func TestFragments(t *testing.T) {
	for _, minor := range []uint8{1, 2} {
		for _, little := range []bool{false, true} {
			whole := AppendRequest(nil, minor, little, 42, true, []byte("some-object-key"), "op", []byte("0123456789"))
			cut := 4 // the 1.2 request id only
			if minor == 1 {
				cut = 8 // service contexts and request id
			}
			first, rest := Split(whole, cut)
			m, err := Parse(first)
			if err != nil {
				t.Fatalf("1.%d first fragment: %v", minor, err)
			}
			if !m.More() || !m.Partial || m.Key != nil || m.RequestID != 42 || m.Type != Request {
				t.Fatalf("1.%d first fragment: %+v", minor, m)
			}
			// Cut after the key: the key is read, still more to come.
			first2, _ := Split(whole, len(whole)-HeaderSize-12)
			if m, err := Parse(first2); err != nil || string(m.Key) != "some-object-key" || !m.More() {
				t.Fatalf("1.%d fragment after the key: %+v %v", minor, m, err)
			}
			f := AppendFragment(nil, minor, little, 42, false, rest)
			fm, err := Parse(f)
			if err != nil || fm.Type != Fragment || !fm.Partial || fm.More() {
				t.Fatalf("1.%d fragment: %+v %v", minor, fm, err)
			}
			if minor == 2 && (!fm.HasID || fm.RequestID != 42) {
				t.Fatalf("1.2 fragment lost its request id: %+v", fm)
			}
			if minor == 2 { // a 1.2 Fragment's id is rewritten as well
				fm.SetRequestID(f, 7)
				if fm2, err := Parse(f); err != nil || fm2.RequestID != 7 {
					t.Fatalf("1.2 fragment after SetRequestID: %+v %v", fm2, err)
				}
			}
			if minor == 1 && fm.HasID {
				t.Fatalf("1.1 fragment has no request id: %+v", fm)
			}
		}
	}
	if _, err := Parse(AppendFragment(nil, 0, false, 1, false, nil)); !errors.Is(err, ErrType) {
		t.Fatalf("1.0 Fragment: %v, want ErrType", err)
	}
}

// TestMalformed: what is not GIOP, or breaks its rules, is an error at
// the framer (header) or at Parse (body).
func TestMalformed(t *testing.T) {
	good := AppendRequest(nil, 2, false, 1, true, []byte("k"), "op", nil)
	mod := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	cases := []struct {
		name  string
		b     []byte
		frame error // from Framer (nil: frames)
		parse error // from Parse
	}{
		{"http", []byte("GET / HTTP/1.1\r\n\r\n"), ErrMagic, ErrMagic},
		{"short not giop", []byte("GX"), ErrMagic, ErrTruncated},
		{"version 2.0", mod(func(b []byte) []byte { b[4] = 2; return b }), ErrVersion, ErrVersion},
		{"version 1.3", mod(func(b []byte) []byte { b[5] = 3; return b }), ErrVersion, ErrVersion},
		{"1.0 byte order 2", mod(func(b []byte) []byte { b[5], b[6] = 0, 2; return b }), ErrFlags, ErrFlags},
		{"unknown flag", mod(func(b []byte) []byte { b[6] = 0x04; return b }), ErrFlags, ErrFlags},
		{"type 8", mod(func(b []byte) []byte { b[7] = 8; return b }), ErrType, ErrType},
		{"size beyond the bytes", mod(func(b []byte) []byte { b[11]++; return b }), nil, ErrTruncated},
		{"request without its id", AppendHeaderOnly(nil, 2, false, Request), nil, ErrTruncated},
		{"key longer than the body", mod(func(b []byte) []byte { b[27] = 200; return b }), nil, ErrTruncated},
		{"disposition 3", mod(func(b []byte) []byte { b[21] = 3; return b }), nil, ErrTruncated},
		{"reply without its id", AppendHeaderOnly(nil, 1, true, Reply), nil, ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := Framer{}.Frame(c.b)
			if !errors.Is(err, c.frame) {
				t.Fatalf("Frame: %v, want %v", err, c.frame)
			}
			if _, err := Parse(c.b); !errors.Is(err, c.parse) {
				t.Fatalf("Parse: %v, want %v", err, c.parse)
			}
		})
	}
	if _, _, err := (Framer{Max: 20}).Frame(good); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Max: %v", err)
	}
}

// TestFramerStream: a stream of pipelined messages cut at every byte
// still frames each message whole.
func TestFramerStream(t *testing.T) {
	var stream []byte
	stream = AppendRequest(stream, 0, false, 1, true, []byte("a"), "op", []byte("x"))
	stream = AppendLocateRequest(stream, 1, true, 2, []byte("b"))
	stream = AppendRequest(stream, 2, true, 3, true, []byte("c"), "op", []byte("yz"))
	for cut := 0; cut <= len(stream); cut++ {
		buf := stream[:cut]
		var ids []uint32
		for len(buf) > 0 {
			n, ok, err := Framer{}.Frame(buf)
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			if !ok {
				break
			}
			m, err := Parse(buf[:n])
			if err != nil {
				t.Fatalf("cut %d: %v", cut, err)
			}
			ids = append(ids, m.RequestID)
			buf = buf[n:]
		}
		if cut == len(stream) && fmt.Sprint(ids) != "[1 2 3]" {
			t.Fatalf("whole stream framed %v", ids)
		}
	}
}

// TestParseAllocs: framing and parsing allocate nothing.
func TestParseAllocs(t *testing.T) {
	msg := AppendRequest(nil, 2, false, 1, true, []byte("key"), "op", []byte("body"))
	n := testing.AllocsPerRun(100, func() {
		if _, ok, err := (Framer{}).Frame(msg[:7]); err != nil || ok {
			t.Fatal(err)
		}
		if _, _, err := (Framer{}).Frame(msg); err != nil {
			t.Fatal(err)
		}
		if _, err := Parse(msg); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}

func BenchmarkFrameParse(b *testing.B) {
	msg := AppendRequest(nil, 2, false, 1, true, []byte("key"), "op", []byte("body"))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := (Framer{}).Frame(msg); err != nil {
			b.Fatal(err)
		}
		if _, err := Parse(msg); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzParse: no input makes the framer or Parse panic, and a framed
// message that parses has an id wherever its type must carry one.
func FuzzParse(f *testing.F) {
	f.Add(AppendRequest(nil, 2, false, 1, true, []byte("k"), "op", []byte("b")))
	f.Add(AppendRequest(nil, 0, true, 1, false, []byte("key"), "op", nil))
	f.Add(AppendLocateRequest(nil, 1, false, 3, []byte("k")))
	f.Add(AppendFragment(nil, 2, true, 9, true, []byte("xyz")))
	f.Add(AppendReply(nil, 1, true, 4, 0, []byte("m1")))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, ok, err := Framer{Max: 1 << 16}.Frame(b)
		if err != nil || !ok {
			return
		}
		m, err := Parse(b[:n])
		if err != nil {
			return
		}
		switch m.Type {
		case Request, Reply, CancelRequest, LocateRequest, LocateReply:
			if !m.HasID {
				t.Fatalf("%v without a request id", m.Type)
			}
		}
	})
}

// TestSystemException: a proxy's system exception answer, built for each
// version and byte order, parses as a Reply (or LocateReply) for its id
// and reads back its repository id, minor code and completion status; a
// LocateRequest's before 1.2 is an UNKNOWN_OBJECT LocateReply; a plain
// Reply is not one.
func TestSystemException(t *testing.T) {
	for _, minor := range []uint8{0, 1, 2} {
		for _, little := range []bool{false, true} {
			for _, locate := range []bool{false, true} {
				t.Run(fmt.Sprintf("1.%d little=%v locate=%v", minor, little, locate), func(t *testing.T) {
					b := AppendSystemException(nil, minor, little, 42, locate, CommFailure, 7, CompletedNo)
					m, err := Parse(b)
					if err != nil {
						t.Fatal(err)
					}
					wantType := Reply
					if locate {
						wantType = LocateReply
					}
					if m.Type != wantType || m.RequestID != 42 {
						t.Fatalf("%v id %d, want %v id 42", m.Type, m.RequestID, wantType)
					}
					repo, code, completed, ok := SystemException(b)
					if locate && minor < 2 {
						if ok {
							t.Fatalf("a 1.%d LocateReply read as a system exception", minor)
						}
						return
					}
					if !ok || repo != CommFailure || code != 7 || completed != CompletedNo {
						t.Fatalf("got %q %d %d %v", repo, code, completed, ok)
					}
				})
			}
		}
	}
	if _, _, _, ok := SystemException(AppendReply(nil, 2, false, 1, 0, []byte("m1"))); ok {
		t.Fatal("a NO_EXCEPTION Reply read as a system exception")
	}
}
