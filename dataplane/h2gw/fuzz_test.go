package h2gw

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"testing"
	"time"

	"golang.org/x/net/http2"
	"golang.org/x/net/http2/hpack"
)

// FuzzServe feeds a client's bytes after the preface (frames, whole or
// not) to Serve with an engine answering every request, and checks that
// the gateway neither panics nor hangs: once the client has sent its
// bytes and closed, Serve returns. What it answers is read and dropped;
// the codec tests say what it should be.
func FuzzServe(f *testing.F) {
	for _, seed := range h2Seeds() {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		client, gw := Pipe()
		done := make(chan struct{})
		go func() {
			defer close(done)
			Serve(gw, &Config{ReceiveWindow: 1024, MaxConcurrentStreams: 4, InsertHeader: "X-H2"}, func() (net.Conn, error) {
				a, b := Pipe()
				go fakeEngine(b, func(r *http.Request, body []byte) string { return ok(r.URL.Path) }, nil)
				return a, nil
			})
		}()
		// The client's last frame is a PING: once its ACK is back the
		// gateway has read everything before it (and handed any request
		// to the engine); the client then closes. Input that breaks the
		// framing ends the connection first; input that leaves a frame
		// unfinished swallows the PING, and the client closes after a
		// moment.
		acked := make(chan struct{})
		go func() {
			defer close(acked)
			fr := http2.NewFramer(io.Discard, client)
			for {
				fm, err := fr.ReadFrame()
				if _, ok := err.(http2.StreamError); ok {
					continue
				}
				if err != nil {
					return
				}
				if p, ok := fm.(*http2.PingFrame); ok && p.IsAck() && p.Data == fuzzPing {
					return
				}
			}
		}()
		var ping bytes.Buffer
		http2.NewFramer(&ping, nil).WritePing(false, fuzzPing)
		client.Write([]byte(Preface))
		client.Write(in)
		client.Write(ping.Bytes())
		select {
		case <-acked:
		case <-time.After(100 * time.Millisecond):
		}
		go io.Copy(io.Discard, client)
		client.Close()
		select {
		case <-done:
		case <-time.After(20 * time.Second):
			t.Fatalf("Serve did not return after the client closed (%d bytes sent)", len(in))
		}
	})
}

// fuzzPing is the data of the client's last PING, told apart from any
// the input holds.
var fuzzPing = [8]byte{'o', 'p', 'e', 'n', 'l', 't', 'm', 0}

// h2Seeds are well-formed client exchanges for FuzzServe to start from:
// a GET, a POST with a body in two DATA frames, a CONTINUATION, settings,
// a window update, a ping, a priority, a reset and a GOAWAY.
func h2Seeds() [][]byte {
	var out [][]byte
	build := func(write func(fr *http2.Framer, block func(...string) []byte)) {
		var buf, hb bytes.Buffer
		fr := http2.NewFramer(&buf, nil)
		fr.AllowIllegalWrites = true
		enc := hpack.NewEncoder(&hb)
		block := func(fields ...string) []byte {
			hb.Reset()
			for i := 0; i+1 < len(fields); i += 2 {
				enc.WriteField(hpack.HeaderField{Name: fields[i], Value: fields[i+1]})
			}
			return append([]byte(nil), hb.Bytes()...)
		}
		write(fr, block)
		out = append(out, buf.Bytes())
	}
	get := []string{":method", "GET", ":scheme", "http", ":authority", "www.example", ":path", "/a"}
	post := []string{":method", "POST", ":scheme", "http", ":authority", "www.example", ":path", "/p", "content-length", "10"}
	build(func(fr *http2.Framer, block func(...string) []byte) {
		fr.WriteSettings(http2.Setting{ID: http2.SettingInitialWindowSize, Val: 100})
		fr.WriteSettingsAck()
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(get...), EndStream: true, EndHeaders: true})
	})
	build(func(fr *http2.Framer, block func(...string) []byte) {
		fr.WriteSettings()
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(post...), EndHeaders: true})
		fr.WriteData(1, false, []byte("01234"))
		fr.WriteWindowUpdate(0, 1000)
		fr.WriteData(1, true, []byte("56789"))
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 3, BlockFragment: block(get...), EndStream: true, EndHeaders: true})
	})
	build(func(fr *http2.Framer, block func(...string) []byte) {
		b := block(append(get, "x-custom", "vvvvvvvvvvvvvvvvvvvvvvvvvvvvvv")...)
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: b[:5], EndStream: true})
		fr.WriteContinuation(1, false, b[5:12])
		fr.WriteContinuation(1, true, b[12:])
		fr.WritePing(false, [8]byte{1, 2, 3, 4, 5, 6, 7, 8})
	})
	build(func(fr *http2.Framer, block func(...string) []byte) {
		fr.WritePriority(1, http2.PriorityParam{StreamDep: 0, Weight: 15})
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 1, BlockFragment: block(post...), EndHeaders: true})
		fr.WriteRSTStream(1, http2.ErrCodeCancel)
		fr.WriteHeaders(http2.HeadersFrameParam{StreamID: 5, BlockFragment: block(get...), EndStream: true, EndHeaders: true})
		fr.WriteGoAway(5, http2.ErrCodeNo, nil)
	})
	return out
}
