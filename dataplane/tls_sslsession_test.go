package dataplane

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// sessionAsk connects from src to vs over TLS (version, a session cache
// for resumption), sends a line, and returns the member's answer and
// whether the session resumed.
func sessionAsk(t *testing.T, src, vs string, roots *x509.CertPool, cache tls.ClientSessionCache, version uint16) (string, bool, error) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 5 * time.Second}
	c, err := tls.DialWithDialer(d, "tcp", vs, &tls.Config{ServerName: "app.example", RootCAs: roots,
		ClientSessionCache: cache, MinVersion: version, MaxVersion: version})
	if err != nil {
		return "", false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "hello\n"); err != nil {
		return "", false, err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return strings.TrimSpace(line), c.ConnectionState().DidResume, err
}

// TestSSLSessionInvalidate: a rule's SSL::session invalidate keeps the
// client's session from resuming (its ticket gets a full handshake),
// while the sessions of clients it leaves alone resume as before;
// SSL::sessionticket reads the ticket the handshake issued (or, on a
// TLS 1.2 resumption that issues none, the one the client resumed with).
func TestSSLSessionInvalidate(t *testing.T) {
	startServer(t, "127.120.1.11:9000", "P")
	p, _ := newPlane(t)
	cfg := basic("127.120.1.10:443", "127.120.1.11:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENTSSL_HANDSHAKE {
    set tk [SSL::sessionticket]
    if { [IP::client_addr] eq "127.120.1.3" } { SSL::session invalidate }
}
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA {
    TCP::payload replace 0 0 "ticket=[expr {[string length $tk] > 32 && [string is xdigit $tk]}]|"
    TCP::release
}`)
	roots := clientSSLOn(t, cfg.Virtuals["/Common/vs"], true)
	mustApply(t, p, cfg)

	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range []struct {
			src     string
			resumes bool
		}{
			{"127.120.1.2", true},
			{"127.120.1.3", false},
		} {
			cache := tls.NewLRUClientSessionCache(4)
			for i := range 3 {
				line, resumed, err := sessionAsk(t, tc.src, "127.120.1.10:443", roots, cache, version)
				if err != nil {
					t.Fatalf("%x from %s, connection %d: %v", version, tc.src, i, err)
				}
				if line != "ticket=1|P Response" {
					t.Fatalf("%x from %s, connection %d: %q, want the ticket read", version, tc.src, i, line)
				}
				if want := tc.resumes && i > 0; resumed != want {
					t.Fatalf("%x from %s, connection %d: resumed %v, want %v", version, tc.src, i, resumed, want)
				}
			}
		}
	}
	if n := cfg.Virtuals["/Common/vs"].TLS.ClientBuilt[0].Invalidated(); n == 0 {
		t.Fatal("the profile holds no invalidated session")
	}
}

// TestSSLSessionCommandsErrors: the commands' misuse is the rule's Tcl
// error, which catch sees.
func TestSSLSessionCommandsErrors(t *testing.T) {
	startServer(t, "127.120.1.21:9000", "P")
	p, _ := newPlane(t)
	cfg := basic("127.120.1.20:443", "127.120.1.21:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENTSSL_HANDSHAKE {
    set e1 [catch { SSL::handshake hold }]
    set e2 [catch { SSL::session drop }]
    set e3 [catch { SSL::unclean_shutdown maybe }]
    set e4 [catch { SSL::session invalidate }]
    set r [SSL::is_renegotiation_secure]
}
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::payload replace 0 0 "$e1$e2$e3$e4 r=$r|"; TCP::release }`)
	roots := clientSSLOn(t, cfg.Virtuals["/Common/vs"], false)
	mustApply(t, p, cfg)
	line, _, err := sessionAsk(t, "127.120.1.2", "127.120.1.20:443", roots, nil, tls.VersionTLS13)
	if err != nil {
		t.Fatal(err)
	}
	// Without tickets there is nothing to resume and nothing to refuse:
	// invalidate succeeds. Go's client offers secure renegotiation.
	if line != "1110 r=1|P Response" {
		t.Fatalf("got %q", line)
	}
}

// TestSSLHandshakeHold: a rule holds the client's handshake in
// CLIENTSSL_CLIENTHELLO and an `after` script resumes it: the handshake
// completes once resumed (CLIENTSSL_HANDSHAKE sees what the script set);
// a hold nobody resumes ends at the profile's handshake-timeout, and a
// script that rejects the held client resets it.
func TestSSLHandshakeHold(t *testing.T) {
	startServer(t, "127.120.2.11:9000", "P")
	p, _ := newPlane(t)
	cfg := basic("127.120.2.10:443", "127.120.2.11:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENTSSL_CLIENTHELLO {
    set resumed 0
    SSL::handshake hold
    switch -- [IP::client_addr] {
        127.120.2.2 { after 200 { set resumed 1; SSL::handshake resume } }
        127.120.2.4 { after 200 { reject } }
    }
}
when CLIENTSSL_HANDSHAKE { set r $resumed }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::payload replace 0 0 "resumed=$r|"; TCP::release }`)
	roots := clientSSLOn(t, cfg.Virtuals["/Common/vs"], false)
	cfg.Virtuals["/Common/vs"].TLS.HandshakeTimeout = 2 * time.Second
	mustApply(t, p, cfg)

	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		line, _, err := sessionAsk(t, "127.120.2.2", "127.120.2.10:443", roots, nil, version)
		if err != nil || line != "resumed=1|P Response" {
			t.Fatalf("%x resumed by after: %q %v", version, line, err)
		}
	}
	for _, src := range []string{"127.120.2.3", "127.120.2.4"} {
		if line, _, err := sessionAsk(t, src, "127.120.2.10:443", roots, nil, tls.VersionTLS13); err == nil {
			t.Fatalf("from %s: a held handshake nobody resumed completed: %q", src, line)
		}
	}
}

// eofConn notes whether the socket under a TLS client read its end of
// stream: crypto/tls stops reading the socket at a close_notify, so the
// socket's own EOF is read only when the peer closed without one.
type eofConn struct {
	net.Conn
	eof atomic.Bool
}

func (c *eofConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if errors.Is(err, io.EOF) {
		c.eof.Store(true)
	}
	return n, err
}

// TestSSLUncleanShutdown: SSL::unclean_shutdown enable makes the
// virtual's close toward the client a bare FIN, with no close_notify;
// disable (and no rule) keep close_notify.
func TestSSLUncleanShutdown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.120.3.11:9000")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) { // answers one line, then closes
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			io.WriteString(c, "bye\n")
		}
	})
	p, _ := newPlane(t)
	cfg := basic("127.120.3.10:443", "127.120.3.11:9000")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `
when CLIENTSSL_HANDSHAKE {
    switch -- [IP::client_addr] {
        127.120.3.2 { SSL::unclean_shutdown enable }
        127.120.3.3 { SSL::unclean_shutdown enable; SSL::unclean_shutdown disable }
    }
}`)
	roots := clientSSLOn(t, cfg.Virtuals["/Common/vs"], false)
	mustApply(t, p, cfg)
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		for _, tc := range []struct {
			src       string
			closeNote bool
		}{
			{"127.120.3.2", false},
			{"127.120.3.3", true},
			{"127.120.3.4", true},
		} {
			raw, err := (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(tc.src)}, Timeout: 5 * time.Second}).Dial("tcp", "127.120.3.10:443")
			if err != nil {
				t.Fatal(err)
			}
			raw.SetDeadline(time.Now().Add(10 * time.Second))
			ec := &eofConn{Conn: raw}
			c := tls.Client(ec, &tls.Config{ServerName: "app.example", RootCAs: roots, MinVersion: version, MaxVersion: version})
			io.WriteString(c, "hi\n")
			got, err := io.ReadAll(c)
			raw.Close()
			if err != nil || string(got) != "bye\n" {
				t.Fatalf("%x from %s: %q %v", version, tc.src, got, err)
			}
			if sawClose := !ec.eof.Load(); sawClose != tc.closeNote {
				t.Fatalf("%x from %s: close_notify %v, want %v", version, tc.src, sawClose, tc.closeNote)
			}
		}
	}
}

// TestSSLAllowDynamicRecordSizing: SSL::allow_dynamic_record_sizing, set
// in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO, makes one client's records
// start small although the profile sends full-size ones (and the reverse
// on a profile that sizes them dynamically); too late, in
// CLIENTSSL_HANDSHAKE, it is the rule's error, which catch sees.
func TestSSLAllowDynamicRecordSizing(t *testing.T) {
	blob := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KB
	ln, err := net.Listen("tcp", "127.120.4.11:9000")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			c.Write(blob)
		}
	})
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name    string
		profile bool // the profile's allow-dynamic-record-sizing
		rule    string
		dynamic bool
	}{
		{"profile", false, `when CLIENTSSL_HANDSHAKE { set x [SSL::allow_dynamic_record_sizing] }`, false},
		{"CLIENT_ACCEPTED", false, `when CLIENT_ACCEPTED { SSL::allow_dynamic_record_sizing 1 }`, true},
		{"CLIENTSSL_CLIENTHELLO", false, `when CLIENTSSL_CLIENTHELLO { SSL::allow_dynamic_record_sizing enable }`, true},
		{"off", true, `when CLIENTSSL_CLIENTHELLO { SSL::allow_dynamic_record_sizing 0 }`, false},
		{"late", false, `when CLIENTSSL_HANDSHAKE { if {![catch { SSL::allow_dynamic_record_sizing 1 }]} { reject } }`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cert, key, roots := testCert(t, "app.example")
			cfg := basic("127.120.4.10:443", "127.120.4.11:9000")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}},
				AuthenticateDepth: -1, DynamicRecordSizing: tc.profile}).Build()
			if err != nil {
				t.Fatal(err)
			}
			vc, err := tlsprof.ForVirtual("/Common/vs", []*tlsprof.Built{b})
			if err != nil {
				t.Fatal(err)
			}
			cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: vc, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b}}
			mustApply(t, p, cfg)
			raw, err := net.DialTimeout("tcp", "127.120.4.10:443", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			raw.SetDeadline(time.Now().Add(10 * time.Second))
			rl := &recordLens{Conn: raw}
			c := tls.Client(rl, &tls.Config{ServerName: "app.example", RootCAs: roots, MaxVersion: tls.VersionTLS12})
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			rl.lens = nil
			io.WriteString(c, "go\n")
			got := make([]byte, len(blob))
			if _, err := io.ReadFull(c, got); err != nil {
				t.Fatal(err)
			}
			if largest := slices.Max(rl.lens); (largest < 16000) != tc.dynamic {
				t.Fatalf("dynamic %v: largest record %d bytes of %d", tc.dynamic, largest, len(rl.lens))
			}
		})
	}
}
