package objects

import (
	"strings"
	"testing"
)

func TestParseListAddress(t *testing.T) {
	for _, tc := range []struct{ in, lo, hi, err string }{
		{"10.1.1.1", "10.1.1.1", "10.1.1.1", ""},
		{"10.1.1.1-10.1.1.9", "10.1.1.1", "10.1.1.9", ""},
		{"10.1.1.0/30", "10.1.1.0", "10.1.1.3", ""},
		{"2001:db8::/127", "2001:db8::", "2001:db8::1", ""},
		{"::ffff:10.1.1.1", "10.1.1.1", "10.1.1.1", ""},
		{"10.1.1.300", "", "", "want an IPv4 or IPv6 address"},
		{"10.1.1.9-10.1.1.1", "", "", "above its last"},
		{"10.1.1.1-2001:db8::1", "", "", "one family"},
		{"10.1.1.1-", "", "", "low-high"},
		{"10.1.1.1/24", "", "", "host bits are set (the network is 10.1.1.0/24)"},
		{"10.1.1.0/33", "", "", "address/prefix-length"},
		{"10.1.1.1%1", "", "", "route domains"},
		{"fe80::1%eth0", "", "", "route domains"},
		{"www.example.com", "", "", "want an IPv4 or IPv6 address"},
	} {
		lo, hi, err := ParseListAddress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || lo.String() != tc.lo || hi.String() != tc.hi {
			t.Errorf("%s: %v-%v %v, want %s-%s", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
}

func TestParseGeoEntry(t *testing.T) {
	for _, tc := range []struct{ in, country, region, err string }{
		{"US", "US", "", ""},
		{"de", "DE", "", ""},
		{"A1", "A1", "", ""},
		{"US:California", "US", "California", ""},
		{"US:New York", "US", "New York", ""},
		{"us:ny", "US", "ny", ""},
		{"USA", "", "", "two-letter ISO 3166 code"},
		{"U", "", "", "two-letter ISO 3166 code"},
		{"", "", "", "two-letter ISO 3166 code"},
		{"U.:Texas", "", "", "two-letter ISO 3166 code"},
		{"United States:Texas", "", "", "two-letter ISO 3166 code"},
		{"US:", "", "", "names no region"},
		{"US: ", "", "", "names no region"},
	} {
		c, r, err := ParseGeoEntry(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%q: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || c != tc.country || r != tc.region {
			t.Errorf("%q: %q %q %v, want %q %q", tc.in, c, r, err, tc.country, tc.region)
		}
	}
}

func TestParseListPort(t *testing.T) {
	for _, tc := range []struct {
		in     string
		lo, hi int
		err    string
	}{
		{"80", 80, 80, ""},
		{"8000-8099", 8000, 8099, ""},
		{"http", 80, 80, ""},
		{"65535", 65535, 65535, ""},
		{"0", 0, 0, "from 1 to 65535"},
		{"65536", 0, 0, "from 1 to 65535"},
		{"0-10", 0, 0, "from 1 to 65535"},
		{"90-80", 0, 0, "above its last"},
		{"80-", 0, 0, "not a port"},
		{"eighty", 0, 0, "not a port"},
	} {
		lo, hi, err := ParseListPort(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || lo != tc.lo || hi != tc.hi {
			t.Errorf("%s: %d-%d %v, want %d-%d", tc.in, lo, hi, err, tc.lo, tc.hi)
		}
	}
}

func TestParseInline(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"any", "invalid Prefix", ""},
		{"0.0.0.0", "invalid Prefix", ""},
		{"::/0", "invalid Prefix", ""},
		{"10.1.1.1", "10.1.1.1/32", ""},
		{"10.1.1.0/24", "10.1.1.0/24", ""},
		{"2001:db8::1", "2001:db8::1/128", ""},
		{"10.1.1.1/24", "", "without host bits"},
		{"ten", "", "not an address"},
	} {
		p, err := ParseInlineAddress(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want an error with %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || p.String() != tc.want {
			t.Errorf("%s: %v %v, want %s", tc.in, p, err, tc.want)
		}
	}
	for _, tc := range []struct {
		in   string
		n    int
		fail bool
	}{
		{"any", 0, false}, {"0", 0, false}, {"80", 1, false}, {"80,8000-8010, 9000", 3, false},
		{"80,0", 1, false}, {"80,x", 0, true}, {"90-80", 0, true},
	} {
		rs, err := ParseInlinePorts(tc.in)
		if (err != nil) != tc.fail || len(rs) != tc.n {
			t.Errorf("%s: %v %v", tc.in, rs, err)
		}
	}
}

// TestNetListsLoad: a file with lists nesting lists written after them
// (as a merge may bring them) and criteria naming them loads, entries in
// canonical form; a bad entry is refused at its line and column, a loop
// by Validate, which every commit runs.
func TestNetListsLoad(t *testing.T) {
	text := `net address-list /Common/outer {
    address-lists {
        /Common/inner { }
    }
    addresses {
        10.1.1.1 { }
    }
}
net address-list /Common/inner {
    addresses {
        10.1.2.0/24 { description "the web tier" }
        10.1.3.1-10.1.3.9 { }
    }
}
net port-list /Common/web {
    ports {
        80 { }
        8000-8099 { }
    }
}
ltm traffic-matching-criteria /Common/tmc {
    destination-address-inline 0.0.0.0
    destination-address-list /Common/outer
    destination-port-list /Common/web
    source-address-inline 0.0.0.0
    source-port-inline 0
}
`
	l := readAndCheck(text)
	if err := l.Err(true); err != nil {
		t.Fatalf("a valid file: %v", err)
	}
	cfg := NewConfig()
	for _, o := range l.Objects {
		cfg.Put(o)
	}
	if err := cfg.Validate(Default); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	for _, tc := range []struct{ name, text, err string }{
		{"loop", strings.Replace(text, "10.1.3.1-10.1.3.9 { }", "10.1.3.1-10.1.3.9 { }\n    }\n    address-lists {\n        /Common/outer { }", 1), "includes itself through"},
		{"bad geo", strings.Replace(text, "10.1.3.1-10.1.3.9 { }\n    }", "10.1.3.1-10.1.3.9 { }\n    }\n    geo {\n        USA { }\n    }", 1), `The address list (/Common/inner): geo "USA" is not a country`},
	} {
		l := readAndCheck(tc.text)
		cfg := NewConfig()
		for _, o := range l.Objects {
			cfg.Put(o)
		}
		if err := cfg.Validate(Default); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.err)
		}
	}
	for _, tc := range []struct{ name, text, at, err string }{
		{"bad port", strings.Replace(text, "8000-8099", "8099-8000", 1), "18:9", "first port is above its last"},
		{"bad address", strings.Replace(text, "10.1.3.1-10.1.3.9", "10.1.3.1-10.1.3", 1), "12:9", "a range is two addresses"},
	} {
		err := readAndCheck(tc.text).Err(false)
		if err == nil || !strings.HasPrefix(err.Error(), "admin.conf:"+tc.at+": ") || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want one at %s with %q", tc.name, err, tc.at, tc.err)
		}
	}
	canon := readAndCheck(`net port-list /Common/p { ports { http { } 8080-8081 { } } }
net address-list /Common/a { addresses { ::ffff:10.1.1.1 { } ::ffff:10.1.1.0/120 { } 2001:DB8::1-2001:db8::0:2 { } } }
`)
	if err := canon.Err(true); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range canon.Objects {
		for _, p := range []string{"ports", "addresses"} {
			if v := o.Props[p]; v != nil {
				for _, it := range v.Items {
					names = append(names, it.Name)
				}
			}
		}
	}
	if got := strings.Join(names, " "); got != "80 8080-8081 10.1.1.1 10.1.1.0/24 2001:db8::1-2001:db8::2" {
		t.Errorf("entries stored as %q", got)
	}
}
