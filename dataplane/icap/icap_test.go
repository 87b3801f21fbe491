package icap_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
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
			a := <-answers
			buf := make([]byte, 4096)
			c.Read(buf)
			if a != "" {
				c.Write([]byte(a))
			}
			if a != "" || true {
				time.AfterFunc(2*time.Second, func() { c.Close() })
			}
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
			s := &icap.Service{URI: "icap://x/av", Timeout: 300 * time.Millisecond}
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
