package objects

import (
	"fmt"
	"strings"
	"testing"
)

// TestBlocksRefuseBadSettings: a nested block's settings are checked as
// typed, each refusal at the line and column of the bad word with what
// would be valid, as BIG-IP refuses them when the command is entered.
func TestBlocksRefuseBadSettings(t *testing.T) {
	for _, tc := range []struct {
		name, text, at, msg string
	}{
		{"hsts mode", "ltm profile http /Common/h {\n    hsts { mode maybe }\n}\n", "2:17", `"maybe" is not a valid value for "mode"`},
		{"hsts age", "ltm profile http /Common/h {\n    hsts { maximum-age forever }\n}\n", "2:24", `"forever" is not a valid value for "maximum-age"`},
		{"enforcement setting", "ltm profile http /Common/h {\n    enforcement { colour blue }\n}\n", "2:19", `"colour" unknown property`},
		{"enforcement count", "ltm profile http /Common/h {\n    enforcement { max-header-count 0 }\n}\n", "2:36", `"0" is out of range for "max-header-count"`},
		{"proxy connect", "ltm profile http /Common/h {\n    explicit-proxy { default-connect-handling maybe }\n}\n", "2:47", `"maybe" is not a valid value for "default-connect-handling"`},
		{"proxy ipv6", "ltm profile http /Common/h {\n    explicit-proxy { ipv6 perhaps }\n}\n", "2:27", `"perhaps" is not a valid value for "ipv6"`},
		{"fqdn family", "ltm node /Common/n {\n    fqdn { name a.example address-family ipv5 }\n}\n", "2:42", `"ipv5" is not a valid value for "address-family"`},
		{"fqdn setting", "ltm node /Common/n {\n    fqdn { tm-name a.example }\n}\n", "2:12", `"tm-name" unknown property`},
	} {
		l := readAndCheck(tc.text)
		r := l.Findings.Refused()
		if len(r) == 0 {
			t.Errorf("%s: loaded; BIG-IP refuses it", tc.name)
			continue
		}
		if at := fmt.Sprintf("%d:%d", r[0].Pos.Line, r[0].Pos.Column); at != tc.at || !strings.Contains(r[0].String(), tc.msg) {
			t.Errorf("%s: refused at %s with %q, want %s and %q", tc.name, at, r[0], tc.at, tc.msg)
		}
	}
}

// TestBlocksInheritEachSetting: a child profile's block keeps what its
// parent's block sets and it does not, each setting on its own, and
// all-properties lists the block as it applies, one setting per line.
func TestBlocksInheritEachSetting(t *testing.T) {
	text := "ltm profile http /Common/parent {\n    defaults-from /Common/http\n    hsts { maximum-age 600 preload enabled }\n}\n" +
		"ltm profile http /Common/child {\n    defaults-from /Common/parent\n    hsts { mode enabled }\n}\n"
	l := readAndCheck(text)
	if err := l.Err(false); err != nil {
		t.Fatal(err)
	}
	c := Default.Builtins()
	for _, o := range l.Objects {
		c.Put(o)
	}
	child := c.Get(Default.Kind("ltm profile http"), "/Common/child")
	v := c.Effective(child, "hsts")
	got := map[string]string{}
	for k, sv := range v.Sub.Props {
		got[k] = sv.Str
	}
	want := map[string]string{"mode": "enabled", "maximum-age": "600", "preload": "enabled", "include-subdomains": "enabled"}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("child hsts %s = %q, want %q (all: %v)", k, got[k], w, got)
		}
	}
	// The child's own block is unchanged: it is saved as written.
	if own := child.Props["hsts"].Sub.Props; len(own) != 1 || own["mode"].Str != "enabled" {
		t.Errorf("child's own hsts changed: %v", own)
	}
	saved := c.Text()
	if !strings.Contains(saved, "    hsts {\n        mode enabled\n    }\n") {
		t.Errorf("the child's block is not saved one setting per line:\n%s", saved)
	}
	all := Format(child, PrintOpts{Detail: DetailAll, Resolve: c.Get})
	if !strings.Contains(all, "    hsts {\n        include-subdomains enabled\n        maximum-age 600\n        mode enabled\n        preload enabled\n    }\n") {
		t.Errorf("all-properties does not list the block as it applies:\n%s", all)
	}
}
