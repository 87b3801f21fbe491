package httpx

import "testing"

// TestStreamNow: a request or response whose head is in and whose body
// is not switches to streaming on demand; the body then passes through
// Body in parts as usual, and the next message is framed after it.
// Nothing switches without a head waiting, or without Stream.
func TestStreamNow(t *testing.T) {
	reqs := []struct {
		name, in, rest string
		stream         bool
		switched       bool
	}{
		{"chunked", "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "2\r\nde\r\n0\r\n\r\n", true, true},
		{"length", "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", "cde", true, true},
		{"length, no body yet", "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n", "abcde", true, true},
		{"head not all in", "POST / HTTP/1.1\r\nContent-Le", "", true, false},
		{"without Stream", "POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", "", false, false},
	}
	for _, tc := range reqs {
		t.Run("request/"+tc.name, func(t *testing.T) {
			f := &RequestFramer{Max: 1 << 20, Stream: tc.stream}
			if _, done, err := f.Frame([]byte(tc.in)); done || err != nil {
				t.Fatalf("Frame: done %v, %v", done, err)
			}
			if got := f.StreamNow([]byte(tc.in)); got != tc.switched {
				t.Fatalf("StreamNow %v, want %v", got, tc.switched)
			}
			if !tc.switched {
				return
			}
			h := f.Streaming()
			if h == nil || string(h.Method) != "POST" {
				t.Fatalf("Streaming %+v", h)
			}
			if _, _, err := f.Frame([]byte(tc.in)); err != ErrStreamBody {
				t.Fatalf("Frame while streaming: %v", err)
			}
			body := tc.in[h.HeaderEnd:] + tc.rest
			n, done, err := f.Body([]byte(body))
			if err != nil || !done || n != len(body) {
				t.Fatalf("Body: %d of %d, done %v, %v", n, len(body), done, err)
			}
			next := "GET / HTTP/1.1\r\n\r\n"
			if n, done, err := f.Frame([]byte(next)); !done || err != nil || n != len(next) {
				t.Fatalf("next request: %d %v %v", n, done, err)
			}
		})
	}
	resps := []struct {
		name, in, rest string
		switched       bool
	}{
		{"chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "0\r\n\r\n", true},
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nab", "cde", true},
		{"close", "HTTP/1.1 200 OK\r\n\r\nab", "", true},
		{"after an interim answer", "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n", "ok", true},
		{"head not all in", "HTTP/1.1 200 OK\r\nContent-Le", "", false},
	}
	for _, tc := range resps {
		t.Run("response/"+tc.name, func(t *testing.T) {
			f := &ResponseFramer{Max: 1 << 20, Stream: true}
			if _, done, err := f.Frame([]byte(tc.in)); done || err != nil {
				t.Fatalf("Frame: done %v, %v", done, err)
			}
			if got := f.StreamNow(); got != tc.switched {
				t.Fatalf("StreamNow %v, want %v", got, tc.switched)
			}
			if !tc.switched {
				return
			}
			h := f.Streaming()
			body := tc.in[h.HeaderEnd:] + tc.rest
			n, done, err := f.Body([]byte(body))
			if h.UntilClose {
				if err != nil || done || n != len(body) {
					t.Fatalf("Body until the close: %d %v %v", n, done, err)
				}
				if _, ok := f.Finish(nil); !ok {
					t.Fatal("Finish did not end the body")
				}
				return
			}
			if err != nil || !done || n != len(body) {
				t.Fatalf("Body: %d of %d, done %v, %v", n, len(body), done, err)
			}
		})
	}
}

// TestChunkedData: the data length of a chunked body's start, and
// whether its last chunk is in.
func TestChunkedData(t *testing.T) {
	for _, tc := range []struct {
		in    string
		n     int
		ended bool
	}{
		{"", 0, false},
		{"3\r\nab", 2, false},
		{"3\r\nabc\r\n", 3, false},
		{"3\r\nabc\r\n0\r\n", 3, true},
		{"3\r\nabc\r\n0\r\nX: y\r\n\r\n", 3, true},
		{"3\r\nabc\r\n0", 3, false},
		{"a;ext=1\r\n0123456789\r\n0\r\n\r\n", 10, true},
	} {
		n, ended := ChunkedData([]byte(tc.in))
		if n != tc.n || ended != tc.ended || ChunkedDataLen([]byte(tc.in)) != n {
			t.Errorf("%q: %d %v, want %d %v", tc.in, n, ended, tc.n, tc.ended)
		}
	}
}
