package icap_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/icap"
	"github.com/openltm/openltm/dataplane/icap/icaptest"
)

const icapAddr = "127.64.16.10:0"

func TestExchange(t *testing.T) {
	srv, err := icaptest.Listen(icapAddr, icaptest.Config{Block: "EICAR", Header: "X-Scan", Value: "done", Add: "X-Adapted: yes"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := netip.MustParseAddrPort(srv.Addr())
	req := []byte("POST /up HTTP/1.1\r\nHost: a\r\nX-Scan: no\r\n\r\n")
	plain := []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
	resp := []byte("HTTP/1.1 200 OK\r\nX-Scan: no\r\nContent-Length: 5\r\n\r\n")
	long := bytes.Repeat([]byte("a"), 3000)
	for _, tc := range []struct {
		name    string
		mode    icap.Mode
		preview int
		m       icap.Message
		want    icap.Outcome
		has     string // in the resulting message
		conts   int64  // 100 Continues the server sent
	}{
		{"plain request unmodified", icap.ReqMod, 0, icap.Message{ReqHead: plain}, icap.Unmodified, "", 0},
		{"header rewritten", icap.ReqMod, 0, icap.Message{ReqHead: req, ReqBody: []byte("hello")}, icap.Modified, "X-Scan: done\r\nX-Adapted: yes\r\nContent-Length: 5\r\n\r\nhello", 0},
		{"blocked body", icap.ReqMod, 0, icap.Message{ReqHead: plain, ReqBody: []byte("x EICAR y")}, icap.Answered, "403 Forbidden", 0},
		{"blocked in the preview", icap.ReqMod, 16, icap.Message{ReqHead: plain, ReqBody: append([]byte("EICAR"), long...)}, icap.Answered, "blocked by the ICAP service", 0},
		{"blocked after 100 Continue", icap.ReqMod, 16, icap.Message{ReqHead: plain, ReqBody: append(long, "EICAR"...)}, icap.Answered, "403", 1},
		{"whole body in the preview (ieof)", icap.ReqMod, 1024, icap.Message{ReqHead: plain, ReqBody: []byte("small")}, icap.Unmodified, "", 0},
		{"clean long body after 100 Continue", icap.ReqMod, 16, icap.Message{ReqHead: plain, ReqBody: long}, icap.Unmodified, "", 1},
		{"response rewritten", icap.RespMod, 0, icap.Message{ReqHead: plain, RespHead: resp, RespBody: []byte("fine.")}, icap.Modified, "HTTP/1.1 200 OK\r\nX-Scan: done", 0},
		{"response blocked", icap.RespMod, 4, icap.Message{ReqHead: plain, RespHead: resp, RespBody: []byte("EICAR")}, icap.Modified, "403 Forbidden", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := srv.Stats.Continues.Load()
			s := &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", Preview: tc.preview, Timeout: 5 * time.Second}
			r, err := s.Exchange(context.Background(), addr, tc.mode, &tc.m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Outcome != tc.want {
				t.Fatalf("outcome %v, want %v (%q)", r.Outcome, tc.want, r.Msg)
			}
			if !bytes.Contains(r.Msg, []byte(tc.has)) {
				t.Fatalf("message %q lacks %q", r.Msg, tc.has)
			}
			if got := srv.Stats.Continues.Load() - before; got != tc.conts {
				t.Fatalf("%d 100 Continue, want %d", got, tc.conts)
			}
		})
	}
}

// TestFailures: what the caller turns into service-down-action.
func TestFailures(t *testing.T) {
	ln, err := net.Listen("tcp", "127.64.16.10:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	answers := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			// OPTIONS gets a plain answer; the exchange that follows on
			// the same connection gets the case's.
			buf := make([]byte, 4096)
			n, _ := c.Read(buf)
			if strings.HasPrefix(string(buf[:n]), "OPTIONS") {
				c.Write([]byte("ICAP/1.0 200 OK\r\nMethods: REQMOD\r\nOptions-TTL: 0\r\nEncapsulated: null-body=0\r\n\r\n"))
				c.Read(buf)
			}
			if a := <-answers; a != "" {
				c.Write([]byte(a))
			}
			time.AfterFunc(2*time.Second, func() { c.Close() })
		}
	}()
	addr := netip.MustParseAddrPort(ln.Addr().String())
	m := &icap.Message{ReqHead: []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")}
	for _, tc := range []struct {
		name   string
		answer string
		check  func(error) bool
	}{
		{"error status", "ICAP/1.0 500 Server Error\r\nEncapsulated: null-body=0\r\n\r\n", func(err error) bool { return errors.Is(err, icap.ErrStatus) }},
		{"not ICAP", "HTTP/1.1 200 OK\r\n\r\n", func(err error) bool { return err != nil && strings.Contains(err.Error(), "status line") }},
		{"no answer in time", "", func(err error) bool { return errors.Is(err, context.DeadlineExceeded) || isTimeout(err) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			answers <- tc.answer
			s := &icap.Service{URI: "icap://x/av", Timeout: 300 * time.Millisecond, Client: &icap.Client{}}
			_, err := s.Exchange(context.Background(), addr, icap.ReqMod, m)
			if !tc.check(err) {
				t.Fatalf("error %v", err)
			}
		})
	}
	s := &icap.Service{URI: "icap://x/av", Timeout: time.Second}
	if _, err := s.Exchange(context.Background(), netip.MustParseAddrPort("127.64.16.11:1"), icap.ReqMod, m); err == nil {
		t.Fatal("no error from a server that is not there")
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// TestKeepAlive: exchanges share one connection and one OPTIONS; a kept
// connection the server closed is retried once on a fresh one; the idle
// connections kept are bounded.
func TestKeepAlive(t *testing.T) {
	m := icap.Message{ReqHead: []byte("POST /up HTTP/1.1\r\nHost: a\r\n\r\n"), ReqBody: []byte("hello")}
	for _, tc := range []struct {
		name      string
		perConn   int // the server closes a connection after that many requests
		exchanges int
		conns     int64 // connections the server saw
	}{
		{"kept between exchanges", 0, 5, 1},
		{"closed by the server after each request: retried", 1, 3, 4},
		{"closed after two requests", 2, 3, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := icaptest.Listen("127.66.16.10:0", icaptest.Config{PerConn: tc.perConn})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			addr := netip.MustParseAddrPort(srv.Addr())
			s := &icap.Service{URI: "icap://${SERVER_IP}:${SERVER_PORT}/av", Timeout: 5 * time.Second, Client: &icap.Client{}}
			for i := range tc.exchanges {
				r, err := s.Exchange(context.Background(), addr, icap.ReqMod, &m)
				if err != nil || r.Outcome != icap.Unmodified {
					t.Fatalf("exchange %d: %v %v", i, r.Outcome, err)
				}
			}
			if got := srv.Stats.Options.Load(); got != 1 {
				t.Fatalf("%d OPTIONS, want 1", got)
			}
			if got := srv.Stats.ReqMod.Load(); got != int64(tc.exchanges) {
				t.Fatalf("%d REQMOD, want %d", got, tc.exchanges)
			}
			if got := srv.Stats.Conns.Load(); got != tc.conns {
				t.Fatalf("%d connections, want %d", got, tc.conns)
			}
		})
	}
}

func TestIdleBounded(t *testing.T) {
	srv, err := icaptest.Listen("127.66.16.11:0", icaptest.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	addr := netip.MustParseAddrPort(srv.Addr())
	cl := &icap.Client{MaxIdle: 2}
	s := &icap.Service{URI: "icap://x/av", Timeout: 5 * time.Second, Client: cl}
	m := icap.Message{ReqHead: []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")}
	// Six exchanges at once need up to six connections; two stay.
	errs := make(chan error, 6)
	for range 6 {
		go func() {
			_, err := s.Exchange(context.Background(), addr, icap.ReqMod, &m)
			errs <- err
		}()
	}
	for range 6 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := cl.Idle(addr); n < 1 || n > 2 {
		t.Fatalf("%d idle connections kept, want 1 or 2", n)
	}
	cl.CloseIdle()
	if n := cl.Idle(addr); n != 0 {
		t.Fatalf("%d idle after CloseIdle", n)
	}
}

// TestOptions: what the server's OPTIONS says is honoured.
func TestOptions(t *testing.T) {
	long := bytes.Repeat([]byte("a"), 100)
	for _, tc := range []struct {
		name     string
		srv      icaptest.Config
		svc      icap.Service
		uri      string
		previews []string // the server's log lines about previews
		ignored  bool
		status   int
	}{
		{"preview from the server when the profile leaves it", icaptest.Config{Preview: 8}, icap.Service{ServerPreview: 1024}, "/a", []string{"REQMOD preview 8"}, false, 204},
		{"profile's preview-size caps the server's", icaptest.Config{Preview: 64}, icap.Service{ServerPreview: 10}, "/a", []string{"REQMOD preview 10"}, false, 204},
		{"server's preview caps the profile's", icaptest.Config{Preview: 8}, icap.Service{Preview: 32}, "/a", []string{"REQMOD preview 8"}, false, 204},
		{"no preview asked, none left to it", icaptest.Config{}, icap.Service{ServerPreview: 1024}, "/a", nil, false, 204},
		{"no server preview, the profile's", icaptest.Config{}, icap.Service{Preview: 16}, "/a", []string{"REQMOD preview 16"}, false, 204},
		{"preview-size 0: none", icaptest.Config{Preview: 8}, icap.Service{}, "/a", nil, false, 204},
		{"ignored extension not sent", icaptest.Config{Ignore: "jpg, gif"}, icap.Service{}, "/img/a.JPG?x=1", nil, true, 0},
		{"other extension sent", icaptest.Config{Ignore: "jpg, gif"}, icap.Service{}, "/a.jpgx", nil, false, 204},
		{"absolute form", icaptest.Config{Ignore: "gif"}, icap.Service{}, "http://h/b.gif", nil, true, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var logs []string
			var mu sync.Mutex
			tc.srv.Log = func(l string) { mu.Lock(); logs = append(logs, l); mu.Unlock() }
			srv, err := icaptest.Listen("127.66.16.12:0", tc.srv)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			addr := netip.MustParseAddrPort(srv.Addr())
			s := tc.svc
			s.URI, s.Timeout, s.Client = "icap://x/av", 5*time.Second, &icap.Client{}
			m := icap.Message{ReqHead: []byte("POST " + tc.uri + " HTTP/1.1\r\nHost: a\r\n\r\n"), ReqBody: long}
			r, err := s.Exchange(context.Background(), addr, icap.ReqMod, &m)
			if err != nil {
				t.Fatal(err)
			}
			if r.Ignored != tc.ignored || r.Status != tc.status {
				t.Fatalf("ignored %v status %d, want %v %d", r.Ignored, r.Status, tc.ignored, tc.status)
			}
			mu.Lock()
			defer mu.Unlock()
			var previews []string
			for _, l := range logs {
				if strings.Contains(l, "preview") {
					previews = append(previews, l)
				}
			}
			if strings.Join(previews, ",") != strings.Join(tc.previews, ",") {
				t.Fatalf("previews %q, want %q", previews, tc.previews)
			}
			if want := map[bool]int64{true: 0, false: 1}[tc.ignored]; srv.Stats.ReqMod.Load() != want {
				t.Fatalf("%d REQMOD, want %d", srv.Stats.ReqMod.Load(), want)
			}
		})
	}
}

// TestOptionsRefused: a server that closes the connection on OPTIONS,
// or answers it with an error, still gets the exchange, with the
// profile's settings.
func TestOptionsRefused(t *testing.T) {
	for _, tc := range []struct {
		name, answer string // answer to OPTIONS; "" closes the connection
	}{
		{"closed", ""},
		{"405", "ICAP/1.0 405 Method Not Allowed\r\nEncapsulated: null-body=0\r\n\r\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.66.16.13:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			go func() {
				for n := 0; n < 4; n++ {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					go func() {
						defer c.Close()
						r := bufio.NewReader(c)
						for k := 0; k < 4; k++ {
							line, err := r.ReadString('\n')
							if err != nil {
								return
							}
							if _, err := icap.ReadFields(r); err != nil {
								return
							}
							if strings.HasPrefix(line, "OPTIONS") {
								if tc.answer == "" {
									return
								}
								c.Write([]byte(tc.answer))
								continue
							}
							for { // the encapsulated HTTP head, then its body
								l, err := r.ReadString('\n')
								if err != nil {
									return
								}
								if l == "\r\n" {
									break
								}
							}
							if _, _, err := icap.ReadChunked(r, 1<<20); err != nil {
								return
							}
							c.Write([]byte("ICAP/1.0 204 No Content\r\nEncapsulated: null-body=0\r\n\r\n"))
						}
					}()
				}
			}()
			addr := netip.MustParseAddrPort(ln.Addr().String())
			s := &icap.Service{URI: "icap://x/av", Timeout: 5 * time.Second, Client: &icap.Client{}}
			m := icap.Message{ReqHead: []byte("GET / HTTP/1.1\r\nHost: a\r\n\r\n")}
			for i := range 2 {
				r, err := s.Exchange(context.Background(), addr, icap.ReqMod, &m)
				if err != nil || r.Status != 204 {
					t.Fatalf("exchange %d: %d %v", i, r.Status, err)
				}
			}
		})
	}
}
