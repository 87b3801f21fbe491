package objects

import (
	"slices"
	"strings"
	"testing"
)

// A reference to an object openltm keeps and does not act on warns, in a
// loaded file (CheckRefs) and for tmsh (KeptRefs) alike; a kept profile's
// defaults-from naming its own kind's built-in does not warn a second time.
func TestKeptRefs(t *testing.T) {
	const (
		sctp = "ltm profile sctp /Common/sc1 { }\n"
		ca   = "ltm profile certificate-authority /Common/ca1 {\n    defaults-from /Common/certificateauthority\n}\n"
		vs   = "ltm virtual /Common/vs {\n    destination /Common/127.245.0.1:80\n    ip-protocol tcp\n    profiles {\n%s    }\n}\n"
	)
	for _, tc := range []struct {
		name, text, obj string
		want            []string // the "refers to" warnings, in order
	}{
		{"virtual names an sctp profile", sctp + strings.Replace(vs, "%s", "        /Common/sc1 { }\n", 1), "ltm virtual /Common/vs",
			[]string{"ltm virtual /Common/vs refers to ltm profile sctp /Common/sc1, which openltm does not act on"}},
		{"virtual names a certificate-authority profile", ca + strings.Replace(vs, "%s", "        /Common/tcp { }\n        /Common/ca1 { }\n", 1), "ltm virtual /Common/vs",
			[]string{"ltm virtual /Common/vs refers to ltm profile certificate-authority /Common/ca1, which openltm does not act on"}},
		{"kept profile's defaults-from its kind's built-in", ca, "ltm profile certificate-authority /Common/ca1", nil},
		{"virtual names tcp only", strings.Replace(vs, "%s", "        /Common/tcp { }\n", 1), "ltm virtual /Common/vs", nil},
		// F5's built-ins of kinds kept verbatim: they exist on a BIG-IP.
		{"virtual names the built-in qoe and sctp profiles", strings.Replace(vs, "%s", "        /Common/tcp { }\n        /Common/qoe { }\n        /Common/sctp { }\n", 1), "ltm virtual /Common/vs",
			[]string{"ltm virtual /Common/vs refers to ltm profile qoe /Common/qoe, which openltm does not act on",
				"ltm virtual /Common/vs refers to ltm profile sctp /Common/sctp, which openltm does not act on"}},
		{"virtual names the built-in ipsecalg profile", strings.Replace(vs, "%s", "        /Common/ipsecalg { }\n", 1), "ltm virtual /Common/vs",
			[]string{"ltm virtual /Common/vs refers to ltm profile ipsecalg /Common/ipsecalg, which openltm does not act on"}},
		{"pool monitored by the built-in real_server", "ltm pool /Common/p {\n    monitor /Common/real_server\n}\n", "ltm pool /Common/p",
			[]string{"ltm pool /Common/p refers to ltm monitor real-server /Common/real_server, which openltm does not act on"}},
	} {
		l := readAndCheck(tc.text)
		if err := l.Err(false); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		var got []string
		for _, f := range l.Findings.NotActedOn() {
			if strings.Contains(f.Msg, " refers to ") {
				got = append(got, f.Msg)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: load warns %q, want %q", tc.name, got, tc.want)
		}
		c := Default.Builtins()
		for _, o := range l.Objects {
			c.Put(o)
		}
		var o *Object
		for _, x := range l.Objects {
			if x.Kind != nil && x.Kind.Key()+" "+x.Name == tc.obj {
				o = x
			}
		}
		if o == nil {
			t.Fatalf("%s: no %s", tc.name, tc.obj)
		}
		got = nil
		for _, k := range KeptRefs(Default, c, o) {
			got = append(got, k.Msg)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: KeptRefs %q, want %q", tc.name, got, tc.want)
		}
		if d := c.Dangling(Default); len(d) != 0 {
			t.Errorf("%s: dangling %v", tc.name, d)
		}
	}
}
