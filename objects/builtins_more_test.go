package objects

import (
	"sort"
	"strings"
	"testing"
)

// TestF5BuiltinsResolve checks every F5 built-in of a kind openltm acts on
// (f5BuiltinList): each is shipped, or is one of those deliberately not
// shipped, listed here with its reason, and then resolves as a kept
// built-in (KeptBuiltin) with that reason in the warning. None is refused.
func TestF5BuiltinsResolve(t *testing.T) {
	notShipped := map[string]string{
		"cm device-group /Common/device_trust_group":                      "device trust group",
		"cm device-group /Common/gtm":                                     "GTM sync group",
		"ltm rule /Common/_sys_APM_ExchangeSupport_OA_BasicAuth":          "APM iRule",
		"ltm rule /Common/_sys_APM_ExchangeSupport_OA_NtlmAuth":           "APM iRule",
		"ltm rule /Common/_sys_APM_ExchangeSupport_helper":                "APM iRule",
		"ltm rule /Common/_sys_APM_ExchangeSupport_main":                  "APM iRule",
		"ltm rule /Common/_sys_APM_MS_Office_OFBA_Support":                "APM iRule",
		"ltm rule /Common/_sys_APM_Office365_SAML_BasicAuth":              "APM iRule",
		"ltm rule /Common/_sys_APM_activesync":                            "APM iRule",
		"ltm rule /Common/_sys_auth_krbdelegate":                          "Kerberos delegation",
		"sys file ssl-cert /Common/f5-ca-bundle.crt":                      "F5's own CA",
		"sys file ssl-cert /Common/f5-irule.crt":                          "signing",
		"sys log-config publisher /Common/default-ipsec-log-publisher":    "subsystems",
		"sys log-config publisher /Common/default-mgmt-acl-log-publisher": "subsystems",
		"sys log-config publisher /Common/local-db-publisher":             "subsystems",
		"sys log-config publisher /Common/sys-db-access-publisher":        "subsystems",
		"sys log-config publisher /Common/sys-sslo-publisher":             "subsystems",
		"sys log-config publisher /Common/sys-sso-access-publisher":       "subsystems",
	}
	b := Default.Builtins()
	seen := map[string]bool{}
	var kinds []string
	for kind := range f5Builtins() {
		kinds = append(kinds, kind)
	}
	sort.Strings(kinds)
	for _, kind := range kinds {
		k := Default.Kind(kind)
		if k == nil || k.Passive {
			continue // kept kinds: TestKeptRefs
		}
		for name := range f5Builtins()[kind] {
			key := kind + " " + name
			shipped := b.Lookup(Default, []string{kind}, name) != nil
			want, listed := notShipped[key]
			switch {
			case shipped && listed:
				t.Errorf("%s is shipped but listed as not shipped", key)
			case !shipped && !listed:
				t.Errorf("%s is neither shipped nor listed as deliberately not shipped", key)
			case listed:
				seen[key] = true
				why := unshippedWhy(kind, name)
				if !strings.Contains(why, want) {
					t.Errorf("%s: reason %q, want it to say %q", key, why, want)
				}
				ref := Ref{Spec: []string{kind}, Name: name}
				if got := KeptBuiltin(Default, ref); got != kind {
					t.Errorf("%s: KeptBuiltin = %q, want %q", key, got, kind)
				}
			}
		}
	}
	for key := range notShipped {
		if !seen[key] {
			t.Errorf("%s is listed as not shipped but is no F5 built-in of an acted-on kind", key)
		}
	}
	// No stale entry in unshippedBuiltins either.
	for kind, m := range unshippedBuiltins {
		for name := range m {
			if _, ok := notShipped[kind+" "+name]; !ok {
				t.Errorf("unshippedBuiltins has %s %s, which the test does not list", kind, name)
			}
		}
	}
}

// TestBuiltinsMoreValues checks the documented settings of the built-ins
// builtinMoreText ships, as Config.Effective gives them (what `list ...
// all-properties` prints).
func TestBuiltinsMoreValues(t *testing.T) {
	b := Default.Builtins()
	for _, tc := range []struct {
		kind, name, prop, want string
	}{
		{"ltm profile http", "/Common/http-explicit", "proxy-type", "explicit"},
		{"ltm profile http", "/Common/http-explicit", "insert-xforwarded-for", "disabled"}, // from /Common/http
		{"ltm profile http", "/Common/http-transparent", "proxy-type", "transparent"},
		{"ltm profile udp", "/Common/udp_decrement_ttl", "ip-ttl-mode", "decrement"},
		{"ltm profile udp", "/Common/udp_preserve_ttl", "ip-ttl-mode", "preserve"},
		{"ltm profile udp", "/Common/udp_preserve_ttl", "idle-timeout", "60"},
		{"ltm profile tcp", "/Common/wom-tcp-wan-optimized", "idle-timeout", "600"},
		{"ltm profile tcp", "/Common/wom-tcp-wan-optimized", "nagle", "enabled"},
		{"ltm profile tcp", "/Common/wom-tcp-wan-optimized", "send-buffer-size", "458752"},
		{"ltm profile tcp", "/Common/wom-tcp-wan-optimized", "defaults-from", "/Common/tcp-wan-optimized"},
		{"ltm profile tcp", "/Common/wam-tcp-lan-optimized", "init-cwnd", "16"},
		{"ltm profile tcp", "/Common/mptcp-mobile-optimized", "mptcp", "enabled"},
		{"ltm profile tcp", "/Common/mptcp-mobile-optimized", "congestion-control", "illinois"},
		{"ltm profile tcp", "/Common/splitsession-default-tcp", "zero-window-timeout", "300000"},
		{"ltm profile tcp", "/Common/apm-forwarding-client-tcp", "keep-alive-interval", "60"},
		{"ltm profile fastl4", "/Common/apm-forwarding-fastL4", "idle-timeout", "7200"},
		{"ltm profile fastl4", "/Common/full-acceleration", "idle-timeout", "300"},
		{"ltm profile web-acceleration", "/Common/optimized-acceleration", "cache-size", "6144"},
		{"ltm profile web-acceleration", "/Common/apm-enduser-if-cache", "cache-max-age", "36000"},
		// Shipped before with their parent's settings; F5's values since
		// (REST listings of a BIG-IP 14.1.2.1).
		{"ltm profile web-acceleration", "/Common/optimized-caching", "cache-max-age", "86400"},
		{"ltm profile web-acceleration", "/Common/optimized-caching", "cache-max-entries", "10000"},
		{"ltm profile web-acceleration", "/Common/optimized-caching", "cache-object-max-size", "2000000"},
		{"ltm profile web-acceleration", "/Common/optimized-caching", "cache-object-min-size", "0"},
		{"ltm profile web-acceleration", "/Common/optimized-caching", "cache-size", "10"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "allow-http-10", "enabled"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "buffer-size", "131072"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "gzip-memory-level", "16"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "gzip-window-size", "64"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "gzip-level", "1"},
		{"ltm profile http-compression", "/Common/wan-optimized-compression", "min-size", "1024"},
		// rewrite-portal: F5 lists it with /Common/rewrite's settings.
		{"ltm profile rewrite", "/Common/rewrite-portal", "rewrite-mode", "portal"},
		{"ltm profile rewrite", "/Common/rewrite-uri-translation", "rewrite-mode", "uri-translation"},
		// client-ssl and server-ssl listings of a BIG-IP 11.5.3, their
		// cipher strings with them (the parser takes SSLv2 as naming no
		// suite); clientssl-secure from F5's base configuration.
		{"ltm profile client-ssl", "/Common/clientssl-insecure-compatible", "secure-renegotiation", "request"},
		{"ltm profile client-ssl", "/Common/clientssl-insecure-compatible", "inherit-certkeychain", "true"},
		{"ltm profile client-ssl", "/Common/clientssl-insecure-compatible", "ciphers", "!SSLv2:ALL:!DH:!ADH:!EDH:@SPEED"},
		{"ltm profile server-ssl", "/Common/serverssl-insecure-compatible", "ciphers", "!SSLv2:!EXPORT:!DH:RSA+RC4:RSA+AES:RSA+DES:RSA+3DES:ECDHE+AES:ECDHE+3DES:@SPEED"},
		{"ltm profile client-ssl", "/Common/clientssl-secure", "ciphers", "ecdhe:rsa:!sslv3:!rc4:!exp:!des"},
		{"ltm profile client-ssl", "/Common/clientssl-secure", "renegotiation", "disabled"},
		{"ltm profile client-ssl", "/Common/clientssl-secure", "inherit-certkeychain", "true"},
		{"ltm profile client-ssl", "/Common/clientssl-secure", "secure-renegotiation", "require"},
		{"ltm profile client-ssl", "/Common/clientssl", "secure-renegotiation", "require"},
		{"ltm profile server-ssl", "/Common/serverssl-insecure-compatible", "secure-renegotiation", "request"},
		{"ltm profile server-ssl", "/Common/serverssl", "secure-renegotiation", "require-strict"},
		{"ltm profile client-ssl", "/Common/wom-default-clientssl", "allow-non-ssl", "enabled"},
		{"ltm profile server-ssl", "/Common/wom-default-serverssl", "defaults-from", "/Common/serverssl"},
		{"ltm cipher rule", "/Common/f5-secure", "cipher", "ECDHE:RSA:ECDHE_ECDSA:!SSLV3:!RC4:!EXP:!DES:!3DES"},
		{"ltm cipher rule", "/Common/f5-default", "dh-groups", "DEFAULT"},
		{"ltm cipher group", "/Common/f5-default", "ordering", "default"},
		{"ltm data-group internal", "/Common/images", "type", "string"},
	} {
		k := Default.Kind(tc.kind)
		o := b.Get(k, tc.name)
		if o == nil {
			t.Errorf("%s %s is not shipped", tc.kind, tc.name)
			continue
		}
		if !o.BuiltIn {
			t.Errorf("%s %s is not marked built in", tc.kind, tc.name)
		}
		v := b.Effective(o, tc.prop)
		got := ""
		if v != nil {
			got = v.Str
		}
		if got != tc.want {
			t.Errorf("%s %s %s = %q, want %q", tc.kind, tc.name, tc.prop, got, tc.want)
		}
	}
	for _, tc := range []struct {
		kind, name string
		items      []string
	}{
		{"ltm data-group internal", "/Common/private_net", []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"}},
		{"ltm data-group internal", "/Common/images", []string{".bmp", ".gif", ".jpg"}},
		{"net port-list", "/Common/_sys_self_allow_tcp_defaults", []string{"22", "53", "161", "443", "1029-1043", "4353"}},
		{"net port-list", "/Common/_sys_self_allow_udp_defaults", []string{"53", "161", "520", "1026", "4353"}},
		{"ltm profile client-ssl", "/Common/clientssl-secure", []string{"no-ssl", "no-tlsv1.3"}},
	} {
		o := b.Get(Default.Kind(tc.kind), tc.name)
		if o == nil {
			t.Errorf("%s %s is not shipped", tc.kind, tc.name)
			continue
		}
		text := Format(o, PrintOpts{})
		for _, it := range tc.items {
			if !strings.Contains(text, " "+it+" ") {
				t.Errorf("%s %s lacks %s:\n%s", tc.kind, tc.name, it, text)
			}
		}
	}
	aol := Format(b.Get(Default.Kind("ltm data-group internal"), "/Common/aol"), PrintOpts{})
	if n := strings.Count(aol, "{ }"); n != 14 {
		t.Errorf("aol has %d records, want F5's 14:\n%s", n, aol)
	}
}

// TestBuiltinsMoreSaveAndLoad checks that the new built-ins are left out of
// a save until modified, and that a bigip.conf naming them, or a kept
// one, reads with no finding but the kept one's warning.
func TestBuiltinsMoreSaveAndLoad(t *testing.T) {
	c := Default.Builtins()
	if text := c.Text(); strings.Contains(text, "http-explicit") || strings.Contains(text, "f5-default") || strings.Contains(text, "private_net") ||
		strings.Contains(text, "f5-tcp-progressive") || strings.Contains(text, "tcp-legacy") || strings.Contains(text, "optimized-caching") || strings.Contains(text, "clientssl-secure") {
		t.Fatalf("unmodified built-ins saved:\n%s", text)
	}
	o := c.Get(Default.Kind("ltm profile http"), "/Common/http-explicit")
	m := *o
	m.Props = map[string]*Value{}
	for k, v := range o.Props {
		m.Props[k] = v
	}
	m.Props["description"] = &Value{Str: "changed"}
	c.Put(&m)
	if text := c.Text(); !strings.Contains(text, "ltm profile http /Common/http-explicit {") {
		t.Fatalf("a modified built-in is not saved:\n%s", text)
	}

	l := Default.ReadText("bigip.conf", []byte(`ltm profile http /Common/proxy { defaults-from /Common/http-explicit }
ltm profile client-ssl /Common/cs { defaults-from /Common/wom-default-clientssl cipher-group /Common/f5-default }
ltm virtual /Common/v {
    destination /Common/10.1.1.1:443
    ip-protocol tcp
    profiles { /Common/wom-tcp-wan-optimized { } /Common/proxy { } /Common/cs { context clientside } }
    rules { /Common/_sys_APM_activesync }
}
ltm virtual /Common/u {
    destination /Common/10.1.1.1:53
    ip-protocol udp
    profiles { /Common/udp_decrement_ttl { } }
}
`), "/Common")
	l.CheckRefs(Default, Default.Builtins())
	var msgs []string
	for _, f := range l.Findings {
		msgs = append(msgs, f.Msg)
		if f.Category == Refused {
			t.Errorf("refused: %s", f.Msg)
		}
	}
	if len(msgs) != 1 || !strings.Contains(msgs[0], "refers to ltm rule /Common/_sys_APM_activesync, which openltm does not act on (F5's APM iRule") {
		t.Errorf("findings %q, want only the APM rule's kept warning", msgs)
	}
}

// TestBuiltinTCPValues checks every shipped tcp built-in against the
// REST listing of a BIG-IP 14.1.2.1 (ltm/profile/tcp), as Config.Effective
// gives them (what `list ... all-properties` prints and the daemon acts
// on): those openltm shipped first with /Common/tcp's settings
// (tcp-legacy, tcp-lan-optimized, the f5-tcp-* profiles, ...), and their
// children, whose values must not hang on their parents' new ones.
// Columns: see tcpCols; e is enabled, d disabled.
func TestBuiltinTCPValues(t *testing.T) {
	tcpCols := strings.Fields(`abc auto-proxy-buffer-size auto-receive-window-size auto-send-buffer-size
		cmetrics-cache congestion-control defaults-from delayed-acks early-retransmit ecn
		enhanced-loss-recovery fast-open idle-timeout init-cwnd init-rwnd keep-alive-interval
		minimum-rto mptcp nagle pkt-loss-ignore-burst proxy-buffer-high proxy-buffer-low
		proxy-mss proxy-options push-flag rate-pace receive-window-size reset-on-timeout
		selective-nack send-buffer-size slow-start syn-cookie-enable tail-loss-probe
		zero-window-timeout`)
	rows := map[string]string{
		"apm-forwarding-client-tcp": "e d d d e high-speed tcp-legacy e d d d d 300 3 3 60 1000 d e 0 49152 32768 e e default d 65535 e d 131072 d e d 20000",
		"apm-forwarding-server-tcp": "e d d d e high-speed tcp-legacy e d d d d 300 3 3 60 1000 d e 0 49152 32768 e e default d 65535 e d 131072 d e d 20000",
		"f5-tcp-lan":                "e d d d e high-speed tcp e e e e e 300 16 16 1800 200 d auto 0 65535 32768 e d default e 65535 e d 65535 e e e 20000",
		"f5-tcp-mobile":             "e d d d e woodside tcp e e e e e 300 16 10 1800 1000 d auto 0 262144 196608 e d default e 131072 e d 262144 e e e 20000",
		"f5-tcp-progressive":        "e e e e e woodside tcp e e e e e 300 16 16 1800 1000 d auto 0 262144 196608 e d auto e 131072 e d 262144 e e e 20000",
		"f5-tcp-wan":                "e d d d e woodside tcp d e e e e 300 10 10 1800 500 d auto 0 262144 196608 e d default e 131072 e d 262144 e e e 20000",
		"mptcp-mobile-optimized":    "d d d d e illinois tcp-legacy d d e d d 300 16 3 1800 1000 e e 0 131072 131072 e e default e 131072 d d 262144 e d d 20000",
		"splitsession-default-tcp":  "e d d d e high-speed tcp-wan-optimized d d d d d 600 3 3 1800 1000 d e 8 196608 131072 e e default d 458752 e e 458752 d e d 300000",
		"tcp-lan-optimized":         "e d d d e high-speed tcp-legacy e d d d d 300 3 3 1800 1000 d d 0 131072 98304 e e default d 65535 e d 65535 d e d 20000",
		"tcp-legacy":                "e d d d e high-speed tcp e d d d d 300 3 3 1800 1000 d d 0 49152 32768 e e default d 65535 e d 65535 e e d 20000",
		"tcp-mobile-optimized":      "d d d d e high-speed tcp-legacy d d e d d 300 16 3 1800 1000 d e 0 131072 131072 e e default d 131072 d d 131072 e e d 20000",
		"tcp-wan-optimized":         "e d d d e high-speed tcp-legacy e d d d d 300 3 3 1800 1000 d e 0 131072 131072 e e default d 65535 e d 65535 e e d 20000",
		"wam-tcp-lan-optimized":     "e d d d e high-speed tcp-lan-optimized e d d d d 300 16 16 1800 1000 d d 0 131072 98304 e e default d 65535 e d 65535 e e d 20000",
		"wam-tcp-wan-optimized":     "e d d d e high-speed tcp-wan-optimized d d d d d 600 10 3 1800 1000 d e 8 196608 131072 d e default d 65535 e e 458752 e e d 300000",
		"wom-tcp-lan-optimized":     "e d d d d high-speed tcp-lan-optimized d d d d d 600 3 3 1800 1000 d e 0 131072 98304 e e default d 65535 e d 65535 e e d 20000",
		"wom-tcp-wan-optimized":     "e d d d e high-speed tcp-wan-optimized d d d d d 600 3 3 1800 1000 d e 8 196608 131072 e e default d 458752 e e 458752 d e d 300000",
	}
	b := Default.Builtins()
	k := Default.Kind("ltm profile tcp")
	for name, row := range rows {
		vals := strings.Fields(row)
		if len(vals) != len(tcpCols) {
			t.Fatalf("%s: %d values for %d columns", name, len(vals), len(tcpCols))
		}
		o := b.Get(k, "/Common/"+name)
		if o == nil || !o.BuiltIn {
			t.Errorf("ltm profile tcp %s is not a shipped built-in", name)
			continue
		}
		for i, col := range tcpCols {
			want := map[string]string{"e": "enabled", "d": "disabled"}[vals[i]]
			if want == "" {
				want = vals[i]
			}
			if col == "defaults-from" {
				want = "/Common/" + want
			}
			got := ""
			if v := b.Effective(o, col); v != nil {
				got = v.Str
			}
			if got != want {
				t.Errorf("ltm profile tcp %s %s = %q, F5 lists %q", name, col, got, want)
			}
		}
	}
	// Every tcp built-in but the parent is in the table.
	for _, o := range b.Of(k) {
		if n := strings.TrimPrefix(o.Name, "/Common/"); o.BuiltIn && n != "tcp" && rows[n] == "" {
			t.Errorf("ltm profile tcp %s is shipped but not checked against F5's listing", o.Name)
		}
	}
}
