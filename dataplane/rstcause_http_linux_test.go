//go:build linux

package dataplane

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// startHalfMember runs a member that answers each connection's first
// request (an HTTP head, or a line) with head and half of a body of n
// bytes, and then resets the connection (SO_LINGER 0) in the middle of
// its response.
func startHalfMember(t *testing.T, addr, head string, n int) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	t.Cleanup(func() { ln.Close(); <-done })
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c *net.TCPConn) {
				c.SetDeadline(time.Now().Add(10 * time.Second))
				br := bufio.NewReader(c)
				for { // the request: a line, or a head up to its blank line
					l, err := br.ReadString('\n')
					if err != nil {
						c.Close()
						return
					}
					if !strings.HasPrefix(l, "GET ") && !strings.Contains(l, ":") || l == "\r\n" {
						break
					}
				}
				io.WriteString(c, head+strings.Repeat("x", n/2))
				// The half has left before the reset: the proxy has
				// started the response when the reset comes.
				time.Sleep(50 * time.Millisecond)
				c.SetLinger(0)
				c.Close()
			}(c.(*net.TCPConn))
		}
	}()
}

// sendReset sends req from 127.57.0.1 and reads until the virtual ends
// the connection, which must be with a reset; it returns the virtual's
// and the client's addresses.
func sendReset(t *testing.T, vs, req string) (netip.AddrPort, netip.AddrPort) {
	t.Helper()
	c := dialFrom(t, "127.57.0.1", vs)
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	if req != "" {
		io.WriteString(c.c, req)
	}
	if _, err := io.Copy(io.Discard, c.c); !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("the client's connection ended with %v, not a reset", err)
	}
	return ap(vs), netip.MustParseAddrPort(c.c.LocalAddr().String())
}

// TestResetCauseMessages: the resets of HTTP and message virtuals the
// first reset-cause tests leave out each have their line: a member's
// reset in the middle of a response passed on to the client, a rule's
// runtime error in SERVER_DATA, HTTP_REQUEST_SEND and SERVER_CONNECTED,
// and the idle timeout; with the log off, none.
func TestResetCauseMessages(t *testing.T) {
	const body = 4000
	half := "127.57.0.50:80"
	startHalfMember(t, half, "HTTP/1.1 200 OK\r\nContent-Length: 4000\r\n\r\n", body)
	halfLine := "127.57.0.51:9000"
	startHalfMember(t, halfLine, "", body) // a line answered by half of one, no end
	echo := "127.57.0.52:9000"
	startServer(t, echo, "E1")
	web := "127.57.0.53:80"
	startHTTPServer(t, web, "W1")
	get := httpReq("a.example", "/")
	lines := func(vs string, m *MBLB, rule string, members ...string) *Config {
		cfg := mblbConfig(vs, m, members...)
		if rule != "" {
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
		}
		return cfg
	}
	delim := &MBLB{Request: mblb.Framing{Mode: mblb.Delimiter, Delimiter: []byte("\n")}}
	cases := []struct {
		name string
		vs   string
		cfg  func(vs string) *Config
		req  string
		want string
	}{
		{name: "http member reset mid-response", vs: "127.57.0.10:80",
			cfg:  func(vs string) *Config { return l7Config(t, vs, false, mblb.HTTPOptions{}, "", half) },
			req:  get,
			want: "[mblb:peer-rst] {peer} TCP RST from remote system"},
		{name: "http member reset mid-response, oneconnect", vs: "127.57.0.11:80",
			cfg:  func(vs string) *Config { return l7Config(t, vs, true, mblb.HTTPOptions{}, "", half) },
			req:  get,
			want: "[mblb:peer-rst] {peer} TCP RST from remote system"},
		{name: "http member reset mid-response, rules", vs: "127.57.0.12:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when HTTP_RESPONSE { set x 1 }`, half)
			},
			req:  get,
			want: "[mblb:peer-rst] {peer} TCP RST from remote system"},
		{name: "message member reset mid-response", vs: "127.57.0.13:9000",
			cfg:  func(vs string) *Config { return lines(vs, delim, "", halfLine) },
			req:  "hello\n",
			want: "[mblb:peer-rst] {peer} TCP RST from remote system"},
		{name: "message SERVER_DATA error", vs: "127.57.0.14:9000",
			cfg: func(vs string) *Config {
				return lines(vs, &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { TCP::release; TCP::notify request; TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { set x $nosuch }`, echo)
			},
			req:  "hello\n",
			want: "[mblb:tcl] TCL error"},
		{name: "http HTTP_REQUEST_SEND error", vs: "127.57.0.15:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when HTTP_REQUEST_SEND { set x $nosuch }`, web)
			},
			req:  get,
			want: "[mblb:tcl] TCL error"},
		{name: "http SERVER_CONNECTED error", vs: "127.57.0.16:80",
			cfg: func(vs string) *Config {
				return l7Config(t, vs, false, mblb.HTTPOptions{}, `when SERVER_CONNECTED { set x $nosuch }`, web)
			},
			req:  get,
			want: "[mblb:tcl] TCL error"},
		{name: "http idle timeout", vs: "127.57.0.17:80",
			cfg: func(vs string) *Config {
				cfg := l7Config(t, vs, false, mblb.HTTPOptions{}, "", web)
				cfg.Virtuals["/Common/vs"].IdleTimeout = time.Second
				return cfg
			},
			want: "[mblb:idle] Idle timeout (clientside)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			mustApply(t, p, tc.cfg(tc.vs))
			var got rstLines
			p.SetResetCauseLog(got.add)
			from, to := sendReset(t, tc.vs, tc.req)
			want := "01230140:6: RST sent from " + from.String() + " to " + to.String() + ", " + tc.want
			eventually(t, "the line "+want, func() bool {
				for _, l := range got.all() {
					if l == want {
						return true
					}
				}
				return false
			})
			if n := len(got.all()); n != 1 {
				t.Errorf("%d lines for one reset: %q", n, got.all())
			}
			// Off: the same reset is logged no more.
			p.SetResetCauseLog(nil)
			before := len(got.all())
			eventually(t, "the flows to end", func() bool { return p.table.Len() == 0 })
			sendReset(t, tc.vs, tc.req)
			if n := len(got.all()); n != before {
				t.Fatalf("with the log off, %d lines: %q", n-before, got.all()[before:])
			}
		})
	}
}
