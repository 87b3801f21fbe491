package objects

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

// A BIG-IP 11 bigip_gtm.conf loads as BIG-IP 12's upgrade converts it:
// the untyped pool and wide IP become A-typed, their renamed properties
// read under the new names, and they print back typed.
func TestV11GTMConversion(t *testing.T) {
	src, err := os.ReadFile("testdata/gtm_v11.conf")
	if err != nil {
		t.Fatal(err)
	}
	l := readAndCheck(string(src))
	if err := l.Err(false); err != nil {
		t.Fatalf("refused: %v", err)
	}
	byKey := map[string]*Object{}
	for _, o := range l.Objects {
		byKey[o.Kind.Key()+" "+o.Name] = o
	}
	pool, wide := byKey["gtm pool a /Common/p1"], byKey["gtm wideip a /Common/www.v11.test"]
	if pool == nil || wide == nil {
		t.Fatalf("converted objects missing: %v", l.Objects)
	}
	got := Format(pool, PrintOpts{}) + Format(wide, PrintOpts{})
	for _, want := range []string{
		"gtm pool a /Common/p1 {",
		"fallback-ip 127.194.0.99",
		"max-answers-returned 2",
		"/Common/s1:vs1 {\n            member-order 1",
		"ratio 3",
		"ttl 40",
		"load-balancing-mode global-availability",
		"gtm wideip a /Common/www.v11.test {",
		"persistence enabled",
		"last-resort-pool /Common/p1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("printed form lacks %q:\n%s", want, got)
		}
	}
	for _, gone := range []string{"fallback-ipv", "ipv6-no-error", "max-address-returned", " order "} {
		if strings.Contains(got, gone) {
			t.Errorf("printed form still has %q:\n%s", gone, got)
		}
	}
	// One conversion note per object, one per dropped property that was
	// set (fallback-ipv6 any6 is the default: no note).
	var notes []string
	for _, f := range l.Findings {
		notes = append(notes, fmt.Sprintf("%d:%d %s", f.Pos.Line, f.Pos.Column, f.Msg))
	}
	all := strings.Join(notes, "\n")
	for _, want := range []string{
		"10:1 gtm pool /Common/p1 is a BIG-IP 11 untyped pool: read as gtm pool a /Common/p1",
		"21:1 gtm wideip /Common/www.v11.test is a BIG-IP 11 untyped wide IP: read as gtm wideip a /Common/www.v11.test",
		`22:5 property "ipv6-no-error-response" of a BIG-IP 11 wide IP is dropped`,
		`23:5 property "ipv6-no-error-neg-ttl" of a BIG-IP 11 wide IP is dropped`,
	} {
		if !strings.Contains(all, want) {
			t.Errorf("notes lack %q:\n%s", want, all)
		}
	}
	if len(notes) != 4 {
		t.Errorf("%d notes, want 4:\n%s", len(notes), all)
	}
}

// Each form of a v11 statement, and what it reads as or why it is
// refused, at its line and column.
func TestV11GTMStatements(t *testing.T) {
	const server = "gtm datacenter /Common/dc1 { }\ngtm server /Common/s1 { datacenter /Common/dc1 addresses { 127.194.0.1 { } } virtual-servers { vs1 { destination 127.194.0.11:80 } } }\n"
	for _, tc := range []struct {
		name, text string
		key        string // the object read, "" when refused
		note       string // a finding expected (refusal or warning)
		at         string // its line:column, for refusals
	}{
		{"empty pool", "gtm pool /Common/p { }\n", "gtm pool a /Common/p", "untyped pool", ""},
		{"pool without block", "gtm pool /Common/p\n", "gtm pool a /Common/p", "untyped pool", ""},
		{"relative name", "gtm pool p { }\n", "gtm pool a /Common/p", "untyped pool", ""},
		{"typed pool untouched", "gtm pool a /Common/p { }\n", "gtm pool a /Common/p", "", ""},
		{"fallback-ipv6 set", "gtm pool /Common/p { fallback-ipv6 2001:db8::1 }\n", "gtm pool a /Common/p", `"fallback-ipv6" of a BIG-IP 11 pool is dropped`, ""},
		{"members", server + "gtm pool /Common/p { members { /Common/s1:vs1 { order 2 enabled } } }\n", "gtm pool a /Common/p", "untyped pool", ""},
		{"unknown property refused", "gtm pool /Common/p {\n    colour blue\n}\n", "", `"colour" unknown property`, "2:5"},
		{"bad mode refused", "gtm pool /Common/p {\n    load-balancing-mode fastest\n}\n", "", `"fastest" is not a valid value`, "2:25"},
		{"member order not a number", server + "gtm pool /Common/p {\n    members { /Common/s1:vs1 { order x } }\n}\n", "", `"x"`, "4:38"},
		{"every v11 pool property", server + `gtm pool /Common/p {
    alternate-mode round-robin
    description "v11 pool"
    disabled
    dynamic-ratio enabled
    fallback-ipv4 any
    fallback-ipv6 any6
    fallback-mode return-to-dns
    limit-max-bps 100
    limit-max-bps-status enabled
    limit-max-connections 10
    limit-max-connections-status enabled
    limit-max-pps 10
    limit-max-pps-status enabled
    load-balancing-mode ratio
    manual-resume enabled
    max-address-returned 3
    members {
        /Common/s1:vs1 {
            disabled
            limit-max-connections 5
            limit-max-connections-status enabled
            monitor /Common/tcp
            order 1
            ratio 4
        }
    }
    monitor /Common/tcp
    qos-hit-ratio 6
    qos-hops 1
    qos-kilobytes-second 2
    qos-lcs 31
    qos-packet-rate 2
    qos-rtt 51
    qos-topology 1
    qos-vs-capacity 1
    qos-vs-score 1
    ttl 60
    verify-member-availability disabled
}
`, "gtm pool a /Common/p", "untyped pool", ""},
		{"v11 member limits kept with a warning", server + "gtm pool /Common/p { members { /Common/s1:vs1 { limit-max-bps 100 limit-max-bps-status enabled } } }\n", "gtm pool a /Common/p", `"limit-max-bps" is kept`, ""},
		{"wide IP", "gtm wideip /Common/w.test { pool-lb-mode ratio }\n", "gtm wideip a /Common/w.test", "untyped wide IP", ""},
		{"wide IP to a missing pool", "gtm wideip /Common/w.test {\n    pools { /Common/nope { } }\n}\n", "", "01020036", "2:13"},
		{"every v11 wide IP property", "gtm rule /Common/r { when DNS_REQUEST { } }\n" + `gtm wideip /Common/w.test {
    aliases {
        x.w.test
        y.w.test
    }
    description "v11 wide IP"
    disabled
    load-balancing-decision-log-verbosity { pool-selection }
    persist-cidr-ipv4 24
    persist-cidr-ipv6 56
    persistence enabled
    pool-lb-mode topology
    rules {
        /Common/r
    }
    ttl-persistence 120
}
`, "gtm wideip a /Common/w.test", "untyped wide IP", ""},
		{"wide IP ipv6-no-error default", "gtm wideip /Common/w.test { ipv6-no-error-response disabled ipv6-no-error-neg-ttl 0 }\n", "gtm wideip a /Common/w.test", "untyped wide IP", ""},
	} {
		l := readAndCheck(tc.text)
		var found *Object
		for _, o := range l.Objects {
			if o.Kind != nil && (strings.HasPrefix(o.Kind.Key(), "gtm pool") || strings.HasPrefix(o.Kind.Key(), "gtm wideip")) {
				found = o
			}
		}
		if tc.key == "" {
			r := l.Findings.Refused()
			if len(r) == 0 {
				t.Errorf("%s: loaded; want refused with %q", tc.name, tc.note)
				continue
			}
			if at := fmt.Sprintf("%d:%d", r[0].Pos.Line, r[0].Pos.Column); at != tc.at || !strings.Contains(r[0].String(), tc.note) {
				t.Errorf("%s: refused at %s with %q, want %s with %q", tc.name, at, r[0], tc.at, tc.note)
			}
			continue
		}
		if err := l.Err(false); err != nil {
			t.Errorf("%s: refused: %v", tc.name, err)
			continue
		}
		if found == nil || found.Kind.Key()+" "+found.Name != tc.key {
			t.Errorf("%s: read %v, want %s", tc.name, found, tc.key)
		}
		notes := fmt.Sprint(l.Findings)
		if tc.note == "" && len(l.Findings) > 0 || tc.note != "" && !strings.Contains(notes, tc.note) {
			t.Errorf("%s: notes %s, want %q", tc.name, notes, tc.note)
		}
	}
}
