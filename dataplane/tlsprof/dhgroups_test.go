package tlsprof

import (
	"bytes"
	"context"
	"crypto/tls"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDHGroupsResolve(t *testing.T) {
	t.Parallel()
	rule := func(name, groups string) *CipherRule {
		return &CipherRule{Name: "/Common/" + name, Cipher: "DEFAULT", DHGroups: groups}
	}
	for _, tc := range []struct {
		name  string
		g     CipherGroup
		want  []tls.CurveID // nil: Go's default
		warn  string
		error string
	}{
		{name: "all default", g: CipherGroup{Allow: []*CipherRule{rule("a", "DEFAULT"), rule("b", "")}}},
		{name: "one rule", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256:P384:X25519")}},
			want: []tls.CurveID{tls.CurveP256, tls.CurveP384, tls.X25519}},
		{name: "aliases and case", g: CipherGroup{Allow: []*CipherRule{rule("a", "prime256v1:secp384r1:x25519")}},
			want: []tls.CurveID{tls.CurveP256, tls.CurveP384, tls.X25519}},
		{name: "union of allow", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256"), rule("b", "X25519:P256")}},
			want: []tls.CurveID{tls.CurveP256, tls.X25519}},
		{name: "allow default with require", g: CipherGroup{Allow: []*CipherRule{rule("a", "DEFAULT")}, Restrict: []*CipherRule{rule("r", "P384:P521")}},
			want: []tls.CurveID{tls.CurveP384, tls.CurveP521}},
		{name: "require default narrows nothing", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256")}, Restrict: []*CipherRule{rule("r", "DEFAULT")}},
			want: []tls.CurveID{tls.CurveP256}},
		{name: "exclude", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256:P384:X25519")}, Exclude: []*CipherRule{rule("x", "X25519")}},
			want: []tls.CurveID{tls.CurveP256, tls.CurveP384}},
		{name: "exclude default removes nothing", g: CipherGroup{Allow: []*CipherRule{rule("a", "P384")}, Exclude: []*CipherRule{rule("x", "DEFAULT")}},
			want: []tls.CurveID{tls.CurveP384}},
		{name: "ffdhe left out", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256:FFDHE2048:FFDHE3072")}},
			want: []tls.CurveID{tls.CurveP256}, warn: "left out: FFDHE2048, FFDHE3072"},
		{name: "only ffdhe", g: CipherGroup{Allow: []*CipherRule{rule("a", "FFDHE2048")}}, error: "leave no key-exchange group"},
		{name: "required away", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256")}, Restrict: []*CipherRule{rule("r", "P384")}}, error: "leave no key-exchange group"},
		{name: "unknown", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256:brainpool")}}, error: `unknown group "brainpool"`},
		{name: "empty name", g: CipherGroup{Allow: []*CipherRule{rule("a", "P256::P384")}}, error: "empty name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.g.Name = "/Common/g"
			got, warns, err := tc.g.curves()
			if tc.error != "" {
				if err == nil || !strings.Contains(err.Error(), tc.error) {
					t.Fatalf("error %v, want %q", err, tc.error)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("groups %v, want %v", got, tc.want)
			}
			if w := strings.Join(warns, "\n"); tc.warn == "" && w != "" || !strings.Contains(w, tc.warn) {
				t.Errorf("warnings %q, want %q", w, tc.warn)
			}
		})
	}
}

// TestDHGroupsHandshake: a cipher group's dh-groups decide the key
// exchange a client-ssl profile agrees to and the one a server-ssl
// profile offers, in TLS 1.3 and TLS 1.2 (ECDHE).
func TestDHGroupsHandshake(t *testing.T) {
	t.Parallel()
	p := newPKI(t)
	ck := p.chain(t, "rsa", "rsa", "www.example")
	roots := p.ca(t).Pool()
	group := func(groups string) *CipherGroup {
		return &CipherGroup{Name: "/Common/g", Allow: []*CipherRule{{Name: "/Common/r", Cipher: "DEFAULT", DHGroups: groups}}}
	}
	for _, tc := range []struct {
		name   string
		groups string
		client []tls.CurveID
		max    uint16
		want   tls.CurveID
		fail   bool
	}{
		{name: "1.3 P384 only, client offers it", groups: "P384", client: []tls.CurveID{tls.X25519, tls.CurveP384}, want: tls.CurveP384},
		{name: "1.3 P384 only, client lacks it", groups: "P384", client: []tls.CurveID{tls.X25519, tls.CurveP256}, fail: true},
		{name: "1.3 X25519", groups: "X25519:P521", client: []tls.CurveID{tls.CurveP256, tls.X25519}, want: tls.X25519},
		{name: "1.2 ECDHE on P521", groups: "P521", client: []tls.CurveID{tls.X25519, tls.CurveP521}, max: tls.VersionTLS12, want: tls.CurveP521},
		{name: "1.2 no common curve", groups: "P521", client: []tls.CurveID{tls.X25519}, max: tls.VersionTLS12, fail: true},
		{name: "default", groups: "DEFAULT", client: []tls.CurveID{tls.CurveP521}, want: tls.CurveP521},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, CipherGroup: group(tc.groups)}).Build()
			if err != nil {
				t.Fatal(err)
			}
			addr := serveAt(t, "127.113.1.1:0", b.Config)
			cc := &tls.Config{RootCAs: roots, ServerName: "www.example", CurvePreferences: tc.client, MaxVersion: tc.max,
				CipherSuites: []uint16{tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256}}
			st, err := dial(addr, cc)
			if tc.fail {
				if err == nil {
					t.Fatalf("handshake succeeded with %s", GroupName(st.CurveID))
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.CurveID != tc.want {
				t.Errorf("group %s, want %s", GroupName(st.CurveID), GroupName(tc.want))
			}
		})
	}
	t.Run("server-ssl offers its groups", func(t *testing.T) {
		for _, tc := range []struct {
			groups string
			server []tls.CurveID
			want   tls.CurveID
			fail   bool
		}{
			{groups: "P384", server: []tls.CurveID{tls.CurveP384, tls.X25519}, want: tls.CurveP384},
			{groups: "P384", server: []tls.CurveID{tls.X25519}, fail: true},
			{groups: "P256:X25519", server: []tls.CurveID{tls.CurveP256}, want: tls.CurveP256},
		} {
			b, err := (&ServerSSL{Name: "/Common/ss", CipherGroup: group(tc.groups)}).Build()
			if err != nil {
				t.Fatal(err)
			}
			addr := serveAt(t, "127.113.1.2:0", &tls.Config{Certificates: []tls.Certificate{mustPair(t, ck)}, CurvePreferences: tc.server})
			st, err := dial(addr, b.Config)
			if tc.fail != (err != nil) {
				t.Fatalf("%s against %v: %v", tc.groups, tc.server, err)
			}
			if !tc.fail && st.CurveID != tc.want {
				t.Errorf("%s against %v: group %s, want %s", tc.groups, tc.server, GroupName(st.CurveID), GroupName(tc.want))
			}
		}
	})
}

// TestDHGroupsOpenSSL: openssl s_client -groups against a client-ssl
// profile whose cipher group allows P-384 only.
func TestDHGroupsOpenSSL(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("openssl"); err != nil {
		t.Skip("openssl is not installed")
	}
	p := newPKI(t)
	ck := p.chain(t, "rsa", "rsa", "www.example")
	g := &CipherGroup{Name: "/Common/g", Allow: []*CipherRule{{Name: "/Common/r", Cipher: "DEFAULT", DHGroups: "P384"}}}
	b, err := (&ClientSSL{Name: "/Common/cs", CertKeyChain: []CertKeyChain{ck}, CipherGroup: g}).Build()
	if err != nil {
		t.Fatal(err)
	}
	addr := serveAt(t, "127.113.1.3:0", b.Config)
	for _, tc := range []struct {
		args []string
		want string // "": refused
	}{
		{[]string{"-tls1_3", "-groups", "X25519:P-384"}, "P-384"},
		{[]string{"-tls1_3", "-groups", "X25519:P-256"}, ""},
		{[]string{"-tls1_2", "-curves", "P-256:P-384"}, "P-384"},
		{[]string{"-tls1_2", "-curves", "X25519"}, ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		cmd := exec.CommandContext(ctx, "openssl", append([]string{"s_client", "-connect", addr, "-servername", "www.example"}, tc.args...)...)
		cmd.Stdin = strings.NewReader("")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		got := out.String()
		if tc.want == "" {
			if err == nil && strings.Contains(got, "Server Temp Key") {
				t.Errorf("%v: handshake succeeded\n%s", tc.args, got)
			}
			continue
		}
		// OpenSSL 3.0 prints the curve's SECG name, later ones the NIST name.
		if !strings.Contains(got, "Server Temp Key: ECDH, "+tc.want) && !strings.Contains(got, "Server Temp Key: ECDH, secp384r1") {
			t.Errorf("%v: want Server Temp Key %s\n%s", tc.args, tc.want, got)
		}
	}
}

func TestCipherGroupOrdering(t *testing.T) {
	t.Parallel()
	rule := &CipherRule{Name: "/Common/r", Cipher: "ECDHE-RSA-AES256-SHA:ECDHE-RSA-CHACHA20-POLY1305:AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:DES-CBC3-SHA"}
	for _, tc := range []struct {
		ordering string
		want     []string
		error    bool
	}{
		{"default", []string{"ECDHE-RSA-AES256-SHA", "ECDHE-RSA-CHACHA20-POLY1305", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "DES-CBC3-SHA"}, false},
		{"", []string{"ECDHE-RSA-AES256-SHA", "ECDHE-RSA-CHACHA20-POLY1305", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "DES-CBC3-SHA"}, false},
		{"strength", []string{"ECDHE-RSA-AES256-SHA", "ECDHE-RSA-CHACHA20-POLY1305", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "DES-CBC3-SHA"}, false},
		{"speed", []string{"ECDHE-RSA-AES128-GCM-SHA256", "AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-AES256-SHA", "DES-CBC3-SHA"}, false},
		{"fips", []string{"ECDHE-RSA-AES256-SHA", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "DES-CBC3-SHA", "ECDHE-RSA-CHACHA20-POLY1305"}, false},
		{"hardware", []string{"ECDHE-RSA-AES256-SHA", "AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "DES-CBC3-SHA"}, false},
		{"fastest", nil, true},
	} {
		g := &CipherGroup{Name: "/Common/g", Allow: []*CipherRule{rule}, Ordering: tc.ordering}
		got, groups, err := g.Describe()
		if tc.error {
			if err == nil || !strings.Contains(err.Error(), "ordering") {
				t.Errorf("%s: error %v", tc.ordering, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n got %v\nwant %v", tc.ordering, got, tc.want)
		}
		if !slices.Equal(groups, []string{"DEFAULT"}) {
			t.Errorf("%s: groups %v", tc.ordering, groups)
		}
	}
}
