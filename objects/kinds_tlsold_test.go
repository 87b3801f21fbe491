package objects

import (
	"fmt"
	"strings"
	"testing"
)

// v12Config is a BIG-IP 12.1 style stapling configuration: the
// parameters named from a client-ssl profile's cert-key-chain entry, and
// a certificate-authority profile.
const v12Config = `sys file ssl-cert /Common/ca.crt { }
sys file ssl-cert /Common/site.crt { }
sys file ssl-key /Common/site.key { }
sys file ssl-crl /Common/ca.crl { }
net dns-resolver /Common/resolver {
    forward-zones {
        . {
            nameservers {
                10.1.1.2:53 { }
            }
        }
    }
}
ltm profile ocsp-stapling-params /Common/ocsp_params {
    cache-timeout 600
    dns-resolver /Common/resolver
    responder-url http://ocsp.example:8080
    sign-hash sha1
    status-age 0
    trusted-ca /Common/ca.crt
}
ltm profile client-ssl /Common/stapled {
    cert-key-chain {
        site {
            cert /Common/site.crt
            key /Common/site.key
            ocsp-stapling-params /Common/ocsp_params
        }
    }
    defaults-from /Common/clientssl
    ocsp-stapling enabled
}
ltm profile certificate-authority /Common/clients_ca {
    authenticate-depth 4
    ca-file /Common/ca.crt
    crl-file /Common/ca.crl
    defaults-from /Common/certificateauthority
    update-crl true
}
`

// A v12 configuration loads, lists and saves back the same, the
// stapling parameters acted on (no warning) and the certificate-authority
// profile kept with a warning that says what is not acted on.
func TestTLSOldRoundTrip(t *testing.T) {
	l := readAndCheck(v12Config)
	if err := l.Err(false); err != nil {
		t.Fatalf("refused: %v\n%v", err, l.Findings)
	}
	all := fmt.Sprint(l.Findings)
	if strings.Contains(all, "ocsp_params") || strings.Contains(all, "ocsp-stapling-params") {
		t.Errorf("the stapling parameters draw a warning: %v", l.Findings)
	}
	if !strings.Contains(all, "ltm profile certificate-authority /Common/clients_ca is kept and saved back; openltm does not act on it (kept: ") &&
		!strings.Contains(all, "ltm profile certificate-authority /Common/clients_ca is kept and saved back; openltm does not act on it (its ca-file, crl-file, authenticate-depth and update-crl authenticate no client") {
		t.Errorf("no warning for the certificate-authority profile that says why: %v", l.Findings)
	}
	c := Default.Builtins()
	for _, o := range l.Objects {
		c.Put(o)
	}
	if err := c.Complete(Default); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(Default); err != nil {
		t.Fatal(err)
	}
	p := c.Get(Default.Kind(ocspParamsKey), "/Common/ocsp_params")
	if p == nil || p.Str("sign-hash") != "sha1" || p.Str("trusted-ca") != "/Common/ca.crt" {
		t.Fatalf("params read as %+v", p)
	}
	text := c.Text()
	for _, want := range []string{"ocsp-stapling-params /Common/ocsp_params\n", "ltm profile ocsp-stapling-params /Common/ocsp_params {", "update-crl true"} {
		if !strings.Contains(text, want) {
			t.Errorf("saved text lacks %q:\n%s", want, text)
		}
	}
	l2 := readAndCheck(text)
	if err := l2.Err(false); err != nil {
		t.Fatalf("saved text refused: %v", err)
	}
	c2 := Default.Builtins()
	for _, o := range l2.Objects {
		c2.Put(o)
	}
	if err := c2.Complete(Default); err != nil {
		t.Fatal(err)
	}
	if text2 := c2.Text(); text2 != text {
		t.Errorf("save → load → save differs:\n%s\n---\n%s", text, text2)
	}
	// The parameters are in use: deleting them is refused.
	if refs := c2.Referrers(Default, c2.Get(Default.Kind(ocspParamsKey), "/Common/ocsp_params")); len(refs) == 0 {
		t.Errorf("the client-ssl profile does not hold its stapling parameters")
	}
}

// What BIG-IP refuses is refused, at its place.
func TestTLSOldRefused(t *testing.T) {
	for _, tc := range []struct {
		name, text, msg string
	}{
		{"unknown params", strings.Replace(v12Config, "ocsp-stapling-params /Common/ocsp_params\n", "ocsp-stapling-params /Common/nosuch\n", 1),
			"01020036:3: The requested OCSP stapling parameters (/Common/nosuch) was not found."},
		{"bad sign-hash", strings.Replace(v12Config, "sign-hash sha1", "sign-hash md5", 1), `"md5" is not a valid value for "sign-hash"`},
		{"bad timeout", strings.Replace(v12Config, "cache-timeout 600", "cache-timeout soon", 1), `"soon" is not a valid value for "cache-timeout"`},
		{"unknown property", strings.Replace(v12Config, "cache-timeout 600", "cache-lifetime 600", 1), `"cache-lifetime" unknown property`},
		{"missing resolver", strings.Replace(v12Config, "dns-resolver /Common/resolver\n    responder", "dns-resolver /Common/other\n    responder", 1), "(/Common/other) was not found"},
		{"bad depth", strings.Replace(v12Config, "authenticate-depth 4", "authenticate-depth deep", 1), `"deep" is not a valid value for "authenticate-depth"`},
		{"bad update-crl", strings.Replace(v12Config, "update-crl true", "update-crl sometimes", 1), `"sometimes" is not a valid value for "update-crl"`},
	} {
		l := readAndCheck(tc.text)
		if l.Err(false) == nil {
			t.Errorf("%s: loaded; BIG-IP refuses it", tc.name)
			continue
		}
		if all := fmt.Sprint(l.Findings.Refused()); !strings.Contains(all, tc.msg) {
			t.Errorf("%s: %s does not say %q", tc.name, all, tc.msg)
		}
	}
	// The commit checks: the proxy pool and the resolver.
	for _, tc := range []struct {
		name, old, new, msg string
	}{
		{"proxy without pool", "status-age 0", "status-age 0\n    use-proxy-server enabled", "use-proxy-server enabled requires a proxy-server-pool"},
		{"pool and resolver", "status-age 0", "status-age 0\n    proxy-server-pool /Common/proxies", "dns-resolver and proxy-server-pool exclude each other"},
		{"ldap url", "http://ocsp.example:8080", "ldap://ocsp.example/", `responder-url "ldap://ocsp.example/" is not an http:// or https:// URL`},
	} {
		text := "ltm pool /Common/proxies { }\n" + strings.Replace(v12Config, tc.old, tc.new, 1)
		l := readAndCheck(text)
		if err := l.Err(false); err != nil {
			t.Errorf("%s: refused on reading: %v", tc.name, err)
			continue
		}
		c := Default.Builtins()
		for _, o := range l.Objects {
			c.Put(o)
		}
		if err := c.Complete(Default); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		err := c.Validate(Default)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: validate says %v, want %q", tc.name, err, tc.msg)
		}
	}
}
