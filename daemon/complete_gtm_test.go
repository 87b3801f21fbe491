package daemon

import (
	"slices"
	"strings"
	"testing"
)

func TestCompletionGTM(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create gtm datacenter dc1",
		"create gtm region r1 region-members add { subnet 127.0.0.0/24 }",
		"create gtm server s1 datacenter dc1 addresses add { 127.0.0.70 { device-name a } }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ line, want, not string }{
		{"create gtm topology ", "ldns:", ""},
		{"create gtm topology ldns: ", "not subnet region datacenter pool continent country state isp", ""},
		{"create gtm topology ldns: not ", "subnet region", "not"},
		{"create gtm topology ldns: region ", "r1", ""},
		{"create gtm topology ldns: region r1 ", "server:", ""},
		{"create gtm topology ldns: region r1 server: datacenter ", "dc1", ""},
		{"create gtm topology ldns: region r1 server: datacenter dc1 ", "score order description", ""},
		{"modify gtm region r1 region-members ", "add delete modify none replace-all-with", ""},
		{"modify gtm region r1 region-members add { ", "not subnet datacenter", ""},
		{"modify gtm region r1 region-members add { not datacenter ", "dc1", ""},
		{"modify gtm region r1 region-members add { subnet 10.0.0.0/8 ", "not region", ""},
		{"modify gtm region r1 region-members delete { ", "subnet", ""},
		{"modify gtm server s1 addresses ", "add delete modify none replace-all-with", ""},
		{"modify gtm server s1 addresses modify { ", "127.0.0.70", ""},
		{"modify gtm server s1 addresses modify { 127.0.0.70 { ", "device-name translation", ""},
		{"modify gtm link l1 router-addresses ", "add delete modify none replace-all-with", ""},
	} {
		var got []string
		for _, sg := range s.Complete(tc.line) {
			got = append(got, sg.Text)
		}
		for _, w := range strings.Fields(tc.want) {
			if !slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %v, want it to offer %q", tc.line, got, w)
			}
		}
		for _, w := range strings.Fields(tc.not) {
			if slices.Contains(got, w) {
				t.Errorf("Complete(%q) = %v, want it not to offer %q", tc.line, got, w)
			}
		}
	}
}
