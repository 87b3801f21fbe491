package rules

import "testing"

// PROFILE::clientssl and serverssl read the profile's name; a rule asking
// for another attribute is kept, not run, and names it.
func TestProfileSSLCompile(t *testing.T) {
	if r, _ := Compile("prof", "when HTTP_REQUEST { log local0. [PROFILE::clientssl mode] }"); r == nil || len(r.Unsupported()) != 1 || r.Unsupported()[0] != "PROFILE::clientssl mode" {
		t.Errorf("PROFILE::clientssl mode: %v", r)
	}
	r := mustCompile(t, "ok", "when HTTP_REQUEST { log local0. \"[PROFILE::clientssl name] [PROFILE::serverssl name]\" }")
	if u := r.Unsupported(); len(u) != 0 {
		t.Errorf("name: unsupported %v", u)
	}
}
