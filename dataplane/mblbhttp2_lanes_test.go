package dataplane

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/h2gw"
	"github.com/openltm/openltm/dataplane/mblb"
)

// laneMember is a member for the lane tests, in HTTP/1.1 or HTTP/2
// (h2c): /svc/Long is a server-streaming gRPC call that sends "first",
// then holds until release is closed, then sends "last"; /svc/Bidi
// echoes each message as it comes (full duplex); any other path answers
// at once with the path and the rule's X-Rule field.
type laneMember struct {
	release chan struct{}
	srv     *http.Server
}

func (m *laneMember) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/svc/Long":
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.Write(grpcFrame("first"))
		w.(http.Flusher).Flush()
		select {
		case <-m.release:
		case <-time.After(20 * time.Second):
			return
		}
		w.Write(grpcFrame("last"))
		w.Header().Set("Grpc-Status", "0")
	case "/svc/Bidi":
		rc := http.NewResponseController(w)
		rc.EnableFullDuplex() // HTTP/1.1: read the body after the head went
		w.Header().Set("Content-Type", "application/grpc")
		w.Header().Set("Trailer", "Grpc-Status")
		w.WriteHeader(200)
		rc.Flush()
		for i := 0; i < 100; i++ {
			msg, err := readGRPC(r.Body)
			if err != nil {
				break
			}
			w.Write(grpcFrame("echo " + msg))
			rc.Flush()
		}
		w.Header().Set("Grpc-Status", "0")
	default:
		io.Copy(io.Discard, r.Body)
		fmt.Fprintf(w, "%s %s rule=%s", r.Proto, r.URL.Path, r.Header.Get("X-Rule"))
	}
}

// startLaneMember serves a laneMember on addr, HTTP/2 with prior
// knowledge when h2, else HTTP/1.1.
func startLaneMember(t *testing.T, addr string, h2 bool) *laneMember {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	m := &laneMember{release: make(chan struct{})}
	var protos http.Protocols
	if h2 {
		protos.SetUnencryptedHTTP2(true)
	} else {
		protos.SetHTTP1(true)
	}
	m.srv = &http.Server{Handler: m, Protocols: &protos}
	go m.srv.Serve(ln)
	t.Cleanup(func() { m.srv.Close() })
	return m
}

// laneConfig is an HTTP virtual on vs whose clients may speak HTTP/2
// with prior knowledge, with a rule that marks each request, and whose
// member speaks HTTP/2 (the http2 profile on both sides, with
// httprouter) when h2, else HTTP/1.1 (the profile on the client side
// only).
func laneConfig(t *testing.T, vs, member string, h2 bool) (*Config, *h2gw.Stats) {
	t.Helper()
	var cfg *Config
	if h2 {
		cfg, _ = memberH2Config(t, vs, member)
	} else {
		rule := `when HTTP_REQUEST { HTTP::header insert X-Rule "[HTTP::path]" }`
		cfg = l7Config(t, vs, false, mblb.HTTPOptions{}, rule, member)
	}
	st := new(h2gw.Stats)
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 32, Stats: st}}
	return cfg, st
}

// oneConnClient speaks HTTP/2 with prior knowledge and reports the local
// address of the connection each request went on, so a test can tell
// that its streams shared one.
func oneConnClient(t *testing.T) (*http.Client, func(*http.Request) (*http.Request, *string)) {
	var protos http.Protocols
	protos.SetUnencryptedHTTP2(true)
	tr := &http.Transport{Protocols: &protos}
	t.Cleanup(tr.CloseIdleConnections)
	traced := func(req *http.Request) (*http.Request, *string) {
		local := new(string)
		ct := &httptrace.ClientTrace{GotConn: func(i httptrace.GotConnInfo) { *local = i.Conn.LocalAddr().String() }}
		return req.WithContext(httptrace.WithClientTrace(req.Context(), ct)), local
	}
	return &http.Client{Transport: tr, Timeout: 20 * time.Second}, traced
}

// TestHTTP2StreamsIndependent: a long server-streaming gRPC call, held
// open by its member, does not hold back the 20 short streams its
// client opens after it on the same connection: they are all answered
// (each through its own HTTP_REQUEST) before the long call ends, with
// HTTP/1.1 members (the http2 profile on the client side) and with
// HTTP/2 members (on both sides). The long call then ends normally,
// with its trailers.
func TestHTTP2StreamsIndependent(t *testing.T) {
	cases := []struct {
		name       string
		vs, member string
		h2         bool
	}{
		{"HTTP/1.1 member", "127.75.1.1:80", "127.75.1.11:80", false},
		{"HTTP/2 member", "127.75.1.2:80", "127.75.1.12:80", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := startLaneMember(t, c.member, c.h2)
			cfg, st := laneConfig(t, c.vs, c.member, c.h2)
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			client, traced := oneConnClient(t)

			req, _ := http.NewRequest("POST", "http://"+c.vs+"/svc/Long", bytes.NewReader(grpcFrame("go")))
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("TE", "trailers")
			req.ContentLength = -1
			req, longConn := traced(req)
			long, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer long.Body.Close()
			if msg, err := readGRPC(long.Body); err != nil || msg != "first" {
				t.Fatalf("the long call's first message: %q %v", msg, err)
			}

			// The long call is open and its member holds it: 20 short
			// streams on the same connection.
			type result struct {
				path, body, conn string
				err              error
			}
			results := make(chan result, 20)
			var wg sync.WaitGroup
			for i := range 20 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					path := fmt.Sprintf("/short/%02d", i)
					req, _ := http.NewRequest("GET", "http://"+c.vs+path, nil)
					req, conn := traced(req)
					resp, err := client.Do(req)
					if err != nil {
						results <- result{path: path, err: err}
						return
					}
					b, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					results <- result{path, string(b), *conn, err}
				}()
			}
			done := make(chan struct{})
			go func() { wg.Wait(); close(done) }()
			select {
			case <-done:
			case <-time.After(15 * time.Second):
				t.Fatal("the short streams wait behind the long call")
			}
			close(results)
			for r := range results {
				switch {
				case r.err != nil:
					t.Errorf("%s: %v", r.path, r.err)
				case !strings.HasSuffix(r.body, " "+r.path+" rule="+r.path):
					t.Errorf("%s answered %q", r.path, r.body)
				case r.conn != *longConn:
					t.Errorf("%s went on connection %s, the long call on %s: the test wants one", r.path, r.conn, *longConn)
				}
			}
			select {
			case <-m.release:
				t.Fatal("the long call ended before the short streams were answered")
			default:
			}

			close(m.release)
			msg, err := readGRPC(long.Body)
			if err != nil || msg != "last" {
				t.Fatalf("the long call's last message: %q %v", msg, err)
			}
			io.Copy(io.Discard, long.Body)
			if long.Trailer.Get("Grpc-Status") != "0" {
				t.Errorf("the long call's trailers: %v", long.Trailer)
			}
			if n := st.TotalConnections.Load(); n != 1 {
				t.Errorf("HTTP/2 client connections %d, want 1", n)
			}
			if n := st.TotalStreams.Load(); n != 21 {
				t.Errorf("streams %d, want 21", n)
			}
		})
	}
}

// TestHTTP2Bidirectional: a bidirectional gRPC call through an HTTP/2
// client connection and an HTTP/2 member: the client sends a message
// only after it has the member's answer to the one before, so neither
// side's stream can be held back whole on the way. With an HTTP/1.1
// member the stream's request goes to it as it comes (chunked) and its
// answer comes back as it is sent, so the same call works with a member
// that reads its request while it answers (here one with net/http's
// full duplex); most HTTP/1.1 servers answer only after the whole
// request, which makes the call half duplex: the case "HTTP/1.1 member,
// whole request first" sends every message before reading any answer.
func TestHTTP2Bidirectional(t *testing.T) {
	cases := []struct {
		name       string
		vs, member string
		h2         bool
		wholeFirst bool
	}{
		{"HTTP/2 member", "127.75.2.1:80", "127.75.2.11:80", true, false},
		{"HTTP/1.1 member", "127.75.2.2:80", "127.75.2.12:80", false, false},
		{"HTTP/1.1 member, whole request first", "127.75.2.3:80", "127.75.2.13:80", false, true},
	}
	const rounds = 5
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			startLaneMember(t, c.member, c.h2)
			cfg, _ := laneConfig(t, c.vs, c.member, c.h2)
			p, _ := newPlane(t)
			mustApply(t, p, cfg)
			client, _ := oneConnClient(t)
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			pr, pw := io.Pipe()
			defer pw.Close()
			req, _ := http.NewRequestWithContext(ctx, "POST", "http://"+c.vs+"/svc/Bidi", pr)
			req.Header.Set("Content-Type", "application/grpc")
			req.Header.Set("TE", "trailers")
			req.ContentLength = -1
			if c.wholeFirst {
				go func() {
					for i := range rounds {
						pw.Write(grpcFrame(fmt.Sprintf("m%d", i)))
					}
					pw.Close()
				}()
			} else {
				go pw.Write(grpcFrame("m0")) // the call's head goes with its first message
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			for i := range rounds {
				msg, err := readGRPC(resp.Body)
				if want := fmt.Sprintf("echo m%d", i); err != nil || msg != want {
					t.Fatalf("answer %d: %q %v, want %q", i, msg, err, want)
				}
				if !c.wholeFirst && i+1 < rounds {
					// The next message only now that this answer came.
					if _, err := pw.Write(grpcFrame(fmt.Sprintf("m%d", i+1))); err != nil {
						t.Fatal(err)
					}
				}
			}
			pw.Close()
			if rest, err := io.ReadAll(resp.Body); err != nil || len(rest) != 0 {
				t.Fatalf("after the last answer: %q %v", rest, err)
			}
			if resp.Trailer.Get("Grpc-Status") != "0" {
				t.Errorf("trailers: %v", resp.Trailer)
			}
		})
	}
}

// TestHTTP2RejectResetsClient: a rule's reject on any stream resets the
// HTTP/2 client's connection, as BIG-IP resets the client; a lane the
// gateway ends itself does not (engineConn.ended).
func TestHTTP2RejectResetsClient(t *testing.T) {
	const vs = "127.75.9.1:80"
	h2Member(t, "127.75.9.11:80", "M1")
	rule := `when HTTP_REQUEST { if { [HTTP::path] eq "/reject" } { reject } }`
	cfg := l7Config(t, vs, true, mblb.HTTPOptions{}, rule, "127.75.9.11:80")
	cfg.Virtuals["/Common/vs"].HTTP2 = &HTTP2{Always: true, Config: h2gw.Config{MaxConcurrentStreams: 8}}
	p, _ := newPlane(t)
	mustApply(t, p, cfg)
	client := h2Client(t)
	get := func(path string) error {
		resp, err := client.Get("http://" + vs + path)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		_, err = io.ReadAll(resp.Body)
		return err
	}
	for i := range 3 { // several lanes busy before the reject
		if err := get(fmt.Sprintf("/ok%d", i)); err != nil {
			t.Fatalf("before: %v", err)
		}
	}
	if err := get("/reject"); err == nil {
		t.Fatal("a rejected stream was answered")
	}
	// A new connection is served.
	client.Transport.(*http.Transport).CloseIdleConnections()
	if err := get("/after"); err != nil {
		t.Fatalf("after the reject: %v", err)
	}
}
