package daemon

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"layeh.com/radius"
)

// smtpServer is a minimal mail server on addr that greets, answers HELO
// and says goodbye to QUIT, until stop; start listens again on the same
// address, so a test can take the service away and bring it back.
type smtpServer struct {
	addr string
	mu   sync.Mutex
	ln   net.Listener
	wg   sync.WaitGroup
}

func (s *smtpServer) start(t *testing.T) {
	t.Helper()
	ln, err := net.Listen("tcp", s.addr)
	if err != nil {
		t.Skipf("no loopback listener on %s: %v", s.addr, err)
	}
	s.mu.Lock()
	s.ln, s.addr = ln, ln.Addr().String()
	s.mu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(10 * time.Second))
				fmt.Fprint(c, "220 mail.example ESMTP\r\n")
				r := bufio.NewReader(c)
				for i := 0; i < 16; i++ {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					switch cmd := strings.ToUpper(strings.Fields(line + " x")[0]); cmd {
					case "HELO", "EHLO":
						fmt.Fprint(c, "250 mail.example\r\n")
					case "QUIT":
						fmt.Fprint(c, "221 bye\r\n")
						return
					default:
						fmt.Fprint(c, "502 not here\r\n")
					}
				}
			}()
		}
	}()
}

func (s *smtpServer) stop() {
	s.mu.Lock()
	ln := s.ln
	s.ln = nil
	s.mu.Unlock()
	if ln != nil {
		ln.Close()
		s.wg.Wait()
	}
}

// radiusServer accepts every Access-Request with the secret on addr until
// stop; start serves on the same address again.
type radiusServer struct {
	addr string
	srv  *radius.PacketServer
	done chan struct{}
}

func (s *radiusServer) start(t *testing.T) {
	t.Helper()
	pc, err := net.ListenPacket("udp", s.addr)
	if err != nil {
		t.Skipf("no loopback UDP socket on %s: %v", s.addr, err)
	}
	s.addr = pc.LocalAddr().String()
	s.srv = &radius.PacketServer{SecretSource: radius.StaticSecretSource([]byte("s3cret")),
		Handler: radius.HandlerFunc(func(w radius.ResponseWriter, r *radius.Request) { w.Write(r.Response(radius.CodeAccessAccept)) })}
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(pc); err != nil && !errors.Is(err, radius.ErrServerShutdown) {
			t.Errorf("radius server: %v", err)
		}
	}()
}

func (s *radiusServer) stop() {
	if s.srv != nil {
		s.srv.Shutdown(context.Background())
		<-s.done
		s.srv = nil
	}
}

// gtpPeer answers GTP Echo Requests on addr (an Echo Response, the
// request with its message type changed) until stop; start serves on the
// same address again.
type gtpPeer struct {
	addr string
	pc   net.PacketConn
	done chan struct{}
}

func (p *gtpPeer) start(t *testing.T) {
	t.Helper()
	pc, err := net.ListenPacket("udp", p.addr)
	if err != nil {
		t.Skipf("no loopback UDP socket on %s: %v", p.addr, err)
	}
	p.pc, p.addr, p.done = pc, pc.LocalAddr().String(), make(chan struct{})
	go func() {
		defer close(p.done)
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if n >= 8 && buf[1] == 1 { // Echo Request
				buf[1] = 2 // Echo Response
				pc.WriteTo(buf[:n], from)
			}
		}
	}()
}

func (p *gtpPeer) stop() {
	if p.pc != nil {
		p.pc.Close()
		<-p.done
		p.pc = nil
	}
}

// A gtm pool whose members are watched by gtm smtp, radius and gtp
// monitors (each member its own):
// each member is offline, out of the wide IP's answers and named with its
// monitor in `show gtm pool`, while its service is stopped, and back when
// the service returns. The servers are real, on loopback.
func TestGTMAppMonitorsFollowServices(t *testing.T) {
	t.Parallel()
	smtp := &smtpServer{addr: "127.114.1.11:0"}
	smtp.start(t)
	t.Cleanup(smtp.stop)
	rad := &radiusServer{addr: "127.114.1.12:0"}
	rad.start(t)
	t.Cleanup(rad.stop)
	gtp := &gtpPeer{addr: "127.114.1.13:0"}
	gtp.start(t)
	t.Cleanup(gtp.stop)

	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create gtm monitor smtp mail_mon { defaults-from smtp domain gslb.example interval 1 timeout 6 probe-timeout 2 }",
		"create gtm monitor radius aaa_mon { defaults-from radius secret s3cret username probe password pw interval 1 timeout 6 probe-timeout 2 }",
		"create gtm monitor gtp pgw_mon { defaults-from gtp protocol-version 2 interval 1 timeout 6 probe-timeout 2 probe-attempts 1 }",
		"create gtm datacenter dc1",
		fmt.Sprintf("create gtm server lc1 datacenter dc1 addresses add { 127.114.1.10 } virtual-servers add { mail { destination %s } aaa { destination %s } pgw { destination %s } }", smtp.addr, rad.addr, gtp.addr),
		"create gtm pool a svc members add { lc1:mail { monitor mail_mon } lc1:aaa { monitor aaa_mon } lc1:pgw { monitor pgw_mon } } max-answers-returned 3",
		"create gtm wideip a svc.example.com pools add { svc }",
	} {
		if _, errText := run(t, s, cmd); errText != "" {
			t.Fatalf("%s: %s", cmd, errText)
		}
	}
	mailIP, aaaIP, pgwIP := strings.Split(smtp.addr, ":")[0], strings.Split(rad.addr, ":")[0], strings.Split(gtp.addr, ":")[0]
	answer := func() string { return ask(t, g, "svc.example.com", "127.114.1.5") }
	all := func() bool {
		a := answer()
		return strings.Contains(a, mailIP) && strings.Contains(a, aaaIP) && strings.Contains(a, pgwIP)
	}
	members := func() string {
		out, _ := run(t, s, "show gtm pool a svc members")
		return out
	}
	eventually(t, 30*time.Second, "all members up", all)

	for _, tc := range []struct {
		name       string
		stop, back func()
		down, up   string // the member's address, and the other's
		mon        string
	}{
		{"smtp", smtp.stop, func() { smtp.start(t) }, mailIP, aaaIP, "/Common/mail_mon"},
		{"radius", rad.stop, func() { rad.start(t) }, aaaIP, mailIP, "/Common/aaa_mon"},
		{"gtp", gtp.stop, func() { gtp.start(t) }, pgwIP, mailIP, "/Common/pgw_mon"},
	} {
		tc.stop()
		eventually(t, 30*time.Second, tc.name+" member out of the answers", func() bool {
			a := answer()
			return !strings.Contains(a, tc.down) && strings.Contains(a, tc.up)
		})
		if out := members(); !strings.Contains(out, "Pool member has been marked down by a monitor ("+tc.mon+":") {
			t.Errorf("%s stopped: show gtm pool does not name the monitor:\n%s", tc.name, out)
		}
		tc.back()
		eventually(t, 30*time.Second, tc.name+" member back in the answers", all)
	}
}
