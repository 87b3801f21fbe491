package daemon

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
)

// TestSSLC3DTranslate: what the commit refuses of ssl-c3d, and that a
// good pair is taken on standard and http virtuals.
func TestSSLC3DTranslate(t *testing.T) {
	pki := newTestPKI(t)
	leafCrt, leafKey := pki.leaf(t, "user", "user.example", false)
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	der, err := x509.MarshalPKCS8PrivateKey(pki.caKey)
	if err != nil {
		t.Fatal(err)
	}
	caKeyPath := pki.write(t, "ca.key", "PRIVATE KEY", der)
	mustRun(t, s,
		"create sys file ssl-cert ca.crt source-path file:"+pki.dir+"/ca.crt",
		"create sys file ssl-key ca.key source-path file:"+caKeyPath,
		"create sys file ssl-cert user.crt source-path file:"+leafCrt,
		"create sys file ssl-key user.key source-path file:"+leafKey,
		"create ltm pool p members add { 127.48.3.11:443 }",
		"create ltm profile client-ssl cs_c3d ssl-c3d enabled peer-cert-mode request ca-file ca.crt",
		"create ltm profile client-ssl cs_fb ssl-c3d enabled peer-cert-mode request ca-file ca.crt c3d-client-fallback-cert user.crt",
		"create ltm profile client-ssl cs_nofb ssl-c3d enabled c3d-client-fallback-cert nosuch.crt",
		"create ltm profile client-ssl cs_plain",
		"create ltm profile client-ssl cs_noocsp ssl-c3d enabled peer-cert-mode request c3d-ocsp nosuch_ocsp",
		"create sys crypto cert-validator ocsp users_ocsp responder-url http://127.48.3.53:8080",
		"create ltm profile client-ssl cs_ocsp ssl-c3d enabled peer-cert-mode request ca-file ca.crt c3d-ocsp users_ocsp c3d-drop-unknown-ocsp-status ignore",
		"create ltm profile client-ssl cs_fwd ssl-forward-proxy enabled proxy-ca-cert ca.crt proxy-ca-key ca.key ssl-c3d enabled",
		"create ltm profile server-ssl ss_fwd ssl-forward-proxy enabled ssl-c3d enabled c3d-ca-cert ca.crt c3d-ca-key ca.key",
	)
	const good = "ssl-c3d enabled c3d-ca-cert ca.crt c3d-ca-key ca.key"
	for i, tc := range []struct {
		name, server, profiles, want string
	}{
		{"good pair", good, "tcp cs_c3d ss", ""},
		{"good pair, http, fallback, lifespan, extensions", good + " c3d-cert-lifespan 2 c3d-cert-extension-includes { subject-alternative-name } c3d-cert-extension-custom-oids { 1.3.6.1.4.1.311.20.2 }", "tcp http cs_fb ss", ""},
		{"no client-ssl half", good, "tcp cs_plain ss", "needs a client-ssl profile with ssl-c3d enabled"},
		{"no client-ssl at all", good, "tcp ss", "needs a client-ssl profile with ssl-c3d enabled"},
		{"no server-ssl half", "", "tcp cs_c3d ss", "needs a server-ssl profile with ssl-c3d enabled"},
		{"no CA key", "ssl-c3d enabled c3d-ca-cert ca.crt", "tcp cs_c3d ss", "needs c3d-ca-cert and c3d-ca-key"},
		{"no CA", "ssl-c3d enabled", "tcp cs_c3d ss", "needs c3d-ca-cert and c3d-ca-key"},
		{"key of another certificate", "ssl-c3d enabled c3d-ca-cert ca.crt c3d-ca-key user.key", "tcp cs_c3d ss", "c3d-ca-key is not the key of c3d-ca-cert"},
		{"not a CA", "ssl-c3d enabled c3d-ca-cert user.crt c3d-ca-key user.key", "tcp cs_c3d ss", "is not a CA certificate"},
		{"missing CA file", "ssl-c3d enabled c3d-ca-cert nosuch.crt c3d-ca-key ca.key", "tcp cs_c3d ss", "ssl-cert nosuch.crt was not found"},
		{"unknown extension", good + " c3d-cert-extension-includes { frobnicate }", "tcp cs_c3d ss", `unknown extension "frobnicate"`},
		{"bad OID", good + " c3d-cert-extension-custom-oids { 1.x.3 }", "tcp cs_c3d ss", `"1.x.3" is not an object identifier`},
		{"lifespan 0", good + " c3d-cert-lifespan 0", "tcp cs_c3d ss", "c3d-cert-lifespan 0: hours from 1 to 8760"},
		{"missing fallback", good, "tcp cs_nofb ss", "ssl-cert nosuch.crt was not found"},
		{"c3d-ocsp", good, "tcp cs_ocsp ss", ""},
		{"missing c3d-ocsp validator", good, "tcp cs_noocsp ss", "cert-validator ocsp nosuch_ocsp was not found"},
		{"with the forward proxy", "", "tcp cs_fwd ss_fwd", "ssl-c3d and ssl-forward-proxy cannot both be enabled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := fmt.Sprintf("ss%d", i)
			mustRun(t, s, "create ltm profile server-ssl "+ss+" "+tc.server)
			profiles := strings.Replace(tc.profiles, " ss", " "+ss, 1)
			if strings.Contains(tc.profiles, "ss_fwd") {
				profiles = tc.profiles
			}
			vs := fmt.Sprintf("vs%d", i)
			_, err := run(t, s, fmt.Sprintf("create ltm virtual %s destination 127.48.3.10:%d pool p profiles replace-all-with { %s }", vs, 1000+i, profiles))
			switch {
			case tc.want == "" && err != "":
				t.Fatalf("refused: %s", err)
			case tc.want != "" && !strings.Contains(err, tc.want):
				t.Fatalf("error %q, want %q", err, tc.want)
			}
			if tc.want != "" {
				if out, _ := run(t, s, "list ltm virtual "+vs); strings.Contains(out, vs) {
					t.Fatalf("refused, yet created: %s", out)
				}
			} else {
				mustRun(t, s, "delete ltm virtual "+vs)
			}
		})
	}
}
