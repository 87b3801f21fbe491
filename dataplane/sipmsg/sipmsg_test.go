package sipmsg

import (
	"testing"
)

const invite = "INVITE sip:bob@example.com SIP/2.0\r\n" +
	"Via: SIP/2.0/TCP client.example.com:5060;branch=z9hG4bK776asdhds\r\n" +
	"Max-Forwards: 70\r\n" +
	"To: Bob <sip:bob@example.com>\r\n" +
	"From: Alice <sip:alice@example.com>;tag=1928301774\r\n" +
	"Call-ID: a84b4c76e66710@client.example.com\r\n" +
	"CSeq: 314159 INVITE\r\n" +
	"Content-Type: application/sdp\r\n" +
	"Content-Length: 14\r\n" +
	"\r\n" +
	"v=0\r\no=alice\r\n"

func TestParse(t *testing.T) {
	tests := []struct {
		in               string
		request          bool
		method, uri      string
		code             int
		reason           string
		branch, callID   string
		field, wantField string
	}{
		{invite, true, "INVITE", "sip:bob@example.com", 0, "", "z9hG4bK776asdhds", "a84b4c76e66710@client.example.com", "From", "Alice <sip:alice@example.com>;tag=1928301774"},
		{"BYE sip:b SIP/2.0\r\nv: SIP/2.0/TCP h ; branch = z9hG4bKa1;rport\r\ni: c2\r\nf: <sip:a>\r\n\r\n", true, "BYE", "sip:b", 0, "", "z9hG4bKa1", "c2", "from", "<sip:a>"},
		{"SIP/2.0 180 Ringing\r\nVia: SIP/2.0/TCP p1;branch=z9hG4bKp1, SIP/2.0/TCP p2;branch=z9hG4bKp2\r\nCALL-ID: c3\r\nt: <sip:b>;tag=9\r\n\r\n", false, "", "", 180, "Ringing", "z9hG4bKp1", "c3", "t", "<sip:b>;tag=9"},
		{"OPTIONS sip:a SIP/2.0\r\nVia: SIP/2.0/TCP h\r\nX-Folded: one\r\n two\r\nCall-ID: c4\r\n\r\n", true, "OPTIONS", "sip:a", 0, "", "", "c4", "x-folded", "one\r\n two"},
	}
	for _, tc := range tests {
		m, err := Parse([]byte(tc.in))
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if m.Request != tc.request || string(m.Method) != tc.method || string(m.URI) != tc.uri || m.Code != tc.code || string(m.Reason) != tc.reason {
			t.Errorf("%q: request %v %q %q %d %q", tc.in, m.Request, m.Method, m.URI, m.Code, m.Reason)
		}
		if b := m.Branch(); string(b) != tc.branch {
			t.Errorf("%q: branch %q, want %q", tc.in, b, tc.branch)
		}
		if v, _ := m.Header(NewField("Call-ID")); string(v) != tc.callID {
			t.Errorf("%q: Call-ID %q, want %q", tc.in, v, tc.callID)
		}
		if v, _ := m.Header(NewField(tc.field)); string(v) != tc.wantField {
			t.Errorf("%q: %s %q, want %q", tc.in, tc.field, v, tc.wantField)
		}
	}
	if _, err := Parse([]byte("\r\n\r\n")); err == nil {
		t.Error("keep-alive parsed as a message")
	}
}

func TestNewField(t *testing.T) {
	for _, tc := range []struct {
		in, long string
		short    byte
	}{
		{"Call-ID", "call-id", 'i'}, {"i", "call-id", 'i'}, {"L", "content-length", 'l'},
		{"X-Custom", "x-custom", 0}, {"CSeq", "cseq", 0}, {"q", "q", 'q'},
	} {
		f := NewField(tc.in)
		if f.long != tc.long || f.short != tc.short {
			t.Errorf("%q: %q %q, want %q %q", tc.in, f.long, f.short, tc.long, tc.short)
		}
	}
}

func TestEdits(t *testing.T) {
	const msg = "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 1\r\nx-a: 2\r\nl: 2\r\n\r\nhi"
	tests := []struct {
		name, got, want string
	}{
		{"remove both", string(Remove([]byte(msg), NewField("X-A"))), "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nl: 2\r\n\r\nhi"},
		{"remove compact by long name", string(Remove([]byte(msg), NewField("Via"))), "OPTIONS sip:a SIP/2.0\r\nX-A: 1\r\nx-a: 2\r\nl: 2\r\n\r\nhi"},
		{"insert at the end", string(Insert([]byte(msg), "X-B", "3")), "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 1\r\nx-a: 2\r\nl: 2\r\nX-B: 3\r\n\r\nhi"},
		{"insert Via on top", string(Insert([]byte(msg), "Via", "SIP/2.0/TCP lb;branch=z9hG4bK2")), "OPTIONS sip:a SIP/2.0\r\nVia: SIP/2.0/TCP lb;branch=z9hG4bK2\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 1\r\nx-a: 2\r\nl: 2\r\n\r\nhi"},
		{"replace the first", string(Replace([]byte(msg), "X-A", "9")), "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 9\r\nx-a: 2\r\nl: 2\r\n\r\nhi"},
		{"replace absent inserts", string(Replace([]byte(msg), "Subject", "x")), "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 1\r\nx-a: 2\r\nl: 2\r\nSubject: x\r\n\r\nhi"},
		{"body and its length", string(SetBody([]byte(msg), []byte("hello"))), "OPTIONS sip:a SIP/2.0\r\nv: SIP/2.0/TCP h;branch=z9hG4bK1\r\nX-A: 1\r\nx-a: 2\r\nl: 5\r\n\r\nhello"},
		{"bare LF head", string(Insert([]byte("ACK sip:a SIP/2.0\nl: 0\n\n"), "X", "1")), "ACK sip:a SIP/2.0\nl: 0\nX: 1\r\n\n"},
	}
	for _, tc := range tests {
		if tc.got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, tc.got, tc.want)
		}
		if _, err := ContentLength([]byte(tc.got)); err != nil {
			t.Errorf("%s: edited message does not frame: %v", tc.name, err)
		}
	}
	m, _ := Parse([]byte(msg))
	if m.Count(NewField("x-a")) != 2 {
		t.Error("count of X-A")
	}
	if v, ok := m.HeaderAt(NewField("X-A"), 1); !ok || string(v) != "2" {
		t.Errorf("second X-A %q %v", v, ok)
	}
	if string(m.Body()) != "hi" {
		t.Errorf("body %q", m.Body())
	}
}

// TestReadAllocatesNothing: the per-message reads stay off the heap.
func TestReadAllocatesNothing(t *testing.T) {
	b := []byte(invite)
	f := NewField("Call-ID")
	n := testing.AllocsPerRun(100, func() {
		m, _ := Parse(b)
		m.Branch()
		m.Header(f)
		ContentLength(b[:m.HeadEnd])
	})
	if n != 0 {
		t.Fatalf("%v allocations per message", n)
	}
}
