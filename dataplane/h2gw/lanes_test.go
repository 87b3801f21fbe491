package h2gw

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/net/http2"
)

// TestGatewayLanes: on one client connection, a stream whose response
// its engine holds open does not hold back the streams after it; the
// lanes never outnumber concurrent-streams-per-connection, and streams
// beyond the lanes free wait for one rather than fail.
func TestGatewayLanes(t *testing.T) {
	cases := []struct {
		name       string
		maxStreams uint32
		shorts     int
	}{
		{"many lanes", 32, 20},
		{"as many lanes as streams allowed", 4, 20},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			release := make(chan struct{})
			var held atomic.Bool
			backend := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/long" {
					held.Store(true)
					io.WriteString(w, "first;")
					w.(http.Flusher).Flush()
					select {
					case <-release:
					case <-time.After(20 * time.Second):
					}
					io.WriteString(w, "last")
					return
				}
				io.WriteString(w, "ok "+r.URL.Path)
			}))
			bl, err := net.Listen("tcp", fmt.Sprintf("127.75.3.%d:0", 10+i))
			if err != nil {
				t.Fatal(err)
			}
			backend.Listener = bl
			backend.Start()
			t.Cleanup(backend.Close)
			ln, err := net.Listen("tcp", fmt.Sprintf("127.75.3.%d:0", 1+i))
			if err != nil {
				t.Fatal(err)
			}
			cfg := &Config{MaxConcurrentStreams: c.maxStreams, Stats: new(Stats)}
			var dials atomic.Int64
			t.Cleanup(serveAll(ln, cfg, func() (net.Conn, error) {
				dials.Add(1)
				return net.Dial("tcp", bl.Addr().String())
			}))
			var protos http.Protocols
			protos.SetUnencryptedHTTP2(true)
			// One connection per host: without it Go's transport may dial
			// a spare TCP connection while a request waits for its HTTP/2
			// connection, which the gateway counts as a client.
			tr := &http.Transport{Protocols: &protos, MaxConnsPerHost: 1}
			t.Cleanup(tr.CloseIdleConnections)
			client := &http.Client{Transport: tr, Timeout: 20 * time.Second}
			base := "http://" + ln.Addr().String()

			long, err := client.Get(base + "/long")
			if err != nil {
				t.Fatal(err)
			}
			defer long.Body.Close()
			first := make([]byte, 6)
			if _, err := io.ReadFull(long.Body, first); err != nil || string(first) != "first;" || !held.Load() {
				t.Fatalf("the long response's start: %q %v", first, err)
			}
			var wg sync.WaitGroup
			errs := make(chan error, c.shorts)
			// No more streams at once than the connection allows beside
			// the long one, so that the client keeps to one connection.
			slots := make(chan struct{}, c.maxStreams-1)
			for j := range c.shorts {
				wg.Add(1)
				go func() {
					defer wg.Done()
					slots <- struct{}{}
					defer func() { <-slots }()
					path := fmt.Sprintf("/s%02d", j)
					resp, err := client.Get(base + path)
					if err != nil {
						errs <- err
						return
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(b) != "ok "+path {
						errs <- fmt.Errorf("%s answered %q", path, b)
					}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the short streams wait behind the long one")
			}
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			close(release)
			rest, err := io.ReadAll(long.Body)
			if err != nil || string(rest) != "last" {
				t.Errorf("the long response's end: %q %v", rest, err)
			}
			if n := cfg.Stats.TotalConnections.Load(); n != 1 {
				t.Errorf("client connections %d, want 1", n)
			}
			if d := dials.Load(); d < 2 || d > int64(c.maxStreams) {
				t.Errorf("%d lanes, want 2 to %d (concurrent-streams-per-connection)", d, c.maxStreams)
			}
		})
	}
}

// responses reads the responses of streams ids, in whatever order their
// frames come (each stream's lane answers on its own), and returns
// their bodies by stream.
func (h *h2conn) responses(ids ...uint32) map[uint32]string {
	h.t.Helper()
	bodies := map[uint32]string{}
	ended := 0
	for ended < len(ids) {
		switch f := h.read().(type) {
		case *http2.MetaHeadersFrame:
			if slices.Contains(ids, f.StreamID) && f.StreamEnded() {
				ended++
			}
		case *http2.DataFrame:
			if !slices.Contains(ids, f.StreamID) {
				continue
			}
			bodies[f.StreamID] += string(f.Data())
			if len(f.Data()) > 0 {
				h.fr.WriteWindowUpdate(0, uint32(len(f.Data())))
				h.fr.WriteWindowUpdate(f.StreamID, uint32(len(f.Data())))
				h.flush()
			}
			if f.StreamEnded() {
				ended++
			}
		case *http2.RSTStreamFrame:
			if slices.Contains(ids, f.StreamID) {
				h.t.Fatalf("stream %d reset: %v", f.StreamID, f.ErrCode)
			}
		case *http2.GoAwayFrame:
			h.t.Fatalf("GOAWAY %v waiting for streams %v", f.ErrCode, ids)
		}
	}
	return bodies
}

// expectSeenAll checks that the engine saw the requests want, in any
// order: they went on lanes of their own.
func (h *h2conn) expectSeenAll(want ...string) {
	h.t.Helper()
	var got []string
	for range want {
		select {
		case s := <-h.seen:
			got = append(got, s)
		case <-time.After(5 * time.Second):
			h.t.Fatalf("the engine saw %q, want %q", got, want)
		}
	}
	slices.Sort(got)
	w := slices.Sorted(slices.Values(want))
	if !slices.Equal(got, w) {
		h.t.Fatalf("the engine saw\n%q\nwant\n%q", got, w)
	}
}
