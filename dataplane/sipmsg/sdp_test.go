package sipmsg

import (
	"strconv"
	"strings"
	"testing"
)

const sdpBody = "v=0\r\n" +
	"o=alice 2890844526 2890844527 IN IP4 192.0.2.10\r\n" +
	"s=-\r\n" +
	"c=IN IP4 192.0.2.10\r\n" +
	"t=0 0\r\n" +
	"m=audio 49170 RTP/AVP 0 8\r\n" +
	"a=rtpmap:0 PCMU/8000\r\n" +
	"a=rtpmap:8 PCMA/8000\r\n" +
	"m=video 51372/2 RTP/AVP 31\r\n" +
	"i=camera\r\n" +
	"c=IN IP4 192.0.2.20\r\n" +
	"a=rtpmap:31 H261/90000\r\n"

func sdpMessage(ctype, body string) Message {
	b := "INVITE sip:bob@example.com SIP/2.0\r\nVia: SIP/2.0/TCP h;branch=z9hG4bK1\r\nCall-ID: c1\r\n"
	if ctype != "" {
		b += "Content-Type: " + ctype + "\r\n"
	}
	b += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	m, err := Parse([]byte(b))
	if err != nil {
		panic(err)
	}
	return m
}

func TestHasSDP(t *testing.T) {
	for _, tc := range []struct {
		ctype, body string
		want        bool
	}{
		{"application/sdp", sdpBody, true},
		{"Application/SDP; charset=utf-8", sdpBody, true},
		{"application/sdp", "", false},
		{"text/plain", sdpBody, false},
		{"", sdpBody, false},
		{"multipart/mixed;boundary=x", sdpBody, false},
	} {
		m := sdpMessage(tc.ctype, tc.body)
		if got := m.HasSDP(); got != tc.want {
			t.Errorf("%q %d bytes: HasSDP %v, want %v", tc.ctype, len(tc.body), got, tc.want)
		}
	}
	m, _ := Parse([]byte("INVITE sip:b SIP/2.0\r\nc: application/sdp\r\nl: 4\r\n\r\nv=0\n"))
	if !m.HasSDP() {
		t.Error("the compact Content-Type is not read")
	}
}

func TestSDPRead(t *testing.T) {
	b := []byte(sdpBody)
	for _, tc := range []struct {
		typ  byte
		n    int
		want string
		ok   bool
	}{
		{'v', 0, "0", true},
		{'c', 0, "IN IP4 192.0.2.10", true},
		{'c', 1, "IN IP4 192.0.2.20", true},
		{'c', 2, "", false},
		{'a', 2, "rtpmap:31 H261/90000", true},
		{'b', 0, "", false},
	} {
		v, ok := SDPField(b, tc.typ, tc.n)
		if string(v) != tc.want || ok != tc.ok {
			t.Errorf("%c %d: %q %v, want %q %v", tc.typ, tc.n, v, ok, tc.want, tc.ok)
		}
	}
	if id := SDPSessionID(b); string(id) != "2890844526" {
		t.Errorf("session id %q", id)
	}
	if n := SDPMediaCount(b); n != 2 {
		t.Errorf("%d media", n)
	}
	a, _ := SDPMediaAt(b, 0)
	v, ok := SDPMediaAt(b, 1)
	if !ok || string(a.Type()) != "audio" || string(a.Port()) != "49170" || string(a.Transport()) != "RTP/AVP" ||
		string(v.Type()) != "video" || string(v.Port()) != "51372/2" || string(v.Line) != "video 51372/2 RTP/AVP 31" {
		t.Errorf("media: %q %q", a.Line, v.Line)
	}
	if x, ok := a.Attr(b, 1); !ok || string(x) != "rtpmap:8 PCMA/8000" {
		t.Errorf("audio attr 1: %q %v", x, ok)
	}
	if _, ok := a.Attr(b, 2); ok {
		t.Error("audio has a third attribute")
	}
	if c, _ := a.Conn(b); string(c) != "IN IP4 192.0.2.10" {
		t.Errorf("audio conn (the session's): %q", c)
	}
	if c, _ := v.Conn(b); string(c) != "IN IP4 192.0.2.20" {
		t.Errorf("video conn: %q", c)
	}
	if _, ok := SDPMediaAt(b, 2); ok {
		t.Error("a third medium")
	}
	if _, ok := SDPMediaAt(b, -1); ok {
		t.Error("medium -1")
	}
	// Bare LF line ends read the same.
	lf := []byte(strings.ReplaceAll(sdpBody, "\r\n", "\n"))
	if c, _ := SDPField(lf, 'c', 1); string(c) != "IN IP4 192.0.2.20" {
		t.Errorf("LF: %q", c)
	}
}

func TestSDPEdit(t *testing.T) {
	b := []byte(sdpBody)
	out, ok := SetSDPField(b, 'c', 0, []byte("IN IP4 10.0.0.1"))
	if !ok || !strings.Contains(string(out), "\r\nc=IN IP4 10.0.0.1\r\nt=0 0\r\n") || !strings.Contains(string(out), "c=IN IP4 192.0.2.20\r\n") {
		t.Errorf("c 0: %q", out)
	}
	if _, ok := SetSDPField(b, 'z', 0, []byte("x")); ok {
		t.Error("set a field the body lacks")
	}
	out, ok = SetSDPMediaPort(b, 1, 40000)
	if !ok || !strings.Contains(string(out), "\r\nm=video 40000/2 RTP/AVP 31\r\n") {
		t.Errorf("port: %q", out)
	}
	out, ok = SetSDPMediaConn(b, 0, []byte("IN IP4 10.0.0.2"))
	if !ok || !strings.Contains(string(out), "m=audio 49170 RTP/AVP 0 8\r\nc=IN IP4 10.0.0.2\r\na=rtpmap:0") ||
		!strings.Contains(string(out), "\r\nc=IN IP4 192.0.2.10\r\nt=") {
		t.Errorf("audio conn: %q", out)
	}
	out, ok = SetSDPMediaConn(b, 1, []byte("IN IP4 10.0.0.3"))
	if !ok || !strings.Contains(string(out), "i=camera\r\nc=IN IP4 10.0.0.3\r\na=rtpmap:31") || strings.Contains(string(out), "192.0.2.20") {
		t.Errorf("video conn: %q", out)
	}
	lf := []byte("v=0\nm=audio 1 RTP/AVP 0")
	out, _ = SetSDPMediaConn(lf, 0, []byte("IN IP4 10.0.0.4"))
	if string(out) != "v=0\nm=audio 1 RTP/AVP 0\nc=IN IP4 10.0.0.4\n" {
		t.Errorf("LF, no last line end: %q", out)
	}
	if string(b) != sdpBody {
		t.Error("an edit changed its input")
	}
}
