package mblb

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

func TestStatusSet(t *testing.T) {
	var s StatusSet
	s.Add(500, 500)
	s.Add(502, 504)
	s.Add(599, 700) // clipped at 599
	for _, tc := range []struct {
		code int
		want bool
	}{{200, false}, {499, false}, {500, true}, {501, false}, {502, true}, {503, true}, {504, true}, {505, false}, {599, true}, {600, false}, {-1, false}, {1000, false}} {
		if got := s.Has(tc.code); got != tc.want {
			t.Errorf("Has(%d) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

// statusMember answers /s/NNN with status NNN and a short body, /big/NNN
// with a 3 MiB one (more than a message: it streams), and counts the
// connections it accepted.
func startStatusMember(t *testing.T, addr string) (Member, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	conns := new(atomic.Int64)
	big := strings.Repeat("x", 3<<20)
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			parts := strings.Split(r.URL.Path, "/")
			code, _ := strconv.Atoi(parts[len(parts)-1])
			body := "member body " + parts[len(parts)-1]
			if parts[1] == "big" {
				body = big
			}
			w.Header().Set("Content-Length", strconv.Itoa(len(body)))
			w.WriteHeader(code)
			io.WriteString(w, body)
		}),
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				conns.Add(1)
			}
		},
	}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return Member{ID: 1, Addr: rawsock.AddrPortOf(ln.Addr()), Pool: "/Common/web_pool", Name: "M1"}, conns
}

// TestFallbackStatusCodes: a member's response whose status is one of
// fallback-status-codes reaches the client as the fallback host's
// redirect; its body is read and dropped, and the server connection goes
// back to OneConnect's pool for the next client. Other statuses, or no
// fallback host, pass the member's response on.
func TestFallbackStatusCodes(t *testing.T) {
	codes := new(StatusSet)
	codes.Add(500, 500)
	codes.Add(502, 504)
	for i, tc := range []struct {
		name     string
		fallback string
		path     string
		want     int
		location string
	}{
		{"ok passes", "http://sorry.example/", "/s/200", 200, ""},
		{"500 redirected", "http://sorry.example/", "/s/500", 302, "http://sorry.example/"},
		{"in range", "http://sorry.example/", "/s/503", 302, "http://sorry.example/"},
		{"out of the list", "http://sorry.example/", "/s/501", 501, ""},
		{"404 passes", "http://sorry.example/", "/s/404", 404, ""},
		{"streamed body dropped", "http://sorry.example/", "/big/504", 302, "http://sorry.example/"},
		{"no fallback host", "", "/s/500", 500, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, conns := startStatusMember(t, fmt.Sprintf("127.4.1.%d:0", 10+i))
			pool := &testPool{members: []Member{m}, disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
			vs := startVS(t, fmt.Sprintf("127.4.1.%d:0", 100+i), httpConfig(pool, true, HTTPOptions{Fallback: tc.fallback, FallbackStatus: codes}))
			// Six clients one after the other: each answer is the same,
			// and the server connections are reused (the engine may open
			// a second one while the first is still being drained or
			// pooled; one per client would be six).
			for range 6 {
				c := dialHTTP(t, vs)
				c.c.SetDeadline(time.Now().Add(20 * time.Second))
				rs, bodies, err := c.do("GET", get(tc.path))
				if err != nil {
					t.Fatal(err)
				}
				r := rs[0]
				if r.StatusCode != tc.want || r.Header.Get("Location") != tc.location {
					t.Fatalf("answer %d Location %q, want %d %q", r.StatusCode, r.Header.Get("Location"), tc.want, tc.location)
				}
				if tc.location != "" {
					if bodies[0] != "" || !r.Close {
						t.Fatalf("redirect body %q close %v: want an empty body and the connection closed", bodies[0], r.Close)
					}
					if _, err := c.br.ReadByte(); err != io.EOF {
						t.Fatalf("after the redirect: %v, want the client's connection closed", err)
					}
				} else if len(bodies[0]) == 0 || strings.Contains(bodies[0], "sorry") {
					t.Fatalf("member's body lost: %q", bodies[0])
				}
				c.c.Close()
				// A streamed body is still being dropped after the
				// redirect went: wait until the server connection is back
				// in the pool.
				for i := 0; i < 500; i++ {
					if st, _ := vs.e.OneConnectStats(); st.CurrentIdle > 0 {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			if n := conns.Load(); n > 3 {
				t.Fatalf("the member accepted %d connections for 6 clients: not reused", n)
			}
		})
	}
}
