package objects

import (
	"strings"
	"testing"
)

func TestRegionMembersAndTopologyNames(t *testing.T) {
	cases := []struct {
		name, text string
		want       string // the object as listed, one line; "" when refused
		err        string // substring of the error, with its position
	}{
		{"members of every kind", `gtm region /Common/r { region-members { subnet 10.1.2.3/8 { } not region r2 { } datacenter /Common/dc1 pool p continent EU not country US state "US/Washington" isp AOL geoip-isp x } }`,
			`gtm region /Common/r { region-members { subnet 10.0.0.0/8 { } not region /Common/r2 { } datacenter /Common/dc1 { } pool /Common/p { } continent EU { } not country US { } state US/Washington { } isp AOL { } geoip-isp x { } } }`, ""},
		{"an address is a host subnet", `gtm region /Common/r { region-members { subnet 10.0.0.1 } }`,
			`gtm region /Common/r { region-members { subnet 10.0.0.1/32 { } } }`, ""},
		{"one member typed twice is one", `gtm region /Common/r { region-members { datacenter dc1 datacenter /Common/dc1 } }`,
			`gtm region /Common/r { region-members { datacenter /Common/dc1 { } } }`, ""},
		{"unknown kind", `gtm region /Common/r { region-members { planet mars } }`, "", `"planet" is not a region member kind (at t.conf:1:41`},
		{"bad subnet", `gtm region /Common/r { region-members { not subnet 10.0.0.300/8 } }`, "", `subnet 10.0.0.300/8 is not an address/prefix (e.g. 10.0.0.0/8) (at t.conf:1:52`},
		{"member with properties", `gtm region /Common/r { region-members { subnet 10.0.0.0/8 { score 1 } } }`, "", "takes no properties"},
		{"not alone", `gtm region /Common/r { region-members { not } }`, "", `"not" needs a match kind`},
		{"topology canonical", `gtm topology ldns: subnet 10.1.0.0/16 server: not datacenter dc1 { score 100 }`,
			`gtm topology ldns: subnet 10.1.0.0/16 server: not datacenter /Common/dc1 { score 100 }`, ""},
		{"topology properties after the name", `gtm topology ldns: region /Common/r server: pool p order 2 score 50`,
			`gtm topology ldns: region /Common/r server: pool /Common/p { order 2 score 50 }`, ""},
		{"a value with a space stays one word", `gtm region /Common/r { region-members { state "US/New York" not state "US/New Hampshire" } }`,
			`gtm region /Common/r { region-members { state "US/New York" { } not state "US/New Hampshire" { } } }`, ""},
		{"topology with a quoted state", `gtm topology ldns: not isp AOL server: state "US/New Hampshire" { order 3 }`,
			`gtm topology ldns: not isp AOL server: state "US/New Hampshire" { order 3 }`, ""},
		{"topology without a server side", `gtm topology ldns: subnet 10.0.0.0/8 server: { score 1 }`, "", "server: needs one of subnet"},
		{"topology with an unknown kind", `gtm topology ldns: planet mars server: subnet 10.0.0.0/8 { }`, "", "geoip-isp (at t.conf:1:20"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			objs, err := Default.ReadConfig("t.conf", []byte(c.text), nil)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			text := Format(objs[0], PrintOpts{})
			got := strings.Join(strings.Fields(text), " ")
			if got != c.want {
				t.Fatalf("listed\n%s\nwant\n%s", got, c.want)
			}
			// What is listed reads back as the same object.
			again, err := Default.ReadConfig("t.conf", []byte(text), nil)
			if err != nil {
				t.Fatalf("listed text does not read back: %v\n%s", err, text)
			}
			if back := Format(again[0], PrintOpts{}); back != text {
				t.Fatalf("read back as\n%s\nnot\n%s", back, text)
			}
		})
	}
}
