package objects

import (
	"strings"
	"testing"
)

// TestNATRouteDomainAddresses: ltm nat, ltm snat, ltm snatpool and ltm
// snat-translation take addresses in a route domain (ADDRESS%ID) as
// BIG-IP writes them, print them as written, read back what they print,
// and refuse an ID that is not a number; a NAT's or SNAT's translation
// address gets its ltm snat-translation named with the %ID.
func TestNATRouteDomainAddresses(t *testing.T) {
	for _, tc := range []struct {
		key, args, want, err string
	}{
		{"ltm nat", "originating-address 10.1.1.1%2 translation-address 10.2.2.2%2",
			"ltm nat x { originating-address 10.1.1.1%2 translation-address 10.2.2.2%2 }", ""},
		{"ltm nat", "originating-address 2001:db8::1%3 translation-address 2001:db8::2%3",
			"ltm nat x { originating-address 2001:db8::1%3 translation-address 2001:db8::2%3 }", ""},
		{"ltm nat", "originating-address 10.1.1.1%x", "", "is not an IP address"},
		{"ltm snat", "origins add { 10.1.0.0%2/16 { } 10.3.3.3%2 { } } translation 10.2.2.9%2",
			"ltm snat x { origins { 10.1.0.0%2/16 { } 10.3.3.3%2 { } } translation 10.2.2.9%2 }", ""},
		{"ltm snatpool", "members add { 10.2.2.7%2 10.2.2.8 }", "ltm snatpool x { members { 10.2.2.7%2 10.2.2.8 } }", ""},
		{"ltm snat-translation", "address 10.2.2.7%2", "ltm snat-translation x { address 10.2.2.7%2 }", ""},
	} {
		got, err := apply(t, tc.key, ModeCreate, nil, tc.args)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: error %v, want it to contain %q", tc.key, tc.args, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("%s %s: %v", tc.key, tc.args, err)
			continue
		case got != tc.want:
			t.Errorf("%s %s:\n got %s\nwant %s", tc.key, tc.args, got, tc.want)
			continue
		}
		// Saved and loaded: the same text.
		objs, err := Default.ReadConfig("t.conf", []byte(strings.Replace(got, " x ", " /Common/x ", 1)+"\n"), nil)
		if err != nil || len(objs) != 1 {
			t.Errorf("%s: reading back %q: %v (%d objects)", tc.key, got, err, len(objs))
			continue
		}
		if again := strings.TrimSpace(Format(objs[0], PrintOpts{Folder: "/Common", OneLine: true})); again != got {
			t.Errorf("%s: read back as %s, want %s", tc.key, again, got)
		}
	}
	cfg := Default.Builtins()
	objs, err := Default.ReadConfig("t.conf", []byte("ltm nat /Common/n { originating-address 10.1.1.1%2 translation-address 10.2.2.2%2 }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		cfg.Put(o)
	}
	CompleteSNATTranslations(Default, cfg)
	x := cfg.Get(Default.Kind("ltm snat-translation"), "/Common/10.2.2.2%2")
	if x == nil || x.Str("address") != "10.2.2.2%2" {
		t.Errorf("the NAT's translation address has no ltm snat-translation /Common/10.2.2.2%%2 with its address: %v", x)
	}
}
