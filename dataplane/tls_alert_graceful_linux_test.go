package dataplane

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestTLSAlertTimeoutGraceful: alert-timeout bounds the wait for the
// peer's close_notify on the closes of rule flows too: a rule's
// TCP::close (closeGraceful) and the end of a collecting side
// (collectEOF) toward a silent TLS client, and a client's end while its
// bytes are collected toward a silent TLS member. Past the timeout the
// peer is reset and the profile counts it.
func TestTLSAlertTimeoutGraceful(t *testing.T) {
	cert, key, _ := testCert(t, "alert.example")
	closer := "127.55.5.11:9000"
	startCloser(t, closer)
	silent := "127.55.5.12:9443"
	startSilentTLS(t, silent, cert, key)
	p, _ := newPlane(t)

	// silentClient reads the virtual's answer and close_notify, never
	// sends its own, and waits for the virtual's reset.
	silentClient := func(t *testing.T, vs, send string) {
		d := &net.Dialer{Timeout: 2 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.55.5.1")}}
		c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{InsecureSkipVerify: true})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if send != "" {
			io.WriteString(c, send)
		}
		b, err := io.ReadAll(c)
		if err != nil || string(b) != "bye\n" {
			t.Fatalf("the answer and close_notify: %q %v", b, err)
		}
		rc, err := c.NetConn().(*net.TCPConn).SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, "the virtual's reset", func() bool {
			var st uint8
			rc.Control(func(fd uintptr) {
				if info, err := unix.GetsockoptTCPInfo(int(fd), unix.IPPROTO_TCP, unix.TCP_INFO); err == nil {
					st = info.State
				}
			})
			return st == unix.BPF_TCP_CLOSE
		})
	}
	for i, tc := range []struct {
		name, rule string
		member     string
		server     bool // server-ssl with alert-timeout, a plaintext client
		run        func(t *testing.T, vs string)
	}{
		{name: "TCP::close", member: closer,
			rule: `when CLIENTSSL_HANDSHAKE { TCP::respond "bye\n"; TCP::close }`,
			run:  func(t *testing.T, vs string) { silentClient(t, vs, "") }},
		{name: "member's end while collected", member: closer,
			rule: "when SERVER_CONNECTED { TCP::collect }\nwhen SERVER_DATA { TCP::release; TCP::collect }",
			run:  func(t *testing.T, vs string) { silentClient(t, vs, "hello\n") }},
		{name: "client's end while collected, silent member", member: silent, server: true,
			rule: "when CLIENT_ACCEPTED { TCP::collect }\nwhen CLIENT_DATA { TCP::release; TCP::collect }",
			run: func(t *testing.T, vs string) {
				c := dialFrom(t, "127.55.5.1", vs)
				c.c.SetDeadline(time.Now().Add(10 * time.Second))
				io.WriteString(c.c, "hello\n")
				c.c.CloseWrite()
				if _, err := io.Copy(io.Discard, c.c); !errors.Is(err, syscall.ECONNRESET) {
					t.Fatalf("the client got %v, not a reset once the member's alert-timeout ran out", err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.55.5.10:%d", 443+i)
			cfg := basic(vs, tc.member)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			if tc.server {
				cfg.Virtuals["/Common/vs"].TLS = &TLS{Server: serverSSL(t), ServerProfile: "/Common/ss", ServerAlert: 200 * time.Millisecond}
			} else {
				cfg.Virtuals["/Common/vs"].TLS = clientSSL(t, cert, key)
				cfg.Virtuals["/Common/vs"].TLS.ClientAlert = 200 * time.Millisecond
			}
			mustApply(t, p, cfg)
			kind, name := ProfileClientSSL, "/Common/cs"
			if tc.server {
				kind, name = ProfileServerSSL, "/Common/ss"
			}
			before := p.ProfileStats(kind, name, []string{"/Common/vs"}).SSL.AlertTimeouts
			tc.run(t, vs)
			eventually(t, "the alert timeout counted", func() bool {
				return p.ProfileStats(kind, name, []string{"/Common/vs"}).SSL.AlertTimeouts > before
			})
		})
	}
}
