package dataplane

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// h2Member answers every request with its label, the request line and
// the fields the tests look at, over HTTP/1.1.
func h2Member(t *testing.T, addr, label string) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s xff=%s rule=%s body=%d", label, r.Proto, r.Method, r.RequestURI,
			r.Header.Get("X-Forwarded-For"), r.Header.Get("X-Rule"), len(body))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// h2Client speaks HTTP/2 with prior knowledge (opening another
// connection when one has as many streams as the server allows).
func h2Client(t *testing.T) *http.Client {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

// TestHTTP2Virtual: HTTP/2 clients of an HTTP virtual with the http2
// profile (cleartext, activation-modes always): each stream runs the
// rule's HTTP_REQUEST and is balanced on its own with OneConnect, many
// at once on one connection; an HTTP/1.1 client of the same virtual is
// served as one; a stream the rule answers itself gets that answer; the
// profile counts connections and streams.
func TestHTTP2Virtual(t *testing.T) {
	const vs = "127.0.239.1:80"
	h2Member(t, "127.0.239.11:80", "M1")
	h2Member(t, "127.0.239.12:80", "M2")
	rule := `when HTTP_REQUEST {
		if { [HTTP::path] eq "/mine" } { HTTP::respond 200 content "answered by the rule for [IP::client_addr]" }
		HTTP::header insert X-Rule "[HTTP::path]"
		if { [HTTP::path] ne [HTTP::uri] || [HTTP::version] ne "2.0" } { HTTP::header replace X-Rule "[HTTP::path] v[HTTP::version]" }
	}`
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{InsertXFF: true}, rule, "127.0.239.11:80", "127.0.239.12:80")
	st := new(h2gw.Stats)
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 8, Stats: st}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)

	client := h2Client(t)
	get := func(path string) (string, string) {
		t.Helper()
		resp, err := client.Get("http://" + vs + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Proto, string(b)
	}
	seen := map[string]bool{}
	for i := 0; i < 4; i++ {
		proto, body := get(fmt.Sprintf("/r%d", i))
		if proto != "HTTP/2.0" || !strings.HasSuffix(body, fmt.Sprintf(" HTTP/1.1 GET /r%d xff=127.0.0.1 rule=/r%d body=0", i, i)) {
			t.Fatalf("%s %q", proto, body)
		}
		seen[body[:2]] = true
	}
	if !seen["M1"] || !seen["M2"] {
		t.Errorf("one connection's streams went to %v, want both members (OneConnect balances each)", seen)
	}
	if _, body := get("/mine"); body != "answered by the rule for 127.0.0.1" {
		t.Errorf("the rule's answer: %q", body)
	}

	// Many streams at once, each with its own answer; an upload among them.
	var wg sync.WaitGroup
	errs := make(chan error, 32)
	for i := 0; i < 32; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			path := fmt.Sprintf("/c%02d", i)
			var resp *http.Response
			var err error
			if i%8 == 0 {
				resp, err = client.Post("http://"+vs+path, "text/plain", strings.NewReader(strings.Repeat("x", 100000)))
			} else {
				resp, err = client.Get("http://" + vs + path)
			}
			if err != nil {
				errs <- err
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := fmt.Sprintf(" GET %s xff=127.0.0.1 rule=%s body=0", path, path)
			if i%8 == 0 {
				want = fmt.Sprintf(" POST %s xff=127.0.0.1 rule=%s body=100000", path, path)
			}
			if !strings.HasSuffix(string(b), want) {
				errs <- fmt.Errorf("%s answered %q", path, b)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// HTTP/1.1 on the same virtual.
	resp, err := http.Get("http://" + vs + "/old")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.ProtoMajor != 1 || !strings.HasSuffix(string(b), " GET /old xff=127.0.0.1 rule=/old v1.1 body=0") {
		t.Errorf("HTTP/1.1 client: %s %q", resp.Proto, b)
	}
	if n := st.TotalStreams.Load(); n != 37 {
		t.Errorf("streams counted %d, want 37", n)
	}
	if n := st.TotalConnections.Load(); n < 1 || n > 5 {
		t.Errorf("HTTP/2 connections counted %d, want 1-5 (32 streams, 8 at a time each)", n)
	}
	if m := st.MaxStreams.Load(); m < 1 || m > 8 {
		t.Errorf("most concurrent streams %d, want 1-8 (the profile's limit)", m)
	}
}
