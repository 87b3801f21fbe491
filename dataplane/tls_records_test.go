package dataplane

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// recordLens is a TLS client's socket noting the length of every record
// the virtual sent.
type recordLens struct {
	net.Conn
	buf  []byte
	lens []int
}

func (r *recordLens) Read(b []byte) (int, error) {
	n, err := r.Conn.Read(b)
	r.buf = append(r.buf, b[:n]...)
	for len(r.buf) >= 5 {
		l := int(r.buf[3])<<8 | int(r.buf[4])
		if len(r.buf) < 5+l {
			break
		}
		r.lens = append(r.lens, l)
		r.buf = r.buf[5+l:]
	}
	return n, err
}

// TestTLSMaximumRecordSize: with client-ssl's maximum-record-size no
// record a virtual sends its client is longer than the size and the
// AEAD's overhead, over TLS 1.2 and 1.3, on a standard virtual's event
// loop and goroutine flows and on an http virtual; at the default the
// same 64 KB answer goes in full-size records.
func TestTLSMaximumRecordSize(t *testing.T) {
	cert, key, roots := testCert(t, "rec.example")
	blob := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KB
	ln, err := net.Listen("tcp", "127.55.1.11:9000")
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, func(c net.Conn) {
		if _, err := bufio.NewReader(c).ReadString('\n'); err == nil {
			c.Write(blob)
		}
	})
	hln, err := net.Listen("tcp", "127.55.1.12:80")
	if err != nil {
		t.Fatal(err)
	}
	hs := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write(blob) })}
	go hs.Serve(hln)
	t.Cleanup(func() { hs.Close() })

	const overhead = 24 // TLS 1.2 GCM's nonce and tag; TLS 1.3's type and tag are less
	p, _ := newPlane(t)
	for _, tc := range []struct {
		name    string
		http    bool
		rule    string
		max     int
		version uint16
	}{
		{name: "standard loop", max: 1024, version: tls.VersionTLS13},
		{name: "standard loop", max: 1024, version: tls.VersionTLS12},
		{name: "standard loop", max: 0, version: tls.VersionTLS13},
		{name: "standard rule", rule: "when CLIENTSSL_HANDSHAKE { set x 1 }", max: 512, version: tls.VersionTLS13},
		{name: "standard rule", rule: "when CLIENTSSL_HANDSHAKE { set x 1 }", max: 512, version: tls.VersionTLS12},
		{name: "http", http: true, max: 4096, version: tls.VersionTLS13},
		{name: "http", http: true, max: 256, version: tls.VersionTLS12},
		{name: "http", http: true, max: 0, version: tls.VersionTLS12},
		{name: "http rule", http: true, rule: "when HTTP_REQUEST { set x 1 }", max: 2000, version: tls.VersionTLS13},
	} {
		t.Run(fmt.Sprintf("%s/max=%d/%s", tc.name, tc.max, tlsprof.VersionName(tc.version)), func(t *testing.T) {
			var cfg *Config
			if tc.http {
				cfg = mblbConfig("127.55.1.10:443", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.55.1.12:80")
			} else {
				cfg = basic("127.55.1.10:443", "127.55.1.11:9000")
			}
			b, err := (&tlsprof.ClientSSL{Name: "/Common/cs", CertKeyChain: []tlsprof.CertKeyChain{{Cert: cert, Key: key}}, AuthenticateDepth: -1, MaxRecordSize: tc.max}).Build()
			if err != nil {
				t.Fatal(err)
			}
			cfg.Virtuals["/Common/vs"].TLS = &TLS{Client: b.Config, ClientProfiles: []string{"/Common/cs"}, ClientBuilt: []*tlsprof.Built{b}, ClientMaxRecord: b.RecordLimit()}
			if tc.rule != "" {
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, tc.rule)
			}
			mustApply(t, p, cfg)
			raw, err := net.DialTimeout("tcp", "127.55.1.10:443", 2*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			raw.SetDeadline(time.Now().Add(10 * time.Second))
			rl := &recordLens{Conn: raw}
			c := tls.Client(rl, &tls.Config{ServerName: "rec.example", RootCAs: roots, MinVersion: tc.version, MaxVersion: tc.version})
			if err := c.Handshake(); err != nil {
				t.Fatal(err)
			}
			rl.lens = nil // the limit is the application data's [M]
			req := "go\n"
			if tc.http {
				req = "GET / HTTP/1.1\r\nHost: rec.example\r\n\r\n"
			}
			io.WriteString(c, req)
			var got []byte
			if tc.http {
				resp, err := http.ReadResponse(bufio.NewReader(c), nil)
				if err != nil {
					t.Fatal(err)
				}
				got, err = io.ReadAll(resp.Body)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				got = make([]byte, len(blob))
				if _, err := io.ReadFull(c, got); err != nil {
					t.Fatal(err)
				}
			}
			if !bytes.Equal(got, blob) {
				t.Fatalf("got %d bytes, not the member's 64 KB", len(got))
			}
			largest := slices.Max(rl.lens)
			if tc.max == 0 {
				if largest < 16384 {
					t.Fatalf("default maximum-record-size: largest record %d bytes, want full-size records", largest)
				}
				return
			}
			if largest > tc.max+overhead {
				t.Fatalf("maximum-record-size %d: a record of %d bytes (of %d records)", tc.max, largest, len(rl.lens))
			}
			if n := len(rl.lens); n < len(blob)/tc.max {
				t.Fatalf("maximum-record-size %d: %d records for 64 KB", tc.max, n)
			}
		})
	}
}
