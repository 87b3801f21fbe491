package objects

import "testing"

// TestTypedRefDisabledContexts: a disabled-contexts item names the kind
// its type says, and a missing one is reported as that kind.
func TestTypedRefDisabledContexts(t *testing.T) {
	base := "gtm datacenter /Common/dc1 { }\n" +
		"gtm server /Common/s1 { datacenter /Common/dc1 addresses { 127.204.0.10 { } } }\n" +
		"gtm link /Common/l1 { datacenter /Common/dc1 router-addresses { 127.204.0.1 { } } }\n"
	app := func(ctx string) string {
		return base + "gtm distributed-app /Common/app { disabled-contexts { " + ctx + " } }\n"
	}
	for _, tc := range []struct {
		name, text string
		refused    string
	}{
		{"datacenter by default", app("/Common/dc1 { }"), ""},
		{"server", app("/Common/s1 { type server }"), ""},
		{"link", app("/Common/l1 { type link }"), ""},
		{"missing datacenter", app("/Common/nope { }"), "The requested datacenter (/Common/nope) was not found"},
		{"missing server", app("/Common/nope { type server }"), "The requested server (/Common/nope) was not found"},
		{"missing link", app("/Common/nope { type link }"), "The requested link (/Common/nope) was not found"},
		{"a server typed link", app("/Common/s1 { type link }"), "The requested link (/Common/s1) was not found"},
		{"a datacenter typed server", app("/Common/dc1 { type server }"), "The requested server (/Common/dc1) was not found"},
	} {
		checkRefusal(t, tc.name, tc.text, tc.refused)
	}
}
