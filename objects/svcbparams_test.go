package objects

import (
	"strings"
	"testing"
)

// The member values refused at their line:column: what dataplane/gslb
// would refuse at commit.
func TestSVCBParamChecks(t *testing.T) {
	const ech = "AEH+DQA9BwAgACABCA8WHSQrMjlAR05VXGNqcXh/ho2Um6KpsLe+xczT2gAEAAEAAQAOcHVibGljLmV4LnRlc3QAAA=="
	cases := []struct {
		check func(string) error
		in    string
		want  string // error text, "" for none
	}{
		{checkECH, ech, ""},
		{checkECH, "AAAAAA==", "its length is wrong"},
		{checkECH, "not*base64", "not base64"},
		{checkECH, ech[:len(ech)-8] + "AAAAAA==", "ECHConfigList"},
		{checkDoHPath, "/dns-query{?dns}", ""},
		{checkDoHPath, "/q{?x,dns}", ""},
		{checkDoHPath, "dns-query{?dns}", "beginning with /"},
		{checkDoHPath, "/dns-query", "no {?dns} variable"},
		{checkDoHPath, "/x}{?dns}", "closes no expression"},
		{checkDoHPath, "/x{?dns", "not closed"},
		{checkDoHPath, "/a b{?dns}", "beginning with /"},
	}
	for _, c := range cases {
		err := c.check(c.in)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q: %v, want %q", c.in, err, c.want)
		}
	}
}

// A bad ech in a loaded text is refused at its line and column.
func TestSVCBParamRefusedAt(t *testing.T) {
	text := "gtm pool https /Common/p {\n    members {\n        w.ex.test {\n            priority 1\n            ech AAAAAA==\n        }\n    }\n}\n"
	err := Default.ReadText("t.conf", []byte(text), "/Common").Err(false)
	if err == nil || !strings.Contains(err.Error(), "5:17") || !strings.Contains(err.Error(), "not an ECHConfigList") {
		t.Fatalf("%v, want a refusal at 5:17", err)
	}
}
