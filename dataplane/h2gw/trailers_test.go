package h2gw

import (
	"fmt"
	"net/http"
	"testing"

	"golang.org/x/net/http2"
)

// Trailers both ways: a request's HEADERS after its DATA become the
// chunked body's trailer section, TE: trailers reaches the engine, and a
// chunked response's trailers end the stream as HEADERS, after the body
// held for lack of window.
func TestTrailers(t *testing.T) {
	h := startGateway(t, &Config{}, func(r *http.Request, body []byte) string {
		// r.Trailer is filled once the body was read (fakeEngine reads it).
		return fmt.Sprintf("HTTP/1.1 200 OK\r\nContent-Type: application/grpc\r\nTransfer-Encoding: chunked\r\n\r\n"+
			"%x\r\n%s\r\n0\r\nGrpc-Status: 0\r\nGrpc-Message: te=%s x-sum=%s\r\nContent-Length: 9\r\n\r\n",
			len(body), body, r.Header.Get("Te"), r.Trailer.Get("X-Sum"))
	})
	h.handshake(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 3})
	h.headers(1, false, ":method", "POST", ":scheme", "http", ":authority", "a", ":path", "/svc/M",
		"content-type", "application/grpc", "te", "trailers")
	h.fr.WriteData(1, false, []byte("\x00\x00\x00\x00\x02hi"))
	h.headers(1, true, "x-sum", "7")
	h.expectSeen("POST /svc/M host=a te=chunked body=7")
	var body []byte
	var trailers map[string]string
	for trailers == nil {
		switch f := h.read().(type) {
		case *http2.MetaHeadersFrame:
			if f.PseudoValue("status") != "" {
				if f.StreamEnded() {
					t.Fatal("the response ended without its trailers")
				}
				continue
			}
			if !f.StreamEnded() {
				t.Fatal("trailers without END_STREAM")
			}
			trailers = map[string]string{}
			for _, hf := range f.RegularFields() {
				trailers[hf.Name] = hf.Value
			}
		case *http2.DataFrame:
			if f.StreamEnded() {
				t.Fatal("END_STREAM on DATA before the trailers")
			}
			body = append(body, f.Data()...)
			if n := len(f.Data()); n > 0 {
				h.fr.WriteWindowUpdate(0, uint32(n))
				h.fr.WriteWindowUpdate(1, uint32(n))
				h.flush()
			}
		case *http2.RSTStreamFrame, *http2.GoAwayFrame:
			t.Fatalf("%v", f)
		}
	}
	if string(body) != "\x00\x00\x00\x00\x02hi" {
		t.Errorf("body %q", body)
	}
	if trailers["grpc-status"] != "0" || trailers["grpc-message"] != "te=trailers x-sum=7" {
		t.Errorf("trailers %v", trailers)
	}
	if _, ok := trailers["content-length"]; ok {
		t.Errorf("content-length passed as a trailer: %v", trailers)
	}
}

// A trailer block with a pseudo field is malformed: the stream is reset.
func TestTrailersWithPseudoField(t *testing.T) {
	h := startGateway(t, &Config{}, echo)
	h.handshake()
	h.headers(1, false, ":method", "POST", ":scheme", "http", ":authority", "a", ":path", "/p")
	h.fr.WriteData(1, false, []byte("x"))
	h.headers(1, true, ":path", "/q")
	for {
		if f, ok := h.read().(*http2.RSTStreamFrame); ok {
			if f.StreamID != 1 || f.ErrCode != http2.ErrCodeProtocol {
				t.Fatalf("%v", f)
			}
			return
		}
	}
}
