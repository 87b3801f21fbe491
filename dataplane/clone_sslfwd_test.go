package dataplane

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TestClonePoolSSLForward: a standard virtual with the SSL forward proxy
// (no http profile) copies to its clone pools, clientside and serverside
// alike, the client's bytes as decrypted when it intercepts the
// connection (openltm's choice, as on client-ssl virtuals [M]), and the
// client's TLS records as they came (its hello first) when it bypasses
// it; the client talks to the origin either way.
func TestClonePoolSSLForward(t *testing.T) {
	proxyCA, proxyKey, proxyRoots := testCert(t, "Proxy CA")
	mcert, mkey, memberRoots := testCert(t, "www.origin.test", "origin.test")
	startTLSServer(t, "127.202.60.11:28443", "S1", mcert, mkey)
	for i, tc := range []struct {
		name        string
		bypass      *sslfwd.Bypass
		intercepted bool
	}{
		{"intercepted", nil, true},
		{"bypassed", &sslfwd.Bypass{HostBypass: []string{"origin.test"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := fmt.Sprintf("127.202.60.%d:28443", i+1)
			cs := startCloneCollector(t, fmt.Sprintf("127.202.60.%d:29001", 21+2*i))
			ss := startCloneCollector(t, fmt.Sprintf("127.202.60.%d:29001", 22+2*i))
			p, _ := newPlane(t)
			cfg := basic(vs, "127.202.60.11:28443")
			cfg.Virtuals["/Common/vs"].TLS = forwardTLS(t, proxyCA, proxyKey, tlsprof.ServerSSL{Name: "/Common/ss", AuthenticateDepth: -1}, tc.bypass, sslfwd.Config{})
			withClone(cfg, "/Common/cs", false, fmt.Sprintf("127.202.60.%d:29001", 21+2*i))
			withClone(cfg, "/Common/ss", true, fmt.Sprintf("127.202.60.%d:29001", 22+2*i))
			mustApply(t, p, cfg)
			roots := proxyRoots
			if !tc.intercepted {
				roots = memberRoots
			}
			answer, _, err := fwdAsk(vs, "www.origin.test", roots, "")
			if err != nil || answer != "S1 Response tls\n" {
				t.Fatalf("through the virtual: %q, %v", answer, err)
			}
			for side, cc := range map[string]*cloneCollector{"clientside": cs, "serverside": ss} {
				got := cc.wait(t, 1)[0]
				switch {
				case tc.intercepted && got != "hello\n":
					t.Errorf("%s clone got %q, want the client's plaintext", side, got)
				case !tc.intercepted && (len(got) < 6 || got[0] != 0x16 || bytes.Contains([]byte(got), []byte("hello\n"))):
					t.Errorf("%s clone got %d bytes (%.6q), want the client's TLS records from its hello", side, len(got), got)
				}
			}
		})
	}
}
