package tlsprof

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"net"
	"testing"
)

// TestKeyLogWrite keeps the secrets of the NSS key-log lines crypto/tls
// writes, and ignores what it does not keep.
func TestKeyLogWrite(t *testing.T) {
	r := bytes.Repeat([]byte{7}, 32)
	rh := hex.EncodeToString(r)
	for _, tc := range []struct {
		name   string
		lines  string
		secret Secret
		want   string
	}{
		{"TLS 1.2", "CLIENT_RANDOM " + rh + " 00ff\n", MasterSecret, "00ff"},
		{"client handshake", "CLIENT_HANDSHAKE_TRAFFIC_SECRET " + rh + " 01\n", ClientHandshakeSecret, "01"},
		{"server handshake", "SERVER_HANDSHAKE_TRAFFIC_SECRET " + rh + " 02\n", ServerHandshakeSecret, "02"},
		{"client traffic", "CLIENT_TRAFFIC_SECRET_0 " + rh + " 03\n", ClientTrafficSecret, "03"},
		{"server traffic", "SERVER_TRAFFIC_SECRET_0 " + rh + " 04\n", ServerTrafficSecret, "04"},
		{"two lines in one write", "CLIENT_TRAFFIC_SECRET_0 " + rh + " 05\nSERVER_TRAFFIC_SECRET_0 " + rh + " 06\n", ServerTrafficSecret, "06"},
		{"a label not kept", "EXPORTER_SECRET " + rh + " 07\n", MasterSecret, ""},
		{"not hex", "CLIENT_RANDOM " + rh + " zz\n", MasterSecret, ""},
		{"short line", "CLIENT_RANDOM " + rh + "\n", MasterSecret, ""},
	} {
		var k KeyLog
		if n, err := k.Write([]byte(tc.lines)); n != len(tc.lines) || err != nil {
			t.Fatalf("%s: Write = %d, %v", tc.name, n, err)
		}
		if got := hex.EncodeToString(k.Secret(tc.secret)); got != tc.want {
			t.Errorf("%s: %s = %q, want %q", tc.name, tc.secret.Label(), got, tc.want)
		}
		if tc.want != "" && !bytes.Equal(k.ClientRandom(), r) {
			t.Errorf("%s: client random %x", tc.name, k.ClientRandom())
		}
	}
	var none *KeyLog
	if none.Secret(MasterSecret) != nil || none.ClientRandom() != nil || Secret(99).Label() != "" {
		t.Error("a nil key log or an unknown secret answered")
	}
}

// TestWithKeyLog: a connection's handshake over a HelloConn that keeps
// its keys yields the secrets the peer logs, through the profile SNI
// picks among several; the shared configurations are not changed, and a
// HelloConn that keeps none has none.
func TestWithKeyLog(t *testing.T) {
	p := newPKI(t)
	build := func(name string, def bool) *Built {
		b, err := (&ClientSSL{Name: "/Common/" + name, ServerName: name + ".example", SNIDefault: def, SNIRequire: !def,
			CertKeyChain: []CertKeyChain{p.chain(t, name, "ecdsa", name+".example")}}).Build()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := build("a", true), build("b", false)
	if a.SNIRequired() || !b.SNIRequired() || (*Built)(nil).SNIRequired() {
		t.Fatal("SNIRequired is not the profiles' sni-require")
	}
	vcfg, err := ForVirtual("/Common/vs", []*Built{a, b})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		sni     string
		version uint16
		keep    bool
		label   string
	}{
		{"b.example", tls.VersionTLS13, true, "SERVER_TRAFFIC_SECRET_0"},
		{"a.example", tls.VersionTLS12, true, "CLIENT_RANDOM"},
		{"b.example", tls.VersionTLS12, false, ""},
	} {
		sc, cc := loopbackPair(t)
		hc := NewHelloConn(sc, true)
		cfg := vcfg
		if tc.keep {
			cfg = WithKeyLog(vcfg, hc.KeepKeys())
		}
		var clientLog bytes.Buffer
		srv := tls.Server(hc, cfg)
		done := make(chan error, 1)
		go func() { done <- srv.Handshake() }()
		cl := tls.Client(cc, &tls.Config{ServerName: tc.sni, InsecureSkipVerify: true, MaxVersion: tc.version, KeyLogWriter: &clientLog})
		if err := cl.Handshake(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		k := Keys(srv)
		if !tc.keep {
			if k != nil || clientLog.Len() == 0 {
				t.Fatalf("%s: a connection not asked to keep its keys has a key log", tc.sni)
			}
		} else {
			var want KeyLog
			want.Write(clientLog.Bytes())
			for s := MasterSecret; s < numSecrets; s++ {
				if !bytes.Equal(k.Secret(s), want.Secret(s)) {
					t.Errorf("%s: %s differs from the client's", tc.sni, s.Label())
				}
			}
			if k.Secret(labelSecret(tc.label)) == nil {
				t.Errorf("%s: no %s", tc.sni, tc.label)
			}
		}
		if len(ClientRandom(srv)) != 32 {
			t.Errorf("%s: client random %x", tc.sni, ClientRandom(srv))
		}
		if tc.keep && !bytes.Equal(ClientRandom(srv), k.ClientRandom()) {
			t.Errorf("%s: the hello's random %x, the key log's %x", tc.sni, ClientRandom(srv), k.ClientRandom())
		}
		cl.Close()
		srv.Close()
	}
	if vcfg.KeyLogWriter != nil || a.Config.KeyLogWriter != nil || b.Config.KeyLogWriter != nil {
		t.Fatal("a shared configuration was given a connection's key log")
	}
}

func labelSecret(l string) Secret {
	for s := MasterSecret; s < numSecrets; s++ {
		if s.Label() == l {
			return s
		}
	}
	return -1
}

// loopbackPair is a connected pair of TCP sockets on 127.0.245.1.
func loopbackPair(t *testing.T) (server, client *net.TCPConn) {
	t.Helper()
	ln, err := net.ListenTCP("tcp", &net.TCPAddr{IP: net.IPv4(127, 0, 245, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.DialTCP("tcp", nil, ln.Addr().(*net.TCPAddr))
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.AcceptTCP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return s, c
}
