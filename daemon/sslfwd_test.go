package daemon

import (
	"crypto/x509"
	"fmt"
	"strings"
	"testing"
)

// TestSSLForwardProxyTranslate: what a virtual with the SSL forward
// proxy's profiles needs, refused with a clear message (and nothing
// changed) otherwise; a good pair goes in service.
func TestSSLForwardProxyTranslate(t *testing.T) {
	pki := newTestPKI(t)
	leafCrt, leafKey := pki.leaf(t, "origin", "origin.example", false)
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create sys file ssl-cert ca.crt source-path file:"+pki.dir+"/ca.crt",
		"create sys file ssl-cert origin.crt source-path file:"+leafCrt,
		"create sys file ssl-key origin.key source-path file:"+leafKey,
		"create ltm data-group internal hosts type string records add { bank.example { } }",
		"create ltm data-group internal nets type ip records add { 10.0.0.0/8 { } }",
		"create ltm pool p members add { 127.25.3.11:443 }",
		"create ltm profile server-ssl ss ssl-forward-proxy enabled",
		"create ltm profile server-ssl ss_plain",
		"create ltm profile server-ssl ss_bypass ssl-forward-proxy enabled ssl-forward-proxy-bypass enabled",
	)
	der, err := x509.MarshalPKCS8PrivateKey(pki.caKey)
	if err != nil {
		t.Fatal(err)
	}
	caKeyPath := pki.write(t, "ca.key", "PRIVATE KEY", der)
	mustRun(t, s, "create sys file ssl-key ca.key source-path file:"+caKeyPath)
	const good = "ssl-forward-proxy enabled proxy-ca-cert ca.crt proxy-ca-key ca.key"
	for i, tc := range []struct {
		name, client, profiles, want string
	}{
		{"good pair", good, "tcp cs ss", ""},
		{"no server-ssl half", good, "tcp cs ss_plain", "needs a server-ssl profile with ssl-forward-proxy enabled"},
		{"no client-ssl half", "", "tcp cs ss", "needs a client-ssl profile with ssl-forward-proxy enabled"},
		{"no CA key", "ssl-forward-proxy enabled proxy-ca-cert ca.crt", "tcp cs ss", "needs proxy-ca-cert and proxy-ca-key"},
		{"key of another certificate", "ssl-forward-proxy enabled proxy-ca-cert ca.crt proxy-ca-key origin.key", "tcp cs ss", "proxy-ca-key is not the key of proxy-ca-cert"},
		{"not a CA", "ssl-forward-proxy enabled proxy-ca-cert origin.crt proxy-ca-key origin.key", "tcp cs ss", "is not a CA certificate"},
		{"bypass on one side", good + " ssl-forward-proxy-bypass enabled", "tcp cs ss", "ssl-forward-proxy-bypass is enabled on client-ssl profile"},
		{"bypass on both", good + " ssl-forward-proxy-bypass enabled hostname-whitelist hosts destination-ip-blacklist nets", "tcp cs ss_bypass", ""},
		{"hostname list of addresses", good + " ssl-forward-proxy-bypass enabled hostname-whitelist nets", "tcp cs ss_bypass", "data group /Common/nets is of type ip; this list takes a data group of type string"},
		{"address list of names", good + " ssl-forward-proxy-bypass enabled source-ip-whitelist hosts", "tcp cs ss_bypass", "data group /Common/hosts is of type string; this list takes a data group of type ip"},
		{"missing data group", good + " ssl-forward-proxy-bypass enabled hostname-blacklist nosuch", "tcp cs ss_bypass", "ltm data-group internal nosuch was not found"},
		{"unknown extension", good + " cert-extension-includes { frobnicate }", "tcp cs ss", `unknown extension "frobnicate"`},
		{"http virtual", good, "tcp http cs ss", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := fmt.Sprintf("cs%d", i)
			mustRun(t, s, "create ltm profile client-ssl "+cs+" "+tc.client)
			profiles := strings.Replace(tc.profiles, "cs", cs, 1)
			vs := fmt.Sprintf("vs%d", i)
			_, err := run(t, s, fmt.Sprintf("create ltm virtual %s destination 127.25.3.10:%d pool p profiles replace-all-with { %s }", vs, 1000+i, profiles))
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
