package tlsprof

import (
	"crypto/tls"
	"sync/atomic"
	"testing"
	"time"
)

// serveAt is serve on a port of addr.
func serveAt(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	ln, err := tls.Listen("tcp", addr, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				if c.(*tls.Conn).Handshake() == nil {
					c.Write([]byte("ok"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestSessionLifetimes: a client-ssl ticket resumes until its lifetime
// (session-ticket-timeout) has passed since it was issued, and a
// server-ssl session is offered until its cache-timeout; past them, a
// full handshake, whose new session resumes again. The profiles' clock
// (tls.Config.Time, which crypto/tls reads too) is moved on rather than
// waited for.
func TestSessionLifetimes(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "life", "ecdsa", "life.example")
	for i, tc := range []struct {
		name           string
		version        uint16
		ticket, client time.Duration // ClientSSL.TicketLifetime, ServerSSL.CacheTimeout
	}{
		{"client-ssl ticket, TLS1.2", tls.VersionTLS12, time.Minute, 0},
		{"client-ssl ticket, TLS1.3", tls.VersionTLS13, time.Minute, 0},
		{"server-ssl cache, TLS1.2", tls.VersionTLS12, 0, time.Minute},
		{"server-ssl cache, TLS1.3", tls.VersionTLS13, 0, time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var skew atomic.Int64
			clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
			b, err := (&ClientSSL{Name: "/Common/c", CertKeyChain: []CertKeyChain{ck}, SessionTicket: true, TicketLifetime: tc.ticket}).Build()
			if err != nil {
				t.Fatal(err)
			}
			b.Config.Time = clock
			addr := serveAt(t, "127.5.5."+string(rune('1'+i))+":0", b.Config)
			ss, err := (&ServerSSL{Name: "/Common/s", SessionTicket: true, CacheSize: 16, CacheTimeout: tc.client}).Build()
			if err != nil {
				t.Fatal(err)
			}
			ss.Config.MinVersion, ss.Config.MaxVersion = tc.version, tc.version
			if tc.client > 0 {
				ss.Config.Time = clock
			}
			for j, step := range []struct {
				advance time.Duration
				resumed bool
			}{
				{0, false},               // the first handshake is full
				{0, true},                // resumed at once
				{59 * time.Second, true}, // within the lifetime
				{2 * time.Minute, false}, // past it
				{0, true},                // the new session resumes
			} {
				skew.Add(int64(step.advance))
				st, err := dial(addr, ss.Config)
				if err != nil {
					t.Fatalf("handshake %d: %v", j, err)
				}
				if st.DidResume != step.resumed {
					t.Fatalf("handshake %d, %v on: resumed %v, want %v", j, time.Duration(skew.Load()), st.DidResume, step.resumed)
				}
			}
		})
	}
}

// TestAuthenticateAlwaysBuild: authenticate always refuses a client's
// ticket only where the profile asks for a certificate (peer-cert-mode
// request or require), and keeps no member sessions only where the
// server-ssl profile verifies the member (require).
func TestAuthenticateAlwaysBuild(t *testing.T) {
	p := newPKI(t)
	ck := p.chain(t, "c", "rsa", "www.example")
	for _, tc := range []struct {
		mode    string
		refuses bool
	}{{"ignore", false}, {"request", true}, {"require", true}} {
		b, err := (&ClientSSL{Name: "/Common/c", CertKeyChain: []CertKeyChain{ck}, SessionTicket: true, PeerCertMode: tc.mode,
			CAFile: p.ca(t), AuthenticateAlways: true}).Build()
		if err != nil {
			t.Fatal(err)
		}
		if refuses := b.Config.UnwrapSession != nil; refuses != tc.refuses {
			t.Errorf("client-ssl peer-cert-mode %s: refuses tickets %v, want %v", tc.mode, refuses, tc.refuses)
		}
		if !tc.refuses || b.Config.UnwrapSession == nil {
			continue
		}
		if ss, err := b.Config.UnwrapSession(nil, tls.ConnectionState{}); ss != nil || err != nil {
			t.Errorf("client-ssl peer-cert-mode %s: a ticket read as %v, %v", tc.mode, ss, err)
		}
	}
	for _, tc := range []struct {
		mode   string
		always bool
		cached bool
	}{{"require", true, false}, {"require", false, true}, {"ignore", true, true}} {
		b, err := (&ServerSSL{Name: "/Common/s", SessionTicket: true, CacheSize: 10, PeerCertMode: tc.mode, CAFile: p.ca(t),
			AuthenticateAlways: tc.always}).Build()
		if err != nil {
			t.Fatal(err)
		}
		if cached := b.Config.ClientSessionCache != nil; cached != tc.cached {
			t.Errorf("server-ssl %s always=%v: session cache %v, want %v", tc.mode, tc.always, cached, tc.cached)
		}
	}
}
