package fwdproxy

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
)

// rawOrigin accepts on addr and hands each connection to serve.
func rawOrigin(t *testing.T, addr string, serve func(net.Conn)) {
	t.Helper()
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go serve(c)
		}
	}()
}

// waitEnded reports whether a session of f ended within d.
func waitEnded(f *poolFixture, d time.Duration) bool {
	select {
	case <-f.ended:
		return true
	case <-time.After(d):
		return false
	}
}

// waitLog waits (at most 10 s) for a log line of f containing s.
func waitLog(t *testing.T, f *poolFixture, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l := <-f.logs:
			if strings.Contains(l, s) {
				return
			}
		case <-deadline:
			t.Fatalf("no log line with %q", s)
		}
	}
}

// TestProxyCloseTimers: close-wait-timeout ends a tunnel one side
// half-closed and a client that half-closed while its answer is owed,
// zero-window-timeout a client that reads nothing of a large answer and
// an origin that reads nothing of a large upload; the same without the
// timers stay.
func TestProxyCloseTimers(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the zero-window and FIN-WAIT timers read TCP_INFO, which is Linux's")
	}
	// An origin that keeps every connection open and reads what comes.
	rawOrigin(t, "127.34.3.20:7000", func(c net.Conn) { io.Copy(io.Discard, c) })
	// An origin that reads nothing.
	rawOrigin(t, "127.34.3.21:7000", func(c net.Conn) { select {} })
	// An origin that answers 64 MB to anything.
	big := make([]byte, 32<<10)
	rawOrigin(t, "127.34.3.22:7000", func(c net.Conn) {
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 67108864\r\n\r\n")
		for i := 0; i < 2048; i++ {
			if _, err := c.Write(big); err != nil {
				return
			}
		}
	})
	recs := []string{"open.test. 60 IN A 127.34.3.20", "deaf.test. 60 IN A 127.34.3.21", "big.test. 60 IN A 127.34.3.22"}
	timers := &CloseTimers{AfterFIN: 300 * time.Millisecond, ZeroWindow: 300 * time.Millisecond}
	with := startPoolProxy(t, "127.34.3.1", "127.34.3.53", Config{ConnectAllow: true}, SessionOptions{Close: timers, Idle: time.Minute}, recs...)
	without := startPoolProxy(t, "127.34.3.2", "127.34.3.54", Config{ConnectAllow: true}, SessionOptions{Idle: time.Minute}, recs...)
	for _, tc := range []struct {
		name string
		f    *poolFixture
		run  func(t *testing.T, c net.Conn)
		log  string // "": the session must stay
	}{
		{"tunnel half-closed", with, halfCloseTunnel, "half-closed for 300ms"},
		{"tunnel half-closed, no timer", without, halfCloseTunnel, ""},
		{"client half-closed, answer owed", with, halfCloseOwed, "the client half-closed for 300ms"},
		{"client half-closed, answer owed, no timer", without, halfCloseOwed, ""},
		{"client reads nothing", with, readNothing, "the client took nothing for 300ms (zero window)"},
		{"client reads nothing, no timer", without, readNothing, ""},
		{"origin reads nothing", with, uploadToDeaf, "origin 127.34.3.21:7000 took nothing for 300ms (zero window)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.DialTimeout("tcp", tc.f.addr, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			tc.run(t, c)
			if tc.log == "" {
				// Four times the timer: the session is still there.
				if waitEnded(tc.f, 1200*time.Millisecond) {
					t.Fatal("the session ended without a timer")
				}
				return
			}
			waitLog(t, tc.f, tc.log)
			if !waitEnded(tc.f, 10*time.Second) {
				t.Fatal("the session did not end")
			}
			// The client's socket was reset, or closed.
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			_, err = io.Copy(io.Discard, c)
			if errors.Is(err, os.ErrDeadlineExceeded) {
				t.Errorf("the client's connection is still open: %v", err)
			}
		})
	}
}

// halfCloseTunnel opens a tunnel to an origin that never closes and
// sends its FIN.
func halfCloseTunnel(t *testing.T, c net.Conn) {
	br := bufio.NewReader(c)
	io.WriteString(c, "CONNECT open.test:7000 HTTP/1.1\r\nHost: open.test:7000\r\n\r\n")
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v", err)
	}
	io.WriteString(c, "some bytes")
	c.(*net.TCPConn).CloseWrite()
}

// halfCloseOwed asks an origin that never answers, and sends its FIN.
func halfCloseOwed(t *testing.T, c net.Conn) {
	io.WriteString(c, "GET http://deaf.test:7000/ HTTP/1.1\r\nHost: deaf.test:7000\r\n\r\n")
	c.(*net.TCPConn).CloseWrite()
}

// readNothing asks for 64 MB and reads none of it.
func readNothing(t *testing.T, c net.Conn) {
	io.WriteString(c, "GET http://big.test:7000/ HTTP/1.1\r\nHost: big.test:7000\r\n\r\n")
}

// uploadToDeaf sends 64 MB to an origin that reads nothing.
func uploadToDeaf(t *testing.T, c net.Conn) {
	go func() {
		io.WriteString(c, "POST http://deaf.test:7000/ HTTP/1.1\r\nHost: deaf.test:7000\r\nContent-Length: 67108864\r\n\r\n")
		b := make([]byte, 32<<10)
		for i := 0; i < 2048; i++ {
			if _, err := c.Write(b); err != nil {
				return
			}
		}
	}()
}

// TestProxyGatewayError: gateway-error-message is the body of the
// proxy's 504s (an origin silent for the idle timeout); without it the
// case's own message stays.
func TestProxyGatewayError(t *testing.T) {
	rawOrigin(t, "127.34.4.20:7000", func(c net.Conn) { io.Copy(io.Discard, c) })
	recs := []string{"mute.test. 60 IN A 127.34.4.20"}
	for _, tc := range []struct {
		name string
		cfg  Config
		body string
	}{
		{"gateway-error-message", Config{GatewayError: "gateway timed out", BadResponse: "bad answer"}, "gateway timed out"},
		{"none", Config{BadResponse: "bad answer"}, "bad answer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startPoolProxy(t, "127.34.4.1", "127.34.4.53", tc.cfg, SessionOptions{Idle: 300 * time.Millisecond}, recs...)
			resp, body, c, _ := rawExchange(t, f.addr, "GET http://mute.test:7000/ HTTP/1.1\r\nHost: mute.test:7000\r\n\r\n")
			c.Close()
			if resp.StatusCode != 504 || body != tc.body {
				t.Errorf("= %d %q, want 504 %q", resp.StatusCode, body, tc.body)
			}
		})
	}
}
