package tlsprof

import (
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"
)

// closeAs ends c, a handshaken TLS connection over raw, cleanly
// (close_notify, then FIN) or not (FIN alone).
func closeAs(c *tls.Conn, raw *net.TCPConn, clean bool) {
	if clean {
		c.CloseWrite()
	}
	raw.CloseWrite()
}

// TestClientSSLEnds: with unclean-shutdown disabled or strict-resume
// enabled, a client that ends without close_notify is counted and its
// session (the tickets of its lineage, resumed ones too) does not resume;
// one that sends close_notify resumes. Defaults watch nothing.
func TestClientSSLEnds(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "ends", "ecdsa", "ends.example")
	for i, tc := range []struct {
		name          string
		clean, strict bool
		version       uint16
		// the client's ends, in order; resumed is what each following
		// connection expects
		cleanEnds []bool
		resumed   []bool
		unclean   uint64
	}{
		{"defaults, TLS1.3", false, false, tls.VersionTLS13, []bool{false, false}, []bool{false, true, true}, 0},
		{"unclean-shutdown disabled, TLS1.3", true, false, tls.VersionTLS13, []bool{true, false, true}, []bool{false, true, false, true}, 1},
		{"unclean-shutdown disabled, TLS1.2", true, false, tls.VersionTLS12, []bool{true, false, true}, []bool{false, true, false, true}, 1},
		{"strict-resume, TLS1.3", false, true, tls.VersionTLS13, []bool{false, true, true}, []bool{false, false, true, true}, 1},
		{"strict-resume, TLS1.2", false, true, tls.VersionTLS12, []bool{false, false, true}, []bool{false, false, false, true}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := (&ClientSSL{Name: "/Common/c", CertKeyChain: []CertKeyChain{ck}, SessionTicket: true,
				CleanShutdown: tc.clean, StrictResume: tc.strict, TicketLifetime: time.Hour}).Build()
			if err != nil {
				t.Fatal(err)
			}
			if got := WatchesEnds(b); got != (tc.clean || tc.strict) {
				t.Fatalf("WatchesEnds = %v", got)
			}
			ln, err := net.Listen("tcp", fmt.Sprintf("127.13.26.%d:0", i+1))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			var count atomic.Uint64
			served := make(chan error, 1)
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.SetDeadline(time.Now().Add(5 * time.Second))
					var raw net.Conn = c
					cfg := b.Config
					var w *WatchConn
					if WatchesEnds(b) {
						w, cfg = WatchServer(c, cfg, []*Built{b})
						raw = w
					}
					s := tls.Server(raw, cfg)
					err = s.Handshake()
					if err == nil {
						if w := WatchOf(s); w != nil {
							w.Up(&count)
						}
						_, err = s.Write([]byte("hi"))
						if err == nil {
							_, err = io.Copy(io.Discard, s) // until close_notify or FIN
						}
					}
					c.Close()
					served <- err
				}
			}()
			cache := tls.NewLRUClientSessionCache(4)
			for j, want := range tc.resumed {
				rc, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				rc.SetDeadline(time.Now().Add(5 * time.Second))
				c := tls.Client(rc, &tls.Config{InsecureSkipVerify: true, ServerName: "ends.example",
					MinVersion: tc.version, MaxVersion: tc.version, ClientSessionCache: cache})
				buf := make([]byte, 2)
				if _, err := io.ReadFull(c, buf); err != nil { // the TLS 1.3 tickets come before it
					t.Fatalf("connection %d: %v", j, err)
				}
				if got := c.ConnectionState().DidResume; got != want {
					t.Errorf("connection %d: resumed %v, want %v", j, got, want)
				}
				if j < len(tc.cleanEnds) {
					closeAs(c, rc.(*net.TCPConn), tc.cleanEnds[j])
				} else {
					closeAs(c, rc.(*net.TCPConn), true)
				}
				if err := <-served; err != nil {
					t.Fatalf("connection %d: server: %v", j, err)
				}
				rc.Close()
			}
			if got := count.Load(); got != tc.unclean {
				t.Errorf("unclean shutdowns %d, want %d", got, tc.unclean)
			}
			if want := min(int(tc.unclean), 1); tc.strict || tc.clean {
				if b.Revoked() < want {
					t.Errorf("revoked %d sessions, want at least %d", b.Revoked(), want)
				}
			}
		})
	}
}

// TestServerSSLEnds: a member that ends without close_notify loses its
// session in the server-ssl profile's cache when the profile has
// unclean-shutdown disabled or strict-resume; otherwise it resumes.
func TestServerSSLEnds(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "member", "ecdsa", "member.example")
	cert, err := Pair("m", ck.Cert, ck.Key, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i, tc := range []struct {
		name          string
		clean, strict bool
		version       uint16
		memberClean   bool
		resumed       bool
		unclean       uint64
	}{
		{"defaults, member unclean", false, false, tls.VersionTLS13, false, true, 0},
		{"unclean-shutdown disabled, member clean", true, false, tls.VersionTLS13, true, true, 0},
		{"unclean-shutdown disabled, member unclean, TLS1.3", true, false, tls.VersionTLS13, false, false, 1},
		{"strict-resume, member unclean, TLS1.2", false, true, tls.VersionTLS12, false, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.13.27.%d:0", i+1))
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			member := &tls.Config{Certificates: []tls.Certificate{cert}}
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.SetDeadline(time.Now().Add(5 * time.Second))
					s := tls.Server(c, member)
					if s.Handshake() == nil {
						s.Write([]byte("hi"))
						closeAs(s, c.(*net.TCPConn), tc.memberClean)
						io.Copy(io.Discard, c)
					}
					c.Close()
				}
			}()
			b, err := (&ServerSSL{Name: "/Common/s", SessionTicket: true, CacheSize: 16, CacheTimeout: time.Hour,
				CleanShutdown: tc.clean, StrictResume: tc.strict}).Build()
			if err != nil {
				t.Fatal(err)
			}
			b.Config.MinVersion, b.Config.MaxVersion = tc.version, tc.version
			var count atomic.Uint64
			for j, want := range []bool{false, tc.resumed} {
				rc, err := net.Dial("tcp", ln.Addr().String())
				if err != nil {
					t.Fatal(err)
				}
				rc.SetDeadline(time.Now().Add(5 * time.Second))
				var raw net.Conn = rc
				if b.WatchesEnds() {
					raw = WatchClient(rc, b.Config, b)
				}
				c := tls.Client(raw, b.Config)
				if err := c.Handshake(); err != nil {
					t.Fatal(err)
				}
				if w := WatchOf(c); w != nil {
					w.Up(&count)
				}
				if got := c.ConnectionState().DidResume; got != want {
					t.Errorf("connection %d: resumed %v, want %v", j, got, want)
				}
				io.Copy(io.Discard, c) // the member's "hi" (and tickets), then its end
				c.Close()
			}
			if got := count.Load(); got != tc.unclean*2 {
				t.Errorf("unclean shutdowns %d, want %d", got, tc.unclean*2)
			}
		})
	}
}
