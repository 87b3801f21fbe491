package httpx

import (
	"net/netip"
	"testing"
)

func TestSetEncoded(t *testing.T) {
	head := "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 5000\r\nETag: \"v1\"\r\nContent-MD5: abc\r\n\r\n"
	for _, c := range []struct {
		name    string
		head    string
		enc     Encoding
		length  int
		chunked bool
		want    string
	}{
		{"whole, vary added", head, Encoding{Coding: "gzip", Vary: true}, 812, false,
			"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: W/\"v1\"\r\nVary: Accept-Encoding\r\nContent-Encoding: gzip\r\nContent-Length: 812\r\n\r\n"},
		{"streamed, chunked", head, Encoding{Coding: "deflate"}, -1, true,
			"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nETag: W/\"v1\"\r\nContent-Encoding: deflate\r\nTransfer-Encoding: chunked\r\n\r\n"},
		{"streamed, ended by the close", "HTTP/1.1 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n", Encoding{Coding: "gzip"}, -1, false,
			"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nConnection: close\r\n\r\n"},
		{"vary merged", "HTTP/1.1 200 OK\r\nVary: Cookie\r\nContent-Length: 9\r\n\r\n", Encoding{Coding: "gzip", Vary: true}, 3, false,
			"HTTP/1.1 200 OK\r\nVary: Cookie, Accept-Encoding\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n"},
		{"vary already there", "HTTP/1.1 200 OK\r\nvary: accept-encoding\r\n\r\n", Encoding{Coding: "gzip", Vary: true}, 3, false,
			"HTTP/1.1 200 OK\r\nvary: accept-encoding\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n"},
		{"vary star", "HTTP/1.1 200 OK\r\nVary: *\r\n\r\n", Encoding{Coding: "gzip", Vary: true}, 3, false,
			"HTTP/1.1 200 OK\r\nVary: *\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n"},
		{"weak etag kept", "HTTP/1.1 200 OK\r\nETag: W/\"x\"\r\n\r\n", Encoding{Coding: "gzip"}, 3, false,
			"HTTP/1.1 200 OK\r\nETag: W/\"x\"\r\nContent-Encoding: gzip\r\nContent-Length: 3\r\n\r\n"},
		{"bare LF head", "HTTP/1.1 200 OK\nContent-Length: 4\n\n", Encoding{Coding: "gzip"}, 2, false,
			"HTTP/1.1 200 OK\nContent-Encoding: gzip\r\nContent-Length: 2\r\n\n"},
	} {
		if got := string(SetEncoded([]byte("x"), []byte(c.head), c.enc, c.length, c.chunked)); got != "x"+c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, "x"+c.want)
		}
	}
}

func TestDropAcceptEncoding(t *testing.T) {
	req := "GET / HTTP/1.1\r\nHost: a\r\naccept-encoding: gzip\r\nConnection: close\r\nAccept-Encoding: br\r\nX: accept-encoding: y\r\n\r\nbody"
	h, err := ParseRequest([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	got := string(AppendRequest(nil, []byte(req), &h, RequestEdits{DropAcceptEncoding: true, Transform: true, XFF: netip.MustParseAddr("10.0.0.9")}))
	want := "GET / HTTP/1.1\r\nHost: a\r\nX-Cnection: close\r\nX: accept-encoding: y\r\nX-Forwarded-For: 10.0.0.9\r\n\r\nbody"
	if got != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// Without the edit the head is as it came.
	if got := string(AppendRequest(nil, []byte(req), &h, RequestEdits{})); got != req {
		t.Errorf("unedited: %q", got)
	}
}

func TestInsertErase(t *testing.T) {
	req := "GET / HTTP/1.1\r\nHost: a\r\nX-Secret: s\r\nx-secret: t\r\nX-Keep: k\r\n\r\n"
	h, err := ParseRequest([]byte(req))
	if err != nil {
		t.Fatal(err)
	}
	ed := RequestEdits{Insert: []byte("X-Foo: bar\r\nX-Two: 2\r\n"), Erase: "x-secret", XFF: netip.MustParseAddr("10.0.0.9")}
	dst := make([]byte, 0, len(req)+ed.Growth())
	got := AppendRequest(dst, []byte(req), &h, ed)
	want := "GET / HTTP/1.1\r\nHost: a\r\nX-Keep: k\r\nX-Forwarded-For: 10.0.0.9\r\nX-Foo: bar\r\nX-Two: 2\r\n\r\n"
	if string(got) != want {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("AppendRequest grew a destination sized by Growth")
	}
}
