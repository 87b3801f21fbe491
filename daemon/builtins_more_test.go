package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestF5BuiltinsMoreCreate checks that tmsh create takes the F5 built-ins
// openltm now ships (objects/builtins_more.go) where it used to refuse them
// (01020036): a virtual on a wom tcp profile with a child of
// http-explicit, a client-ssl profile from wom-default-clientssl with the
// cipher group f5-default, a udp virtual on udp_decrement_ttl; that they
// list as BIG-IP lists them; that a built-in openltm does not ship (an APM
// iRule) is kept with a warning, not refused; and that http-explicit
// itself still needs a resolver, as on BIG-IP.
func TestF5BuiltinsMoreCreate(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{"create net dns-resolver r1 forward-zones { . { nameservers { 127.252.0.53:20053 { } } } }", "", ""},
		{"create ltm profile http xp defaults-from http-explicit explicit-proxy { dns-resolver r1 }", "", ""},
		{"create ltm virtual vx destination 127.252.1.10:23128 profiles replace-all-with { wom-tcp-wan-optimized xp }", "", ""},
		{"create ltm profile client-ssl cs defaults-from wom-default-clientssl ciphers none cipher-group f5-default", "", ""},
		{"create ltm pool p members add { 127.252.1.20:20080 }", "", ""},
		{"create ltm virtual vs destination 127.252.1.11:20443 pool p profiles replace-all-with { wam-tcp-lan-optimized http cs }", "", ""},
		{"create ltm virtual vu destination 127.252.1.12:20053 ip-protocol udp pool p profiles replace-all-with { udp_decrement_ttl }", "", ""},
		{"create ltm virtual vf destination 127.252.1.13:20081 pool p profiles replace-all-with { full-acceleration }", "", ""},
		{"create ltm rule r_private { when CLIENT_ACCEPTED { if { [class match [IP::client_addr] equals private_net] } { log local0. private } } }", "", ""},
		{"list ltm profile http http-explicit all-properties", "proxy-type explicit", ""},
		{"list ltm profile tcp wom-tcp-wan-optimized all-properties", "defaults-from tcp-wan-optimized", ""},
		{"list ltm profile tcp wom-tcp-wan-optimized all-properties", "send-buffer-size 458752", ""},
		{"list ltm cipher rule f5-secure", "cipher ECDHE:RSA:ECDHE_ECDSA:!SSLV3:!RC4:!EXP:!DES:!3DES", ""},
		{"list ltm profile udp udp_decrement_ttl all-properties", "ip-ttl-mode decrement", ""},
		{"list net port-list _sys_self_allow_tcp_defaults", "1029-1043 { }", ""},
		// f5-hw_keys names static-ECDH suites openltm's cipher table lacks.
		{"create ltm profile client-ssl cs_hw ciphers none cipher-group f5-hw_keys", "", ""},
		{"create ltm virtual vhw destination 127.252.1.16:20443 pool p profiles replace-all-with { tcp cs_hw }", "", "ECDH-RSA-AES256-GCM-SHA384"},
		// http-explicit names no resolver: refused as a resolver missing,
		// no longer as a profile that does not exist.
		{"create ltm virtual vbad destination 127.252.1.14:23128 profiles replace-all-with { tcp http-explicit }", "", "explicit-proxy { dns-resolver NAME }"},
	})
	// Built-ins cannot be deleted, shipped ones included.
	if _, err := run(t, s, "delete ltm profile http http-explicit"); err == "" {
		t.Fatal("delete of the built-in http-explicit was not refused")
	}
	// An APM iRule BIG-IP has and openltm does not ship: kept with the
	// warning that says why, not refused (01020036).
	out, err := run(t, s, "create ltm virtual vapm destination 127.252.1.15:20082 pool p rules { _sys_APM_activesync }")
	if err != "" {
		t.Fatalf("virtual naming _sys_APM_activesync refused: %s", err)
	}
	if !strings.Contains(out, "_sys_APM_activesync, which openltm does not act on (F5's APM iRule") {
		t.Fatalf("no kept-kind warning for _sys_APM_activesync: %q", out)
	}
	// A save leaves the unmodified built-ins out.
	text := e.Config().Text()
	for _, n := range []string{"ltm profile http /Common/http-explicit", "ltm profile tcp /Common/wom-tcp-wan-optimized", "ltm cipher group /Common/f5-default", "ltm data-group internal /Common/private_net"} {
		if strings.Contains(text, n) {
			t.Errorf("saved configuration holds the built-in %q", n)
		}
	}
}

// TestCABundleBuiltin checks that the built-in ca-bundle.crt is the
// system's CA bundle: SSL_CERT_FILE first, then the distributions' paths,
// an error that says what to do when there is none; and that a server-ssl
// profile whose ca-file is ca-bundle.crt serves a virtual.
func TestCABundleBuiltin(t *testing.T) {
	dir := t.TempDir()
	own := filepath.Join(dir, "own.pem")
	if err := os.WriteFile(own, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	saved := systemCABundles
	t.Cleanup(func() { systemCABundles = saved })
	for _, tc := range []struct {
		name, env string
		paths     []string
		want, err string
	}{
		{"SSL_CERT_FILE first", own, []string{"/etc/hosts"}, own, ""},
		{"SSL_CERT_FILE missing: the next", filepath.Join(dir, "nope.pem"), []string{filepath.Join(dir, "nope2"), own}, own, ""},
		{"a directory is no bundle", "", []string{dir, own}, own, ""},
		{"none", "", []string{filepath.Join(dir, "nope2")}, "", "give it a source-path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SSL_CERT_FILE", tc.env)
			systemCABundles = tc.paths
			got, err := systemCABundle()
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("systemCABundle() = %q, %v; want %q, %q", got, err, tc.want, tc.err)
			}
		})
	}
	systemCABundles = saved
	if _, err := systemCABundle(); err != nil {
		t.Skipf("this system has no CA bundle: %v", err)
	}
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	runSteps(t, s, []step{
		{"create ltm profile server-ssl sv defaults-from wom-default-serverssl ca-file ca-bundle.crt peer-cert-mode require", "", ""},
		{"create ltm pool p members add { 127.252.2.20:20443 }", "", ""},
		{"create ltm virtual v destination 127.252.2.10:20443 pool p profiles replace-all-with { tcp sv }", "", ""},
		{"list sys file ssl-cert ca-bundle.crt", "sys file ssl-cert ca-bundle.crt", ""},
	})
}
