package state

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/config"
)

func TestHTTPCountersRequest(t *testing.T) {
	for _, tc := range []struct {
		name string
		head httpx.Head
		// want: requests, get, post, head, other, v10, v11, keep-alive, close
		want [9]uint64
	}{
		{"GET 1.1", httpx.Head{Method: []byte("GET"), Minor: 1}, [9]uint64{1, 1, 0, 0, 0, 0, 1, 0, 0}},
		{"POST 1.1 close", httpx.Head{Method: []byte("POST"), Minor: 1, Close: true}, [9]uint64{1, 0, 1, 0, 0, 0, 1, 0, 1}},
		{"HEAD 1.0 keep-alive", httpx.Head{Method: []byte("HEAD"), KeepAlive: true}, [9]uint64{1, 0, 0, 1, 0, 1, 0, 1, 0}},
		{"PUT 1.1", httpx.Head{Method: []byte("PUT"), Minor: 1}, [9]uint64{1, 0, 0, 0, 1, 0, 1, 0, 0}},
		{"lower-case get is another method", httpx.Head{Method: []byte("get"), Minor: 1}, [9]uint64{1, 0, 0, 0, 1, 0, 1, 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c HTTPCounters
			c.Request(&tc.head)
			got := [9]uint64{c.Requests.Load(), c.Get.Load(), c.Post.Load(), c.Head.Load(), c.Other.Load(),
				c.V10.Load(), c.V11.Load(), c.KeepAlive.Load(), c.Close.Load()}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
			c.Reset()
			if c.Requests.Load() != 0 || c.Get.Load()+c.Post.Load()+c.Head.Load()+c.Other.Load() != 0 {
				t.Error("Reset left counts")
			}
		})
	}
}

func TestHTTPCountersResponse(t *testing.T) {
	for _, tc := range []struct {
		status, class int
	}{{100, 0}, {200, 1}, {206, 1}, {301, 2}, {404, 3}, {503, 4}, {599, 4}, {600, 5}, {0, 5}, {99, 5}} {
		t.Run(fmt.Sprint(tc.status), func(t *testing.T) {
			var c HTTPCounters
			c.Response(&httpx.Head{Status: tc.status})
			for i := range c.Resp {
				if want := uint64(0); i == tc.class {
					if c.Resp[i].Load() != 1 {
						t.Errorf("class %d not counted", i)
					}
				} else if c.Resp[i].Load() != want {
					t.Errorf("class %d counted", i)
				}
			}
		})
	}
}

// handshake runs a TLS handshake over a pipe with the client and server
// versions given (a client that checks the certificate when verify) and
// returns the server's conn and error.
func handshake(t *testing.T, cv, sv uint16, verify bool) (*tls.Conn, error) {
	t.Helper()
	cert := testCert(t)
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	srv := tls.Server(a, &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS10, MaxVersion: sv})
	cli := tls.Client(b, &tls.Config{InsecureSkipVerify: !verify, ServerName: "localhost", MinVersion: cv, MaxVersion: cv})
	done := make(chan struct{})
	go func() {
		cli.Handshake()
		close(done)
	}()
	err := srv.Handshake()
	if err != nil {
		a.Close()
	}
	<-done
	return srv, err
}

func TestSSLCountersNote(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cv, sv     uint16
		verify     bool
		version    int // index in Versions, -1 for a failure
		cipherSeen bool
		alerts     uint64
	}{
		{"TLS 1.3", tls.VersionTLS13, tls.VersionTLS13, false, 3, true, 0},
		{"TLS 1.2", tls.VersionTLS12, tls.VersionTLS13, false, 2, true, 0},
		{"TLS 1.1", tls.VersionTLS11, tls.VersionTLS13, false, 1, true, 0},
		{"TLS 1.0", tls.VersionTLS10, tls.VersionTLS13, false, 0, true, 0},
		{"TLS 1.3 client, 1.2 server", tls.VersionTLS13, tls.VersionTLS12, false, -1, false, 0},
		{"a client refusing the certificate", tls.VersionTLS13, tls.VersionTLS13, true, -1, false, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var c SSLCounters
			conn, err := handshake(t, tc.cv, tc.sv, tc.verify)
			if got := c.Note(conn, err); got != err {
				t.Fatalf("Note returned %v, want %v", got, err)
			}
			if tc.version < 0 {
				if c.Failures.Load() != 1 || c.Full.Load() != 0 || c.Alerts.Load() != tc.alerts {
					t.Errorf("failure (%v): failures %d full %d alerts %d", err, c.Failures.Load(), c.Full.Load(), c.Alerts.Load())
				}
				return
			}
			if err != nil || c.Full.Load() != 1 || c.Versions[tc.version].Load() != 1 || c.Failures.Load() != 0 {
				t.Errorf("err %v full %d versions %v", err, c.Full.Load(), &c.Versions)
			}
			var n uint64
			for i := range c.Ciphers {
				n += c.Ciphers[i].Load()
			}
			if (n == 1) != tc.cipherSeen {
				t.Errorf("%d cipher counts", n)
			}
			c.Reset()
			if c.Full.Load() != 0 || c.Versions[tc.version].Load() != 0 {
				t.Error("Reset left counts")
			}
		})
	}
}

func TestSSLCountersNoteWithoutTLS(t *testing.T) {
	var c SSLCounters
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	for _, tc := range []struct {
		conn               net.Conn
		err                error
		failures, timeouts uint64
	}{
		{a, nil, 0, 0}, // a side without TLS: nothing
		{nil, errors.New("tls: first record does not look like a TLS handshake"), 1, 0},
		{nil, fmt.Errorf("read: %w", os.ErrDeadlineExceeded), 2, 1},
		{nil, context.DeadlineExceeded, 3, 2},
	} {
		c.Note(tc.conn, tc.err)
		if c.Failures.Load() != tc.failures || c.Timeouts.Load() != tc.timeouts || c.Full.Load() != 0 {
			t.Errorf("%v: failures %d timeouts %d", tc.err, c.Failures.Load(), c.Timeouts.Load())
		}
	}
}

func TestConnCountersMaxAndReset(t *testing.T) {
	var c ConnCounters
	for _, cur := range []int64{1, 2, 3, 2, 1} {
		c.Opened(cur)
	}
	if c.Tot.Load() != 5 || c.Max.Load() != 3 {
		t.Errorf("tot %d max %d", c.Tot.Load(), c.Max.Load())
	}
	c.DgIn.Add(4)
	c.Reset(2)
	if c.Tot.Load() != 0 || c.Max.Load() != 2 || c.DgIn.Load() != 0 {
		t.Errorf("after reset: tot %d max %d in %d", c.Tot.Load(), c.Max.Load(), c.DgIn.Load())
	}
}

func TestCipherNames(t *testing.T) {
	seen := map[string]bool{}
	for i := 0; i < NumCiphers; i++ {
		n := CipherName(i)
		if seen[n] || n == "" || n[0] == '0' {
			t.Errorf("cipher %d: %q", i, n)
		}
		seen[n] = true
	}
}

func TestProfileCountingAllocatesNothing(t *testing.T) {
	var p ProfileCounters
	req := &httpx.Head{Method: []byte("PATCH"), Minor: 1, KeepAlive: true}
	resp := &httpx.Head{Status: 204}
	if n := testing.AllocsPerRun(100, func() {
		p.HTTP.Request(req)
		p.HTTP.Response(resp)
		p.Conns.Opened(1)
		p.Conns.DgIn.Add(1)
	}); n != 0 {
		t.Errorf("%v allocations per request", n)
	}
}

// testCert makes a throwaway self-signed ECDSA certificate for
// handshakes over pipes.
func testCert(t *testing.T) tls.Certificate {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: k}
}

// BenchmarkHTTPCounting is what an HTTP virtual adds per request and
// response: the http profile's counters.
func BenchmarkHTTPCounting(b *testing.B) {
	var p ProfileCounters
	req := &httpx.Head{Method: []byte("GET"), Minor: 1, KeepAlive: true}
	resp := &httpx.Head{Status: 200}
	b.ReportAllocs()
	for b.Loop() {
		p.HTTP.Request(req)
		p.HTTP.Response(resp)
	}
}

func TestClientSSLOfKeepsCountersByName(t *testing.T) {
	var p ProfileCounters
	for _, tc := range []struct {
		profiles []string
		same     map[int]string // index → the profile whose counters it must be
	}{
		{nil, nil},
		{[]string{"/Common/a"}, map[int]string{0: "/Common/a"}},
		{[]string{"/Common/b", "/Common/a"}, map[int]string{0: "/Common/b", 1: "/Common/a"}},
	} {
		var cfg *config.TLS
		if tc.profiles != nil {
			cfg = &config.TLS{ClientProfiles: tc.profiles}
		}
		got := p.ClientSSLOf(cfg)
		if len(got) != len(tc.profiles) {
			t.Fatalf("%v: %d counters", tc.profiles, len(got))
		}
		for i, name := range tc.same {
			if got[i] != p.ClientSSL(name) {
				t.Errorf("%v: counters %d are not %s's", tc.profiles, i, name)
			}
		}
	}
	p.ClientSSL("/Common/a").Full.Add(1)
	if p.ClientSSLOf(&config.TLS{ClientProfiles: []string{"/Common/a"}})[0].Full.Load() != 1 || p.ClientSSL("/Common/none") != nil {
		t.Error("a profile's counters are not kept, or one never had is made")
	}
}

func TestHTTPCountersConnEnded(t *testing.T) {
	for _, tc := range []struct {
		conns []uint64
		want  uint64
	}{
		{nil, 0},
		{[]uint64{1}, 1},
		{[]uint64{3, 1, 7, 2}, 7},
	} {
		var c HTTPCounters
		for _, n := range tc.conns {
			c.ConnEnded(n)
		}
		if got := c.MaxPerConn.Load(); got != tc.want {
			t.Errorf("%v: max %d, want %d", tc.conns, got, tc.want)
		}
	}
}
