package httpx

import (
	"strings"
	"testing"
)

// TestChunkingOut: every mode's framing for each kind of body (chunked
// or not, changed or not, whole or streamed) to HTTP/1.1 and HTTP/1.0
// peers, requests and responses.
func TestChunkingOut(t *testing.T) {
	type in struct{ chunked, modified, known, chunkOK, request bool }
	cases := []struct {
		c    Chunking
		in   in
		want Framing
	}{
		// sustain (preserve, selective): untouched bodies as they came.
		{Sustain, in{false, false, true, true, false}, AsIs},
		{Sustain, in{true, false, true, true, false}, AsIs},
		{Sustain, in{true, false, false, false, false}, AsIs},
		// changed: chunked stays chunked, a length is renewed, a
		// streamed body is chunked or ended by the close.
		{Sustain, in{true, true, true, true, false}, Chunked},
		{Sustain, in{true, true, true, false, false}, ByLength},
		{Sustain, in{false, true, true, true, false}, ByLength},
		{Sustain, in{false, true, false, true, false}, Chunked},
		{Sustain, in{false, true, false, false, false}, ByClose},
		{Sustain, in{true, true, false, true, true}, Chunked},
		{Sustain, in{false, true, false, false, true}, AsIs},
		// unchunk: no chunks; the close ends a streamed response; a
		// streamed request stays chunked.
		{Unchunk, in{false, false, true, true, false}, AsIs},
		{Unchunk, in{true, false, true, true, false}, ByLength},
		{Unchunk, in{true, false, false, true, false}, ByClose},
		{Unchunk, in{true, true, true, true, false}, ByLength},
		{Unchunk, in{false, true, false, true, false}, ByClose},
		{Unchunk, in{true, false, true, true, true}, ByLength},
		{Unchunk, in{true, false, false, true, true}, Chunked},
		// rechunk: chunked to HTTP/1.1, chunks passed as they came
		// when untouched; HTTP/1.0 as unchunk.
		{Rechunk, in{false, false, true, true, false}, Chunked},
		{Rechunk, in{false, false, false, true, false}, Chunked},
		{Rechunk, in{true, false, true, true, false}, AsIs},
		{Rechunk, in{true, true, true, true, false}, Chunked},
		{Rechunk, in{false, true, true, true, false}, Chunked},
		{Rechunk, in{false, false, true, false, false}, AsIs},
		{Rechunk, in{true, false, true, false, false}, ByLength},
		{Rechunk, in{true, false, false, false, false}, ByClose},
		{Rechunk, in{false, false, true, true, true}, Chunked},
		{Rechunk, in{false, false, true, false, true}, AsIs},
	}
	for _, c := range cases {
		got := c.c.Out(c.in.chunked, c.in.modified, c.in.known, c.in.chunkOK, c.in.request)
		if got != c.want {
			t.Errorf("%v %+v: %d, want %d", c.c, c.in, got, c.want)
		}
	}
}

func TestParseChunking(t *testing.T) {
	for _, c := range []struct {
		s    string
		want Chunking
		ok   bool
	}{
		{"preserve", Sustain, true}, {"selective", Sustain, true}, {"sustain", Sustain, true},
		{"unchunk", Unchunk, true}, {"rechunk", Rechunk, true},
		{"Rechunk", Sustain, false}, {"", Sustain, false}, {"chunk", Sustain, false},
	} {
		got, ok := ParseChunking(c.s)
		if got != c.want || ok != c.ok {
			t.Errorf("%q: %v %v, want %v %v", c.s, got, ok, c.want, c.ok)
		}
	}
}

// TestChunkTrailers: the trailer section of a chunked body, nil when it
// carries no field.
func TestChunkTrailers(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"5\r\nhello\r\n0\r\n\r\n", ""},
		{"5\r\nhello\r\n0\r\nX-Sum: 1\r\n\r\n", "X-Sum: 1\r\n\r\n"},
		{"0\r\nA: 1\r\nB: 2\r\n\r\n", "A: 1\r\nB: 2\r\n\r\n"},
		{"3;ext=1\r\nabc\r\n0\r\n\r\n", ""},
		{"5\nhello\n0\n\n", ""},
		{"5\r\nhel", ""},
	} {
		if got := string(ChunkTrailers([]byte(c.body))); got != c.want {
			t.Errorf("%q: %q, want %q", c.body, got, c.want)
		}
	}
}

// TestAppendChunked: a whole body as one chunk and its trailers, which
// the framer takes back as the same data.
func TestAppendChunked(t *testing.T) {
	for _, c := range []struct{ data, trailers, want string }{
		{"hello", "", "5\r\nhello\r\n0\r\n\r\n"},
		{"", "", "0\r\n\r\n"},
		{strings.Repeat("a", 26), "X: y\r\n\r\n", "1a\r\n" + strings.Repeat("a", 26) + "\r\n0\r\nX: y\r\n\r\n"},
	} {
		got := AppendChunked(nil, []byte(c.data), []byte(c.trailers))
		if string(got) != c.want {
			t.Errorf("%q %q: %q, want %q", c.data, c.trailers, got, c.want)
		}
		if len(got) > ChunkedSize(len(c.data), len(c.trailers)) {
			t.Errorf("%q: %d bytes, ChunkedSize says %d", c.data, len(got), ChunkedSize(len(c.data), len(c.trailers)))
		}
		data, err := Dechunk(nil, got)
		if err != nil || string(data) != c.data || string(ChunkTrailers(got)) != c.trailers {
			t.Errorf("%q: back %q %v, trailers %q", c.data, data, err, ChunkTrailers(got))
		}
	}
}

// TestUnchunkerTrailers: a body de-chunked in parts of every size keeps
// its trailer section for the re-chunked end, and none when it has no
// field.
func TestUnchunkerTrailers(t *testing.T) {
	for _, c := range []struct{ body, data, trailers string }{
		{"5\r\nhello\r\n0\r\n\r\n", "hello", ""},
		{"5\r\nhello\r\n6\r\n world\r\n0\r\nX-Sum: 9\r\nY: z\r\n\r\n", "hello world", "X-Sum: 9\r\nY: z\r\n\r\n"},
	} {
		for step := 1; step <= len(c.body); step++ {
			var u Unchunker
			var data []byte
			var err error
			for i := 0; i < len(c.body) && err == nil; i += step {
				data, err = u.Append(data, []byte(c.body[i:min(i+step, len(c.body))]))
			}
			if err != nil || string(data) != c.data || string(u.Trailers()) != c.trailers {
				t.Fatalf("%q by %d: %q %v, trailers %q", c.body, step, data, err, u.Trailers())
			}
			if got := string(AppendLastChunk(nil, u.Trailers())); got != "0\r\n"+c.trailers && !(c.trailers == "" && got == "0\r\n\r\n") {
				t.Fatalf("%q by %d: last chunk %q", c.body, step, got)
			}
		}
	}
}

// TestUnchunkedHead: a chunked message's head re-framed by its length
// loses Transfer-Encoding, Trailer and any Content-Length; DropField
// takes one field out and leaves the rest.
func TestUnchunkedHead(t *testing.T) {
	for _, c := range []struct{ head, want string }{
		{"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\nX-A: 1\r\n\r\n", "HTTP/1.1 200 OK\r\nX-A: 1\r\nContent-Length: 12\r\n\r\n"},
		{"POST / HTTP/1.1\r\nHost: h\r\ntransfer-encoding: chunked\r\n\r\n", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 12\r\n\r\n"},
		{"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n", "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n"},
	} {
		if got := string(Unchunked(nil, []byte(c.head), 12)); got != c.want {
			t.Errorf("%q: %q, want %q", c.head, got, c.want)
		}
	}
	head := "HTTP/1.1 200 OK\r\nTrailer: X-Sum\r\nConnection: close\r\ntrailer: Y\r\n\r\n"
	if got := string(DropField(nil, []byte(head), "trailer")); got != "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" {
		t.Errorf("DropField: %q", got)
	}
}
