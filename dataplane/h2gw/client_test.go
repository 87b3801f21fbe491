package h2gw

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestRealClients: a real HTTP/2 client (net/http's) through
// Serve: bodies larger than the windows both ways, and many streams at
// once against a small limit, with the counters checked after.
func TestRealClients(t *testing.T) {
	sum := func(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
	big := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/upload":
			body, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%d %s", len(body), sum(body))
		case "/download":
			w.Write(big)
		default:
			io.WriteString(w, r.URL.Path)
		}
	})
	cfg := &Config{MaxConcurrentStreams: 8, ReceiveWindow: 16 << 10, Stats: new(Stats)}
	client, base, _ := gatewayFor(t, cfg, handler)
	for _, name := range []string{"first", "again"} { // the second on the connection the first left
		t.Run(name+" upload past the window", func(t *testing.T) {
			body := big[:300000]
			resp, err := client.Post(base+"/upload", "application/octet-stream", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if want := fmt.Sprintf("%d %s", len(body), sum(body)); string(got) != want {
				t.Fatalf("%q, want %q", got, want)
			}
		})
		t.Run(name+" download", func(t *testing.T) {
			resp, err := client.Get(base + "/download")
			if err != nil {
				t.Fatal(err)
			}
			got, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Equal(got, big) {
				t.Fatalf("%d bytes, want %d", len(got), len(big))
			}
		})
		t.Run(name+" many streams", func(t *testing.T) {
			var wg sync.WaitGroup
			errs := make(chan error, 50)
			for i := range 50 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					path := fmt.Sprintf("/s%d", i)
					var resp *http.Response
					var err error
					if i%10 == 0 {
						resp, err = client.Post(base+path, "text/plain", strings.NewReader(strings.Repeat("u", 40000)))
					} else {
						resp, err = client.Get(base + path)
					}
					if err != nil {
						errs <- err
						return
					}
					got, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					if string(got) != path {
						errs <- fmt.Errorf("%s answered %q", path, got)
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
		})
	}
	client.Transport.(*http.Transport).CloseIdleConnections()
	st := cfg.Stats
	if n := st.TotalStreams.Load(); n != 2*52 {
		t.Errorf("streams counted %d, want %d", n, 2*52)
	}
	if m := st.MaxStreams.Load(); m < 1 || m > 8 {
		t.Errorf("most concurrent streams %d, want 1-8", m)
	}
	if f := st.Failed.Load(); f != 0 {
		t.Errorf("%d streams failed", f)
	}
	for i := 0; i < 500 && (st.Streams.Load() != 0 || st.Connections.Load() != 0); i++ {
		// A connection whose last stream the client had not yet let go
		// of (a request body's write still ending) was not idle at the
		// first close: close the idle ones again until the gateway sees
		// every client go.
		client.Transport.(*http.Transport).CloseIdleConnections()
		time.Sleep(20 * time.Millisecond)
	}
	if s, c := st.Streams.Load(), st.Connections.Load(); s != 0 || c != 0 {
		t.Errorf("%d streams and %d connections still counted", s, c)
	}
}
