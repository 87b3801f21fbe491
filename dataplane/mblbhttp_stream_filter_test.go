package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startEchoBodyServer answers every request with its own body, so that a
// stream filter on both directions shows in the answer twice.
func startEchoBodyServer(t *testing.T, addr string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		w.Write(b)
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// TestHTTPStreamRules: a rule's STREAM::expression and STREAM_MATCHED
// filter a request body on its way to the member and the answer on its
// way back, for several clients at once on shared (OneConnect) server
// connections, where the two directions' events run on different
// threads; STREAM::disable in HTTP_REQUEST leaves both alone.
func TestHTTPStreamRules(t *testing.T) {
	startEchoBodyServer(t, "127.0.130.61:80")
	const rule = `
when HTTP_REQUEST {
    if { [HTTP::path] eq "/plain" } {
        STREAM::disable
    } else {
        STREAM::expression {@cat@@}
        STREAM::enable
    }
}
when STREAM_MATCHED {
    STREAM::replace "<[STREAM::match]>"
}
`
	for _, oc := range []bool{false, true} {
		vs := "127.0.130.60:80"
		if oc {
			vs = "127.0.130.62:80"
		}
		cfg := mblbConfig(vs, &MBLB{Request: mblb.Framing{Mode: mblb.HTTP, HTTP: mblb.HTTPOptions{
			Stream: &mblb.StreamOptions{Profile: "/Common/stream"}}}}, "127.0.130.61:80")
		if oc {
			cfg.Virtuals["/Common/vs"].MBLB.OneConnect = &OneConnect{MaxSize: 2}
		}
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
		p, _ := newPlane(t)
		mustApply(t, p, cfg)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for c := 0; c < 4; c++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cl := dialHTTPVS(t, vs)
				for i := 0; i < 20; i++ {
					path, body, want := "/x", fmt.Sprintf("a cat and cat %d", i), fmt.Sprintf("a <<cat>> and <<cat>> %d", i)
					if i%5 == 4 {
						path, want = "/plain", body
					}
					req := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: h\r\nContent-Length: %d\r\n\r\n%s", path, len(body), body)
					_, got, err := cl.do(req)
					if err != nil || got != want {
						errs <- fmt.Errorf("oneconnect=%v client %d request %d: %q %v, want %q", oc, c, i, got, err, want)
						return
					}
				}
			}()
		}
		wg.Wait()
		close(errs)
		var msgs []string
		for err := range errs {
			msgs = append(msgs, err.Error())
		}
		if len(msgs) > 0 {
			t.Fatal(strings.Join(msgs, "\n"))
		}
	}
}
