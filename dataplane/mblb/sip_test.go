package mblb

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/sipmsg"
)

const sipInvite = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/TCP client.example.com:5060;branch=z9hG4bK776asdhds\r\n" +
	"Max-Forwards: 70\r\n" +
	"To: Bob <sip:bob@example.com>\r\n" +
	"From: Alice <sip:alice@example.com>;tag=1928301774\r\n" +
	"Call-ID: a84b4c76e66710@client.example.com\r\n" +
	"CSeq: 314159 INVITE\r\n" +
	"Contact: <sip:alice@client.example.com;transport=tcp>\r\n" +
	"Content-Type: application/sdp\r\n" +
	"Content-Length: 14\r\n" +
	"\r\n" +
	"v=0\r\no=alice\r\n"

func TestSIPFramer(t *testing.T) {
	compact := "BYE sip:bob@example.com SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bKx\r\ni: c1\r\nl: 4\r\n\r\nbody"
	tests := []struct {
		name  string
		in    string
		size  int
		whole bool
		err   error
	}{
		{"invite with body", sipInvite, len(sipInvite), true, nil},
		{"invite cut in body", sipInvite[:len(sipInvite)-3], len(sipInvite), false, nil},
		{"invite cut in head", sipInvite[:40], 0, false, nil},
		{"two messages", sipInvite + sipInvite, len(sipInvite), true, nil},
		{"compact l and i", compact, len(compact), true, nil},
		{"no content-length is an empty body", "OPTIONS sip:a SIP/2.0\r\nCall-ID: x\r\n\r\nnext", len("OPTIONS sip:a SIP/2.0\r\nCall-ID: x\r\n\r\n"), true, nil},
		{"response", "SIP/2.0 200 OK\r\nContent-Length: 0\r\n\r\n", -1, true, nil},
		{"response without reason", "SIP/2.0 180\r\nContent-Length: 0\r\n\r\n", -1, true, nil},
		{"spaces around colon", "ACK sip:a SIP/2.0\r\nContent-Length   :   2\r\n\r\nab", -1, true, nil},
		{"lower-case name", "ACK sip:a SIP/2.0\r\ncontent-length: 1\r\n\r\nx", -1, true, nil},
		{"bare LF lines", "ACK sip:a SIP/2.0\nl: 1\n\nx", -1, true, nil},
		{"keep-alive ping", "\r\n\r\n", 4, true, nil},
		{"keep-alive before a message", "\r\n" + sipInvite, 2, true, nil},
		{"equal duplicates", "ACK sip:a SIP/2.0\r\nl: 1\r\nContent-Length: 1\r\n\r\nx", -1, true, nil},
		{"conflicting lengths", "ACK sip:a SIP/2.0\r\nl: 1\r\nContent-Length: 2\r\n\r\nxx", 0, false, ErrSIPLength},
		{"length not a number", "ACK sip:a SIP/2.0\r\nContent-Length: -1\r\n\r\n", 0, false, ErrSIPLength},
		{"empty length", "ACK sip:a SIP/2.0\r\nContent-Length:\r\n\r\n", 0, false, ErrSIPLength},
		{"HTTP is not SIP", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 0, false, ErrBadSIP},
		{"bad status", "SIP/2.0 2x0 OK\r\n\r\n", 0, false, ErrBadSIP},
		{"method not a token", "IN VITE sip:a SIP/2.0 x\r\n\r\n", 0, false, ErrBadSIP},
		{"body over max", "ACK sip:a SIP/2.0\r\nContent-Length: 5000\r\n\r\n", 0, false, ErrTooLarge},
		{"huge length", "ACK sip:a SIP/2.0\r\nContent-Length: 999999999999\r\n\r\n", 0, false, ErrTooLarge},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &SIPFramer{Max: 4096}
			size, whole, err := f.Frame([]byte(tc.in))
			if !errors.Is(err, tc.err) {
				t.Fatalf("err %v, want %v", err, tc.err)
			}
			if tc.size < 0 {
				tc.size = len(tc.in) // the whole input is one message
			}
			if err == nil && (size != tc.size || whole != tc.whole) {
				t.Fatalf("size %d whole %v, want %d %v", size, whole, tc.size, tc.whole)
			}
		})
	}
}

// TestSIPFramerByteByByte feeds a stream one byte at a time, as the engine
// appends reads, and checks every message comes out whole.
func TestSIPFramerByteByByte(t *testing.T) {
	stream := "\r\n\r\n" + sipInvite + "SIP/2.0 100 Trying\r\nl: 0\r\n\r\n" + sipInvite
	f := &SIPFramer{}
	var got []string
	var buf []byte
	for i := 0; i < len(stream); i++ {
		buf = append(buf, stream[i])
		for {
			n, ok, err := f.Frame(buf)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
			got = append(got, string(buf[:n]))
			buf = buf[n:]
		}
	}
	var msgs []string
	for _, g := range got {
		if !IsSIPKeepAlive([]byte(g)) {
			msgs = append(msgs, g)
		}
	}
	if len(msgs) != 3 || msgs[0] != sipInvite || msgs[2] != sipInvite || !strings.HasPrefix(msgs[1], "SIP/2.0 100") {
		t.Fatalf("messages %q", msgs)
	}
}

func TestSIPFramerHeadLimit(t *testing.T) {
	f := &SIPFramer{MaxHeader: 64}
	_, _, err := f.Frame([]byte("OPTIONS sip:a SIP/2.0\r\nX-Long: " + strings.Repeat("a", 100)))
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("err %v, want ErrTooLarge", err)
	}
}

// FuzzSIPFramer checks that framing never panics, never reports a size
// past the limit, and cuts the same messages whether the stream comes
// whole or a byte at a time.
func FuzzSIPFramer(f *testing.F) {
	f.Add([]byte(sipInvite))
	f.Add([]byte("\r\n\r\nSIP/2.0 200 OK\r\nl: 3\r\n\r\nabcACK sip:a SIP/2.0\n\n"))
	f.Add([]byte("BYE sip:b SIP/2.0\r\nv: x;branch=1\r\n folded\r\nContent-Length: 1\r\n\r\nz"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 2048
		cut := func(step int) ([]string, error) {
			fr := &SIPFramer{Max: max, MaxHeader: 1024}
			var out []string
			var buf []byte
			for i := 0; i < len(in); i += step {
				buf = append(buf, in[i:min(i+step, len(in))]...)
				for len(buf) > 0 {
					n, ok, err := fr.Frame(buf)
					if err != nil {
						return out, err
					}
					if n > max {
						t.Fatalf("size %d over the limit", n)
					}
					if !ok {
						break
					}
					if n <= 0 || n > len(buf) {
						t.Fatalf("complete with size %d of %d", n, len(buf))
					}
					m := buf[:n]
					if !IsSIPKeepAlive(m) {
						p, err := ParseSIP(m)
						if err != nil {
							t.Fatalf("framed %q does not parse: %v", m, err)
						}
						p.Branch()
						p.Header(sipmsg.CallID)
					}
					out = append(out, string(m))
					buf = buf[n:]
				}
			}
			return out, nil
		}
		whole, err1 := cut(len(in) + 1)
		bytewise, err2 := cut(1)
		if (err1 == nil) != (err2 == nil) {
			// A byte-wise feed may hit a limit on a prefix the whole
			// stream never shows (a head over MaxHeader without its
			// end yet): only a non-limit error must agree.
			if !errors.Is(err1, ErrTooLarge) && !errors.Is(err2, ErrTooLarge) {
				t.Fatalf("errors differ: %v / %v", err1, err2)
			}
			return
		}
		if err1 != nil {
			return
		}
		// Keep-alives may split differently; the messages must not.
		strip := func(ms []string) string {
			var b bytes.Buffer
			for _, m := range ms {
				if !IsSIPKeepAlive([]byte(m)) {
					b.WriteString(m)
					b.WriteByte(0)
				}
			}
			return b.String()
		}
		if strip(whole) != strip(bytewise) {
			t.Fatalf("whole %q, byte-wise %q", whole, bytewise)
		}
	})
}
