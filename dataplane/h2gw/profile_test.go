package h2gw

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/http2"
)

// writeSizes records the size of every write the gateway makes to its
// client.
type writeSizes struct {
	net.Conn
	mu    sync.Mutex
	sizes []int
}

func (w *writeSizes) Write(p []byte) (int, error) {
	w.mu.Lock()
	w.sizes = append(w.sizes, len(p))
	w.mu.Unlock()
	return w.Conn.Write(p)
}

// TestProfileFraming: frame-size bounds the DATA frames the gateway sends
// below the client's SETTINGS_MAX_FRAME_SIZE, write-size the writes that
// carry them (a frame larger than the room left goes whole), and
// include-content-length disabled takes the member's Content-Length out
// of the response's HEADERS; the body arrives whole every time.
func TestProfileFraming(t *testing.T) {
	const n = 40000
	body := strings.Repeat("0123456789abcdef", n/16)
	engine := func(r *http.Request, _ []byte) string { return ok(body) }
	for i, c := range []struct {
		name      string
		cfg       Config
		maxFrame  int  // the largest DATA frame expected
		frames    int  // how many DATA frames carry the body
		maxWrite  int  // the largest write expected (0: not checked)
		hasLength bool // content-length in the HEADERS
	}{
		{"defaults of the package", Config{}, 16384, 3, 0, true},
		{"frame-size 2048", Config{FrameSize: 2048}, 2048, 20, 0, true},
		{"frame-size 1024, write-size 2048", Config{FrameSize: 1024, WriteSize: 2048}, 1024, 40, 2048, true},
		{"frame-size 16384, write-size 4096", Config{FrameSize: 16384, WriteSize: 4096}, 16384, 3, 16384 + 9, true},
		{"frame-size above the client's", Config{FrameSize: 1 << 20}, 16384, 3, 0, true},
		{"include-content-length disabled", Config{FrameSize: 2048, DropContentLength: true}, 2048, 20, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ws *writeSizes
			h := startGatewayAt(t, fmt.Sprintf("127.15.4.%d:0", 1+i), &c.cfg, engine, func(nc net.Conn) net.Conn {
				ws = &writeSizes{Conn: nc}
				return ws
			})
			h.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 1 << 20})
			h.fr.WriteWindowUpdate(0, 1<<20)
			h.headers(1, true, get("/big")...)
			var got []byte
			frames, largest, length := 0, 0, ""
			for done := false; !done; {
				switch f := h.read().(type) {
				case *http2.MetaHeadersFrame:
					length = f.PseudoValue("status") + " " + headerValue(f, "content-length")
					done = f.StreamEnded()
				case *http2.DataFrame:
					if len(f.Data()) > 0 {
						frames++
						largest = max(largest, len(f.Data()))
					}
					got = append(got, f.Data()...)
					done = f.StreamEnded()
				}
			}
			if string(got) != body {
				t.Fatalf("body of %d bytes, want %d", len(got), n)
			}
			if largest != c.maxFrame || frames != c.frames {
				t.Errorf("%d DATA frames, the largest %d bytes; want %d, %d", frames, largest, c.frames, c.maxFrame)
			}
			if want := fmt.Sprintf("200 %d", n); (length == want) != c.hasLength || !c.hasLength && length != "200 " {
				t.Errorf("status and content-length %q, want content-length %v", length, c.hasLength)
			}
			if c.maxWrite > 0 {
				ws.mu.Lock()
				for _, k := range ws.sizes {
					if k > c.maxWrite {
						t.Errorf("a write of %d bytes, above %d", k, c.maxWrite)
						break
					}
				}
				ws.mu.Unlock()
			}
		})
	}
}

// headerValue is the value of field name in f ("" when absent).
func headerValue(f *http2.MetaHeadersFrame, name string) string {
	for _, hf := range f.Fields {
		if hf.Name == name {
			return hf.Value
		}
	}
	return ""
}
