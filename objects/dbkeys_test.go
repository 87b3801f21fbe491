package objects

import (
	"strings"
	"testing"
)

// TestDBKeysTable: every key's default is a value it takes, names are
// unique and written as BIG-IP writes them (lower case, dotted but for
// packetfilter).
func TestDBKeysTable(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range DBKeys() {
		if seen[d.Name] {
			t.Errorf("%s twice", d.Name)
		}
		seen[d.Name] = true
		if d.Name != strings.ToLower(d.Name) || !strings.Contains(d.Name, ".") && d.Name != "packetfilter" { // BIG-IP's one undotted key here
			t.Errorf("%s: not a db key name", d.Name)
		}
		if err := d.Check(d.Default); err != nil {
			t.Errorf("%s: its default %q is refused: %v", d.Name, d.Default, err)
		}
		if d.Number && d.Min > d.Max {
			t.Errorf("%s: range %d..%d", d.Name, d.Min, d.Max)
		}
		if !d.Acted && d.Note == "" && d.Name != "tm.rstcause.pkt" {
			t.Errorf("%s: kept only, and no note says why", d.Name)
		}
	}
}

// TestDBKeyCheck: each kind of key refuses what BIG-IP refuses and names
// what it takes.
func TestDBKeyCheck(t *testing.T) {
	cases := []struct {
		key, value string
		err        string // "" when taken
	}{
		{"tm.rstcause.log", "enable", ""},
		{"tm.rstcause.log", "Enable", "invalid value (Enable) for db variable (tm.rstcause.log): expected enable or disable"},
		{"tm.rejectunmatched", "false", ""},
		{"tm.rejectunmatched", "disable", "expected true or false"},
		{"tm.maxrejectrate", "1000", ""},
		{"tm.maxrejectrate", "0", ""},
		{"tm.maxrejectrate", "-1", "expected an integer from 0 to 4294967295"},
		{"tm.maxrejectrate", "fast", "invalid value (fast)"},
		{"tm.maxrejectrate", "4294967296", "invalid value (4294967296)"},
		{"provision.cpu.afm", "100", ""},
		{"provision.cpu.afm", "101", "expected an integer from 0 to 100"},
		{"statemirror.clustermirroring", "between", ""},
		{"statemirror.clustermirroring", "across", "expected within or between"},
		{"ui.advisory.color", "orange", ""},
		{"ui.advisory.color", "purple", "expected one of blue, green, orange, red, yellow"},
		{"ui.advisory.text", "//UNCLASSIFIED//", ""},
		{"log.ssl.level", "Debug", ""}, // levels fold case, as scripts write them both ways
		{"log.ssl.level", "verbose", "expected one of emergency"},
	}
	for _, c := range cases {
		d, ok := LookupDBKey(c.key)
		if !ok {
			t.Fatalf("%s unknown", c.key)
		}
		err := d.Check(c.value)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s %s: %v", c.key, c.value, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s %s: error %v, want %q", c.key, c.value, err, c.err)
		case c.err != "" && !strings.HasPrefix(err.Error(), "01070734:3: Configuration error: DB validation exception"):
			t.Errorf("%s %s: %v is not BIG-IP's DB validation exception", c.key, c.value, err)
		}
	}
}

// TestCheckDBKey: a misspelling of a known key is refused with the name
// meant; other unknown names pass as unknown.
func TestCheckDBKey(t *testing.T) {
	cases := []struct {
		name  string
		known bool
		err   string
	}{
		{"tm.rstcause.log", true, ""},
		{"tm.rstcause.lgo", false, "01020036:3: The requested database variable (tm.rstcause.lgo) was not found; did you mean tm.rstcause.log?"},
		{"tm.maxrejectrat", false, "did you mean tm.maxrejectrate?"},
		{"bigpipe.displayservicename", false, "did you mean bigpipe.displayservicenames?"},
		{"tmm.ssl.useffdhe", false, ""}, // a BIG-IP key openltm does not know
		{"x", false, ""},
	}
	for _, c := range cases {
		known, err := CheckDBKey(c.name)
		if known != c.known {
			t.Errorf("%s: known %v", c.name, known)
		}
		if c.err == "" && err != nil || c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.err)
		}
	}
}

// TestDBListed: an unset known key lists its default; a set one its value;
// other kinds list as before.
func TestDBListed(t *testing.T) {
	k := Default.Kind("sys db")
	c := NewConfig()
	c.Put(&Object{Kind: k, Name: "tm.maxrejectrate", Props: map[string]*Value{"value": {Str: "1000"}}})
	c.Put(&Object{Kind: k, Name: "tmm.ssl.useffdhe", Props: map[string]*Value{"value": {Str: "true"}}})
	got := map[string]string{}
	prev := ""
	for _, o := range c.Listed(k) {
		if o.Name < prev {
			t.Errorf("%s listed after %s", o.Name, prev)
		}
		prev = o.Name
		got[o.Name] = k.MustProp("value").Str(o)
	}
	for name, want := range map[string]string{"tm.maxrejectrate": "1000", "tmm.ssl.useffdhe": "true", "tm.rejectunmatched": "true", "tm.rstcause.log": "disable"} {
		if got[name] != want {
			t.Errorf("%s lists %q, want %q", name, got[name], want)
		}
	}
	if len(got) != len(DBKeys())+1 {
		t.Errorf("%d keys listed, want %d", len(got), len(DBKeys())+1)
	}
	if n := len(c.Of(k)); n != 2 {
		t.Errorf("Of lists %d keys, want the 2 set (defaults are not saved)", n)
	}
}
