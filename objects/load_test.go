package objects

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// readAndCheck reads text the way a merge load does: against the built-in
// configuration, references resolved.
func readAndCheck(text string) *Loaded {
	l := Default.ReadText("admin.conf", []byte(text), "/Common")
	l.CheckRefs(Default, Default.Builtins())
	return l
}

// The mistakes an admin makes in a file are each refused, with the place
// and F5's words, and refuse the whole file.
func TestMalformedInputsAreRefused(t *testing.T) {
	vs := "ltm virtual /Common/vs { destination /Common/10.1.1.1:80 %s }\n"
	for _, tc := range []struct {
		name, text string
		at         string // line:column of the first refusal
		msg        string
	}{
		{"unclosed brace", "ltm pool /Common/p {\n    members {\n        /Common/10.1.1.1:80 { }\n}\n", "5:1", `missing "}" to close the block opened at 1:20`},
		{"bad enum", "ltm pool /Common/p {\n    load-balancing-mode fastest\n}\n", "2:25", `"fastest" is not a valid value for "load-balancing-mode"`},
		{"dangling reference", fmt.Sprintf(vs, "pool /Common/nope"), "1:63", "01020036:3: The requested pool (/Common/nope) was not found."},
		{"bad address", "ltm node /Common/n1 {\n    address 10.1.1.300\n}\n", "2:13", `"10.1.1.300" is not an IP address`},
		{"port 99999", "ltm virtual /Common/vs {\n    destination /Common/10.1.1.1:99999\n}\n", "2:17", "is not a port"},
		{"unknown property", "ltm pool /Common/p {\n    colour blue\n}\n", "2:5", `Syntax Error: "colour" unknown property`},
		{"bad integer", "ltm pool /Common/p {\n    slow-ramp-time soon\n}\n", "2:20", `"soon" is not a valid value for "slow-ramp-time"`},
		{"unbalanced rule", "ltm rule /Common/r {\nwhen HTTP_REQUEST {\n    if { 1 } {\n        pool p\n}\n", "6:1", `missing "}" to close the script body opened at 1:20`},
		{"missing profile", fmt.Sprintf(vs, "profiles { /Common/tcp { } /Common/web-tcp { } }"), "1:85", "01020036:3: The requested profile (/Common/web-tcp) was not found."},
		{"duplicate then missing", "ltm pool /Common/p { }\nltm pool /Common/p { }\n" + fmt.Sprintf(vs, "pool /Common/q"), "2:1", "01020066:3: The requested Pool (/Common/p) already exists in partition Common."},
		{"unterminated string", "ltm pool /Common/p {\n    description \"web pool\n}\n", "2:17", "Syntax Error"},
		{"binary bytes", "\x00\xffltm pool /Common/p { }\n", "1:1", "byte 0x00 is not text"},
	} {
		l := readAndCheck(tc.text)
		err := l.Err(false)
		if err == nil {
			t.Errorf("%s: loaded; BIG-IP refuses it", tc.name)
			continue
		}
		first := l.Findings.Refused()[0]
		if at := fmt.Sprintf("%d:%d", first.Pos.Line, first.Pos.Column); at != tc.at || first.Pos.File != "admin.conf" {
			t.Errorf("%s: refused at %s:%s, want admin.conf:%s (%s)", tc.name, first.Pos.File, at, tc.at, first)
		}
		if !strings.Contains(first.String(), tc.msg) {
			t.Errorf("%s: %q does not say %q", tc.name, first.String(), tc.msg)
		}
		if !strings.HasPrefix(err.Error(), "admin.conf:"+tc.at+": ") {
			t.Errorf("%s: error %q does not start with its position", tc.name, err)
		}
		// The legacy first-error reader refuses it too.
		if objs, err := Default.ReadConfig("admin.conf", []byte(tc.text), nil); err == nil && tc.name != "dangling reference" && tc.name != "missing profile" {
			t.Errorf("%s: ReadConfig returned %d objects and no error", tc.name, len(objs))
		}
	}
	// Both refusals of one file are reported, not only the first.
	l := readAndCheck("ltm pool /Common/p { }\nltm pool /Common/p { }\n" + fmt.Sprintf(vs, "pool /Common/q"))
	if n := len(l.Findings.Refused()); n != 2 {
		t.Errorf("duplicate then missing: %d refusals, want 2: %v", n, l.Findings)
	}
}

// What real files carry and BIG-IP accepts loads, with a warning where
// openltm keeps something without acting on it.
func TestValidFilesLoad(t *testing.T) {
	var monitors strings.Builder
	for l := range strings.SplitSeq(f5KindList, "\n") {
		if typ, ok := strings.CutPrefix(l, "ltm monitor "); ok {
			fmt.Fprintf(&monitors, "ltm monitor %s /Common/m_%s { }\n", typ, typ)
		}
	}
	for _, tc := range []struct {
		name, text string
		warn       []string // substrings of the warnings expected
	}{
		{"fqdn members", `ltm pool /Common/dw {
    members {
        /Common/dw1.lab.io:8443 {
            fqdn {
                autopopulate enabled
                name dw1.lab.io
            }
        }
    }
    monitor min 1 of { /Common/https }
}
`, nil},
		{"virtual without destination", "ltm virtual /Common/fwd {\n    ip-protocol udp\n    profiles {\n        /Common/udp { }\n    }\n}\n", nil},
		{"udp and tcp on one address and port", `ltm virtual /Common/dns_udp {
    destination /Common/10.1.1.53:53
    ip-protocol udp
    profiles { /Common/udp { } }
}
ltm virtual /Common/dns_tcp {
    destination /Common/10.1.1.53:53
    ip-protocol tcp
    profiles { /Common/tcp { } }
}
`, nil},
		{"every monitor kind", monitors.String(), []string{"ltm monitor oracle", "ltm monitor smb"}},
		{"F5 built-ins: one shipped, one kept", `ltm virtual /Common/redirect {
    destination /Common/10.1.1.1:80
    profiles { /Common/http { } /Common/tcp { } /Common/wom-default-clientssl { } }
    rules { /Common/_sys_auth_krbdelegate }
}
`, []string{"refers to ltm rule /Common/_sys_auth_krbdelegate, which openltm does not act on (F5's Kerberos delegation iRule"}},
		{"kinds of modules openltm does not run", "apm policy access-policy /Common/ap { items { /Common/ap_end_deny { } } }\nnet ipsec ike-daemon /Common/ikedaemon { log-level info }\n", []string{"apm is an F5 object kind", "net ipsec ike-daemon is an F5 object kind"}},
		{"network setup", `net vlan /Common/v110 {
    interfaces {
        1.1 {
            tagged
        }
    }
    tag 110
}
net route /Common/default {
    gw 10.1.10.1
    network default
}
sys ntp {
    servers { 0.pool.ntp.org 1.pool.ntp.org }
    timezone UTC
}
sys dns {
    name-servers { 10.1.1.2 }
    search { lab.io }
}
sys db ui.advisory.enabled {
    value "true"
}
sys management-route /Common/default {
    gateway 192.168.1.1
    network default
}
sys management-ip 192.168.1.245/24 { }
auth user ops {
    partition-access {
        all-partitions {
            role admin
        }
    }
    shell tmsh
}
ltm cipher rule /Common/strong {
    cipher ECDHE+AES-GCM
}
ltm cipher group /Common/strong {
    allow {
        /Common/strong { }
    }
}
sys log-config destination remote-high-speed-log /Common/hsl {
    pool-name /Common/syslog_pool
    protocol udp
}
sys log-config destination remote-syslog /Common/rs {
    remote-high-speed-log /Common/hsl
}
sys log-config publisher /Common/pub {
    destinations {
        /Common/rs { }
    }
}
ltm pool /Common/syslog_pool {
    load-balancing-mode observed-member
    members {
        /Common/10.1.1.9:514 { }
    }
}
net dns-resolver /Common/resolver {
    forward-zones {
        . {
            nameservers {
                10.1.1.2:53 { }
            }
        }
    }
}
net tunnels tunnel /Common/gre1 {
    local-address 10.1.1.1
    profile /Common/gre
    remote-address 10.2.2.2
}
ltm profile client-ssl /Common/shop_ssl {
    cert-key-chain {
        default {
            cert /Common/default.crt
            key /Common/default.key
        }
    }
    defaults-from /Common/clientssl
}
ltm monitor dns /Common/dns_check {
    defaults-from /Common/dns
    qname www.lab.io
}
`, []string{"net route /Common/default is kept", "sys ntp"}},
	} {
		l := readAndCheck(tc.text)
		if err := l.Err(false); err != nil {
			t.Errorf("%s: refused: %v\n%v", tc.name, err, l.Findings)
			continue
		}
		all := fmt.Sprint(l.Findings)
		for _, w := range tc.warn {
			if !strings.Contains(all, w) {
				t.Errorf("%s: no warning says %q: %v", tc.name, w, l.Findings)
			}
		}
		if len(tc.warn) > 0 && l.Err(true) == nil {
			t.Errorf("%s: strict does not refuse what openltm does not act on", tc.name)
		}
		// It joins a configuration that validates and saves back the same.
		c := Default.Builtins()
		for _, o := range l.Objects {
			c.Put(o)
		}
		if err := c.Complete(Default); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if err := c.Validate(Default); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		text := c.Text()
		l2 := readAndCheck(text)
		if err := l2.Err(false); err != nil {
			t.Errorf("%s: saved text refused: %v\n%s", tc.name, err, text)
			continue
		}
		c2 := Default.Builtins()
		for _, o := range l2.Objects {
			c2.Put(o)
		}
		if err := c2.Complete(Default); err != nil {
			t.Errorf("%s: saved text: %v", tc.name, err)
		} else if text2 := c2.Text(); text2 != text {
			t.Errorf("%s: save → load → save differs:\n%s\n---\n%s", tc.name, text, text2)
		}
	}
}

// BIG-IP creates the node of an FQDN member itself.
func TestFQDNMemberNode(t *testing.T) {
	l := readAndCheck("ltm pool /Common/dw { members { /Common/dw1.lab.io:8443 { fqdn { autopopulate enabled name dw1.lab.io } } } }\n")
	c := Default.Builtins()
	for _, o := range l.Objects {
		c.Put(o)
	}
	if err := c.Complete(Default); err != nil {
		t.Fatal(err)
	}
	n := c.Get(Default.Kind("ltm node"), "/Common/dw1.lab.io")
	if n == nil || n.Str("address") != "any6" || n.Props["fqdn"] == nil || n.Props["fqdn"].Sub.Props["name"].Str != "dw1.lab.io" {
		t.Fatalf("FQDN node not created as BIG-IP does: %+v", n)
	}
	if d := c.Dangling(Default); len(d) != 0 {
		t.Fatalf("dangling after completion: %v", d[0].Warning(Default))
	}
}

// A configuration an earlier openltm stored, with what it kept and this
// vocabulary refuses, still restores.
func TestReadStored(t *testing.T) {
	old := "ltm pool /Common/p {\n    monitor /Common/http\n    unknown-knob 42\n}\nfoo bar /Common/x { a b }\n"
	if l := readAndCheck(old); l.Err(false) == nil {
		t.Fatal("the vocabulary does not refuse what BIG-IP refuses")
	}
	objs, findings, err := Default.ReadStored("generation 7", []byte(old))
	if err != nil || len(objs) != 2 || len(findings.NotActedOn()) != 2 {
		t.Fatalf("stored text: %d objects, %v, %v", len(objs), findings, err)
	}
	if !strings.Contains(Format(objs[0], PrintOpts{}), "unknown-knob 42") || objs[1].Raw == "" {
		t.Fatalf("not kept verbatim: %s / %q", Format(objs[0], PrintOpts{}), objs[1].Raw)
	}
	// Objects an earlier openltm kept in partitions it never declared.
	objs, _, err = Default.ReadStored("generation 9", []byte("ltm pool /Other/p { }\n"))
	if err != nil {
		t.Fatal(err)
	}
	c := Default.Builtins()
	for _, o := range objs {
		c.Put(o)
	}
	if err := c.Validate(Default); err != nil {
		t.Fatalf("restored partition objects do not validate: %v", err)
	}
	if _, _, err := Default.ReadStored("generation 8", []byte("ltm pool /Common/p {\n")); err == nil {
		t.Fatal("a syntax error restored")
	}
}

// A description or AS3's metadata is only stored and listed on a BIG-IP:
// it draws no "not acted on" warning, on kinds openltm acts on or keeps.
func TestRemarksDrawNoWarning(t *testing.T) {
	for _, text := range []string{
		"auth partition shop {\n    description \"Updated by AS3\"\n}\n",
		"gtm datacenter /Common/dc1 {\n    metadata {\n        as3 { }\n    }\n}\n",
		"ltm pool /Common/p1 {\n    members {\n        /Common/10.1.1.5:80 {\n            address 10.1.1.5\n            metadata {\n                source {\n                    value declaration\n                }\n            }\n        }\n    }\n}\n",
	} {
		l := readAndCheck(text)
		if err := l.Err(true); err != nil {
			t.Errorf("%q: %v (%v)", text, err, l.Findings)
		}
		for _, f := range l.Findings {
			if strings.Contains(f.String(), "does not act on") {
				t.Errorf("%q: %v", text, f)
			}
		}
	}
}

// The folders of every bigip_base.conf carry the traffic group they have
// by default (the root's, /Common/traffic-group-1, inherited): nothing
// there is a choice openltm leaves unacted on.
func TestFolderDefaultTrafficGroup(t *testing.T) {
	text := "sys folder / {\n    device-group none\n    hidden false\n    inherited-devicegroup false\n    inherited-traffic-group false\n    traffic-group /Common/traffic-group-1\n}\n" +
		"sys folder /Common {\n    device-group none\n    hidden false\n    inherited-devicegroup true\n    inherited-traffic-group true\n    traffic-group /Common/traffic-group-1\n}\n"
	l := readAndCheck(text)
	if err := l.Err(true); err != nil {
		t.Fatalf("%v (%v)", err, l.Findings)
	}
	// Another traffic group is acted on (CompleteTrafficGroups): no
	// warning.
	l = readAndCheck("sys folder /Common/app {\n    inherited-traffic-group false\n    traffic-group /Common/traffic-group-2\n}\n")
	if err := l.Err(true); err != nil {
		t.Errorf("a folder's own traffic group: %v (%v)", err, l.Findings)
	}
}

// checkRefusal loads text (a table test's case name) and validates it
// with the built-ins: refused must be a substring of the refusal, or ""
// when the text is to load.
func checkRefusal(t *testing.T, name, text, refused string) {
	t.Helper()
	l := readAndCheck(text)
	var err error
	if r := l.Findings.Refused(); len(r) > 0 {
		err = errors.New(r[0].String())
	} else {
		cfg := Default.Builtins()
		for _, o := range l.Objects {
			cfg.Put(o)
		}
		err = cfg.Validate(Default)
	}
	switch {
	case refused == "" && err != nil:
		t.Errorf("%s: refused: %v", name, err)
	case refused != "" && (err == nil || !strings.Contains(err.Error(), refused)):
		t.Errorf("%s: got %v, want a refusal with %q", name, err, refused)
	}
}

// A cm device's hardware and software facts are written by the BIG-IP
// itself: a bigip_base.conf's are kept without a warning, and create or
// modify refuses them as tmsh does.
func TestCMDeviceFacts(t *testing.T) {
	text := "cm device /Common/bigip-a.example {\n    active-modules { \"BIG-IP, VE Trial|ABCDE-FGHIJ|Rate Shaping\" }\n" +
		"    base-mac 52:54:00:aa:bb:cc\n    build 0.0.6\n    cert /Common/dtdi.crt\n    chassis-id 420aa-bb\n" +
		"    edition \"Point Release 4\"\n    hostname bigip-a.example\n    key /Common/dtdi.key\n    management-ip 192.0.2.10\n" +
		"    marketing-name \"BIG-IP Virtual Edition\"\n    platform-id Z100\n    product BIG-IP\n    self-device true\n" +
		"    time-zone US/Central\n    version 15.1.0.4\n}\n"
	l := readAndCheck(text)
	if err := l.Err(true); err != nil {
		t.Fatalf("%v (%v)", err, l.Findings)
	}
	for _, f := range l.Findings {
		if strings.Contains(f.String(), "does not act on") {
			t.Errorf("%v", f)
		}
	}
	for _, args := range []string{"version 16.1.0", "hostname b.example", "active-modules { x }", "base-mac 52:54:00:00:00:01"} {
		if _, err := apply(t, "cm device", ModeCreate, nil, args); err == nil || !strings.Contains(err.Error(), "is read-only") {
			t.Errorf("create cm device x %s: %v, want read-only", args, err)
		}
	}
	if _, err := apply(t, "cm device", ModeCreate, nil, "management-ip 192.0.2.11 comment lab"); err != nil {
		t.Errorf("settable properties refused: %v", err)
	}
}

// The provisioning of ltm and gtm, which openltm runs, draws no warning;
// another module's is kept with one.
func TestProvisionWarnings(t *testing.T) {
	for _, tc := range []struct {
		text string
		warn bool
	}{
		{"sys provision ltm {\n    level nominal\n}\n", false},
		{"sys provision gtm {\n    level minimum\n}\n", false},
		{"sys provision apm {\n    level nominal\n}\n", true},
	} {
		l := readAndCheck(tc.text)
		warned := false
		for _, f := range l.Findings {
			warned = warned || strings.Contains(f.String(), "does not act on")
		}
		if warned != tc.warn {
			t.Errorf("%q: warned %v, want %v (%v)", tc.text, warned, tc.warn, l.Findings)
		}
	}
}
