package gslb

import (
	"encoding/base64"
	"net/netip"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// testECH is an ECHConfigList of one 0xfe0d config: config_id 7, X25519,
// HKDF-SHA256 with AES-128-GCM, public_name public.ex.test.
const testECH = "AEH+DQA9BwAgACABCA8WHSQrMjlAR05VXGNqcXh/ho2Um6KpsLe+xczT2gAEAAEAAQAOcHVibGljLmV4LnRlc3QAAA=="

func TestParseECHConfigList(t *testing.T) {
	good, _ := base64.StdEncoding.DecodeString(testECH)
	enc := base64.StdEncoding.EncodeToString
	// other is the list with its config's version changed: skipped.
	other := append([]byte(nil), good...)
	other[2], other[3] = 0xfe, 0x0a
	// Two configs: one of an unknown version, then the good one.
	two := []byte{0, byte(len(good) - 2 + 4)}
	two = append(two, 0xfe, 0x0a, 0, 0)
	two = append(two, good[2:]...)
	cases := []struct {
		name, in, want string // want: error text, "" for none
	}{
		{"good", testECH, ""},
		{"spaces around", " " + testECH + " ", ""},
		{"unknown version skipped", enc(two), ""},
		{"not base64", "not*base64", "not base64"},
		{"empty list", enc([]byte{0, 0}), "the list is empty"},
		{"cut short", enc(good[:len(good)-3]), "cut short"},
		{"trailing bytes", enc(append(append([]byte(nil), good...), 0)), "bytes follow the list"},
		{"only unknown versions", enc(other), "no ECHConfig of version 0xfe0d"},
		{"no public key", enc(withPublicKeyLen(good, 0)), "public_key is empty"},
	}
	for _, c := range cases {
		b, err := ParseECHConfigList(c.in)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "" && len(b) < 4:
			t.Errorf("%s: %d bytes", c.name, len(b))
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}

// withPublicKeyLen gives the first config (of a 32-byte key) a public
// key of n bytes, the list's and the config's lengths adjusted.
func withPublicKeyLen(list []byte, n int) []byte {
	b := append([]byte(nil), list...)
	d := 32 - n
	put := func(i, v int) { b[i], b[i+1] = byte(v>>8), byte(v) }
	// list len (2) version (2) length (2) config_id (1) kem_id (2) key len (2)
	put(0, int(b[0])<<8|int(b[1])-d)
	put(4, int(b[4])<<8|int(b[5])-d)
	put(9, n)
	return append(b[:11+n], b[11+32:]...)
}

func TestCheckDoHPath(t *testing.T) {
	cases := []struct{ in, want string }{
		{"/dns-query{?dns}", ""},
		{"/q{?name,dns}", ""},
		{"/x/{dns}", ""},
		{"", ""},
		{"dns-query{?dns}", "beginning with /"},
		{"/dns-query", "no {?dns} variable"},
		{"/dns-query{?dnsx}", "no {?dns} variable"},
		{"/dns-query{?dns", "not closed"},
		{"/dns-query}{?dns}", "closes no expression"},
		{"/dns query{?dns}", "no spaces"},
	}
	for _, c := range cases {
		err := CheckDoHPath(c.in)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// The ech and dohpath SvcParams go into the answer in key order, after
// ipv4hint and around ipv6hint, and a client (miekg/dns) reads them back;
// mandatory may name them.
func TestSVCBECHDoHPathAnswers(t *testing.T) {
	cfg := svcbConfig()
	a := netip.MustParseAddr
	sp := SVCBParams{ALPN: []string{"h2"}, IPv4Hint: []netip.Addr{a("127.199.5.1")}, IPv6Hint: []netip.Addr{a("fd00::199:5")}, Mandatory: []string{"ech"}}
	if err := sp.ParseECHDoHPath(testECH, ""); err != nil {
		t.Fatal(err)
	}
	doh := SVCBParams{ALPN: []string{"h2"}}
	if err := doh.ParseECHDoHPath("", "/dns-query{?dns}"); err != nil {
		t.Fatal(err)
	}
	cfg.Pools["https /Common/ech"] = &Pool{Name: "/Common/ech", Type: TypeHTTPS, Members: []PoolMember{{Target: "web.ex.test", Priority: 1, SVCB: sp}}}
	cfg.Pools["svcb /Common/doh"] = &Pool{Name: "/Common/doh", Type: TypeSVCB, Members: []PoolMember{{Target: "ns1.ex.test", Priority: 1, Port: 443, SVCB: doh}}}
	cfg.WideIPs["https /Common/secret.ex.test"] = &WideIP{Name: "/Common/secret.ex.test", Type: TypeHTTPS, Pools: []WideIPPool{{Pool: "https /Common/ech"}}}
	cfg.WideIPs["svcb /Common/_dns.ns1.ex.test"] = &WideIP{Name: "/Common/_dns.ns1.ex.test", Type: TypeSVCB, Pools: []WideIPPool{{Pool: "svcb /Common/doh"}}}
	s := newServer(t, cfg, Options{})
	src := a("127.199.5.5")
	cases := []struct {
		name   string
		qtype  uint16
		answer string
	}{
		{"secret.ex.test.", dns.TypeHTTPS, `secret.ex.test. HTTPS 1 web.ex.test. mandatory="ech" alpn="h2" ipv4hint="127.199.5.1" ech="` + testECH + `" ipv6hint="fd00::199:5"`},
		{"_dns.ns1.ex.test.", dns.TypeSVCB, `_dns.ns1.ex.test. SVCB 1 ns1.ex.test. alpn="h2" port="443" dohpath="/dns-query{?dns}"`},
	}
	for _, c := range cases {
		m := ask(t, s, src, c.name, c.qtype)
		if m == nil {
			t.Fatalf("%s: no answer", c.name)
		}
		wire, err := m.Pack()
		if err != nil {
			t.Fatalf("%s: pack: %v", c.name, err)
		}
		var back dns.Msg
		if err := back.Unpack(wire); err != nil {
			t.Fatalf("%s: unpack: %v", c.name, err)
		}
		if got := rrData(back.Answer); got != c.answer {
			t.Errorf("%s: %q, want %q", c.name, got, c.answer)
		}
	}
}

// Keys in alias mode and a mandatory ech that is not set are refused.
func TestSVCBECHRefused(t *testing.T) {
	var ech SVCBParams
	if err := ech.ParseECHDoHPath(testECH, "/q{?dns}"); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		members []PoolMember
		want    string
	}{
		{"ech in alias mode", []PoolMember{{Target: "x.ex.test", SVCB: SVCBParams{ECH: ech.ECH}}}, "alias mode"},
		{"dohpath in alias mode", []PoolMember{{Target: "x.ex.test", SVCB: SVCBParams{DoHPath: ech.DoHPath}}}, "alias mode"},
		{"mandatory ech unset", []PoolMember{{Target: "x.ex.test", Priority: 1, SVCB: SVCBParams{Mandatory: []string{"ech"}}}}, "does not set"},
	}
	for _, c := range cases {
		cfg := svcbConfig()
		cfg.Pools["svcb /Common/bad"] = &Pool{Name: "/Common/bad", Type: TypeSVCB, Members: c.members}
		err := New(Options{}).Apply(cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
}
