package objects

import (
	"slices"
	"strings"
	"testing"
)

// TestCompleteSNATTranslations: a snatpool's members, a snat's
// translation and a nat's translation-address get an ltm
// snat-translation named for the address when none stands for it (one
// written another way, or named otherwise with the address, does);
// one made by name alone gets its address; the objects are written as
// BIG-IP writes them.
func TestCompleteSNATTranslations(t *testing.T) {
	conf := func(t *testing.T, text string) *Config {
		t.Helper()
		cfg := Default.Builtins()
		objs, err := Default.ReadConfig("t.conf", []byte(text), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			cfg.Put(o)
		}
		return cfg
	}
	xk := Default.Kind("ltm snat-translation")
	xlats := func(cfg *Config) []string {
		var out []string
		for _, a := range cfg.Of(xk) {
			out = append(out, a.Name+"="+a.Str("address"))
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		name, conf string
		want       []string
	}{
		{"none", "ltm pool /Common/p { }\n", nil},
		{"a snatpool's members", "ltm snatpool /Common/sp { members { 10.0.0.5 /Common/10.0.0.6 } }\n",
			[]string{"/Common/10.0.0.5=10.0.0.5", "/Common/10.0.0.6=10.0.0.6"}},
		{"a snat's translation", "ltm snat /Common/s { origins { 10.1.0.0/16 { } } translation 10.0.0.7 }\n",
			[]string{"/Common/10.0.0.7=10.0.0.7"}},
		{"a nat's translation-address", "ltm nat /Common/n { originating-address 10.1.0.5 translation-address 10.0.0.8 }\n",
			[]string{"/Common/10.0.0.8=10.0.0.8"}},
		{"automap and none make none", "ltm snat /Common/s { origins { 10.1.0.0/16 { } } automap }\n", nil},
		{"one address used twice, one object", "ltm snatpool /Common/sp { members { 10.0.0.5 } }\nltm snat /Common/s { origins { 10.1.0.0/16 { } } translation 10.0.0.5 }\n",
			[]string{"/Common/10.0.0.5=10.0.0.5"}},
		{"an object named otherwise with the address stands for it", "ltm snatpool /Common/sp { members { 10.0.0.5 } }\nltm snat-translation /Common/x5 { address 10.0.0.5 }\n",
			[]string{"/Common/x5=10.0.0.5"}},
		{"IPv6 written another way is the same address", "ltm snatpool /Common/sp { members { 2001:db8::5 } }\nltm snat-translation /Common/2001:db8:0::5 { address 2001:db8:0::5 }\n",
			[]string{"/Common/2001:db8:0::5=2001:db8:0::5"}},
		{"made by name alone: its address filled in", "ltm snat-translation /Common/10.0.0.9 { }\n",
			[]string{"/Common/10.0.0.9=10.0.0.9"}},
		{"a member's folder names the object", "ltm snatpool /P1/sp { members { /P1/10.0.0.5 } }\n",
			[]string{"/P1/10.0.0.5=10.0.0.5"}},
		{"a member naming a translation makes none", "ltm snatpool /Common/sp { members { xlat_1 10.0.0.6 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n",
			[]string{"/Common/10.0.0.6=10.0.0.6", "/Common/xlat_1=10.0.0.5"}},
		{"a nat's address in the nat's partition", "ltm nat /P1/n { originating-address 10.1.0.5 translation-address 10.0.0.8 }\n",
			[]string{"/P1/10.0.0.8=10.0.0.8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conf(t, tc.conf)
			CompleteSNATTranslations(Default, cfg)
			if got := xlats(cfg); !slices.Equal(got, tc.want) {
				t.Errorf("snat-translations %q, want %q", got, tc.want)
			}
		})
	}
	cfg := conf(t, "ltm snatpool /Common/sp { members { 10.0.0.5 } }\n")
	CompleteSNATTranslations(Default, cfg)
	if got := cfg.Text(); !strings.Contains(got, "ltm snat-translation /Common/10.0.0.5 {\n    address 10.0.0.5\n    traffic-group /Common/traffic-group-1\n}") {
		t.Errorf("saved:\n%s", got)
	}
}

// TestCheckDeleteSNATTranslation: a snat-translation a snatpool, a snat
// or a nat uses by address is not deleted, with BIG-IP's words; one
// nothing uses is.
func TestCheckDeleteSNATTranslation(t *testing.T) {
	xk := Default.Kind("ltm snat-translation")
	for _, tc := range []struct {
		name, conf, del, want string
	}{
		{"snatpool", "ltm snatpool /Common/sp { members { 10.0.0.5 } }\n", "/Common/10.0.0.5", "SNAT translation address (/Common/10.0.0.5) is still referenced by a snat pool (/Common/sp)."},
		{"snat", "ltm snat /Common/s { origins { 10.1.0.0/16 { } } translation /Common/10.0.0.7 }\n", "/Common/10.0.0.7", "is still referenced by a snat (/Common/s)"},
		{"nat", "ltm nat /Common/n { originating-address 10.1.0.5 translation-address 10.0.0.8 }\n", "/Common/10.0.0.8", "is still referenced by a nat (/Common/n)"},
		{"named otherwise", "ltm snatpool /Common/sp { members { 10.0.0.5 } }\nltm snat-translation /Common/x5 { address 10.0.0.5 }\n", "/Common/x5", "(/Common/x5) is still referenced by a snat pool"},
		{"named by a snatpool", "ltm snatpool /Common/sp { members { /Common/xlat_1 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n", "/Common/xlat_1", "01070734:3: Configuration error: SNAT translation address (/Common/xlat_1) is still referenced by a snat pool (/Common/sp)."},
		{"named by a snatpool in another partition", "ltm snatpool /P1/sp { members { xlat_1 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n", "/Common/xlat_1", "is still referenced by a snat pool (/P1/sp)"},
		{"unused", "ltm snatpool /Common/sp { members { 10.0.0.5 } }\nltm snat-translation /Common/10.0.0.6 { address 10.0.0.6 }\n", "/Common/10.0.0.6", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default.Builtins()
			objs, err := Default.ReadConfig("t.conf", []byte(tc.conf), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				cfg.Put(o)
			}
			CompleteSNATTranslations(Default, cfg)
			x := cfg.Get(xk, tc.del)
			if x == nil {
				t.Fatalf("no %s", tc.del)
			}
			err = cfg.CheckDelete(Default, x)
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want one with %q", err, tc.want)
			}
		})
	}
}

// TestSnatPoolMemberNames: a snatpool member is an address or the name
// of an ltm snat-translation (full path, or short in the snatpool's
// folder or /Common, as tmsh resolves references); a name that is not
// one is refused as it is read, and one naming nothing as BIG-IP
// refuses a missing object (01020036).
func TestSnatPoolMemberNames(t *testing.T) {
	for _, tc := range []struct {
		name, conf string
		readErr    string // refused as read
		dangle     string // the dangling reference's error ("" none)
		refs       []string
	}{
		{name: "addresses only", conf: "ltm snatpool /Common/sp { members { 10.0.0.5 /Common/10.0.0.6 2001:db8::5 } }\n"},
		{name: "a full path", conf: "ltm snatpool /Common/sp { members { /Common/xlat_1 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n",
			refs: []string{"/Common/xlat_1"}},
		{name: "a short name", conf: "ltm snatpool /Common/sp { members { xlat_1 10.0.0.6 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n",
			refs: []string{"/Common/xlat_1"}},
		{name: "a /Common object from another partition's snatpool", conf: "ltm snatpool /P1/sp { members { /P1/xlat_1 } }\nltm snat-translation /Common/xlat_1 { address 10.0.0.5 }\n",
			refs: []string{"/P1/xlat_1"}},
		{name: "naming nothing", conf: "ltm snatpool /Common/sp { members { nosuch } }\n",
			refs: []string{"/Common/nosuch"}, dangle: "01020036:3: The requested snat translation (/Common/nosuch) was not found."},
		{name: "not a name", conf: "ltm snatpool /Common/sp { members { a*b } }\n", readErr: `"a*b" is not an IP address`},
		{name: "a mistyped address", conf: "ltm snatpool /Common/sp { members { 300.1.1.1 } }\n", readErr: `"300.1.1.1" is not an IP address`},
		{name: "a mistyped IPv6 address", conf: "ltm snatpool /Common/sp { members { /Common/dead::beef::1 } }\n", readErr: `is not an IP address`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := Default.Builtins()
			objs, err := Default.ReadConfig("t.conf", []byte(tc.conf), nil)
			if tc.readErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.readErr) {
					t.Fatalf("read error %v, want one with %q", err, tc.readErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range objs {
				cfg.Put(o)
			}
			var refs []string
			for _, o := range cfg.Of(Default.Kind("ltm snatpool")) {
				for _, r := range Refs(o) {
					refs = append(refs, r.Name)
				}
			}
			if !slices.Equal(refs, tc.refs) {
				t.Errorf("refs %q, want %q", refs, tc.refs)
			}
			var dangle string
			for _, d := range cfg.Dangling(Default) {
				dangle = d.Error(Default).Error()
			}
			if dangle != tc.dangle {
				t.Errorf("dangling %q, want %q", dangle, tc.dangle)
			}
		})
	}
}
