package objects

import (
	"strings"
	"testing"
)

// Every row of the schema says where it comes from, and every kind is one
// F5 has (or says it is openltm's own).
func TestEveryRowHasASource(t *testing.T) {
	var walk func(where string, k *Kind)
	rows := 0
	walk = func(where string, k *Kind) {
		for _, p := range k.Props {
			rows++
			if strings.TrimSpace(p.Source) == "" {
				t.Errorf("%s: row %q has no source", where, p.Name)
			}
			if p.Sub != nil {
				walk(where+" "+p.Name, p.Sub)
			}
		}
	}
	for _, k := range Default.Kinds() {
		if k.Source == "" {
			t.Errorf("kind %s has no source", k.Key())
		}
		if _, ok := F5Kind(k.Words); !ok && !strings.HasPrefix(k.Source, "openltm extension") {
			t.Errorf("kind %s is not on F5's kind list and does not say it is an openltm extension", k.Key())
		}
		walk(k.Key(), k)
	}
	if rows < 500 {
		t.Errorf("only %d rows: the vocabulary lost its tables", rows)
	}
}

func TestF5Kinds(t *testing.T) {
	for _, tc := range []struct {
		words []string
		kind  string
		ok    bool
	}{
		{[]string{"net", "route", "/Common/r"}, "net route", true},
		{[]string{"ltm", "monitor", "inband", "/Common/m"}, "ltm monitor inband", true},
		{[]string{"sys", "log-config", "destination", "remote-syslog", "/Common/d"}, "sys log-config destination remote-syslog", true},
		{[]string{"apm", "policy", "access-policy", "/Common/p"}, "apm", true},
		{[]string{"ltm", "colour", "/Common/x"}, "", false},
		{[]string{"\x00\xff"}, "", false},
	} {
		k, ok := F5Kind(tc.words)
		if k != tc.kind || ok != tc.ok {
			t.Errorf("F5Kind(%q) = %q, %v; want %q, %v", tc.words, k, ok, tc.kind, tc.ok)
		}
	}
}

func TestF5Builtins(t *testing.T) {
	for _, tc := range []struct {
		spec []string
		name string
		want bool
	}{
		{[]string{"ltm rule"}, "/Common/_sys_https_redirect", true},
		{[]string{"ltm profile "}, "/Common/http2", true},
		{[]string{"ltm profile "}, "clientssl-secure", true},
		{[]string{"ltm monitor "}, "/Common/mysql", true},
		{[]string{"ltm persistence "}, "/Common/hash", true},
		{[]string{"ltm profile "}, "/Common/_sys_https_redirect", false},
		{[]string{"ltm pool"}, "/Common/http", false},
		{[]string{"ltm profile "}, "/Common/nope", false},
	} {
		if got := IsF5Builtin(tc.spec, tc.name); got != tc.want {
			t.Errorf("IsF5Builtin(%q, %s) = %v, want %v", tc.spec, tc.name, got, tc.want)
		}
	}
}

func TestDangleCategory(t *testing.T) {
	c := Default.Builtins()
	l := readAndCheck("ltm virtual /Common/v { destination /Common/10.1.1.1:80 profiles { /Common/wom-default-clientssl { } /Common/mine { } } }\n")
	for _, o := range l.Objects {
		c.Put(o)
	}
	got := map[string]Category{}
	for _, d := range c.Dangling(Default) {
		got[d.Ref.Name] = d.Category()
	}
	// wom-default-clientssl is shipped (builtins_more.go): no dangling
	// reference.
	if got["/Common/mine"] != Refused || len(got) != 1 {
		t.Fatalf("dangling categories %v", got)
	}
}
