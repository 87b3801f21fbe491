package objects

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/grammar"
)

// apply runs one tmsh create or modify argument list against an object of
// kind key named /Common/x and returns it printed one-line, or the error.
func apply(t *testing.T, key string, mode Mode, start *Object, args string) (string, error) {
	t.Helper()
	k := Default.Kind(key)
	if k == nil {
		t.Fatalf("no kind %q", key)
	}
	line := "create " + key + " x " + args
	st, err := grammar.ParseStatement(line, grammar.Options{})
	if err != nil {
		return "", err
	}
	o := &Object{Kind: k, Name: "/Common/x", Props: map[string]*Value{}}
	if start != nil {
		o = start.Clone()
	}
	r := &Reader{Schema: Default, Folder: "/Common", Mode: mode}
	if err := r.ReadProps(st, o, st.Items[len(k.Words)+2:]); err != nil {
		return "", err
	}
	return strings.TrimSpace(Format(o, PrintOpts{Folder: "/Common", OneLine: true})), nil
}

func TestReadCreate(t *testing.T) {
	for _, tc := range []struct {
		key, args, want, err string
	}{
		{"ltm pool", "members add { 10.1.1.1:80 10.1.1.2:http }",
			"ltm pool x { members { 10.1.1.1:http { } 10.1.1.2:http { } } }", ""},
		{"ltm pool", "members add { dead:beef::1.443 10.1.1.1%2:8080 }",
			"ltm pool x { members { dead:beef::1.https { } 10.1.1.1%2:webcache { } } }", ""},
		{"ltm pool", "members add { web1:80 { ratio 3 priority-group 2 session user-disabled } }",
			"ltm pool x { members { web1:http { priority-group 2 ratio 3 session user-disabled } } }", ""},
		{"ltm pool", "monitor http and tcp_half_open", "ltm pool x { monitor http and tcp_half_open }", ""},
		{"ltm pool", "monitor min 1 of { http /Other/tcp }", "ltm pool x { monitor min 1 of { http /Other/tcp } }", ""},
		{"ltm pool", "load-balancing-mode least-connections-member slow-ramp-time 0",
			"ltm pool x { load-balancing-mode least-connections-member slow-ramp-time 0 }", ""},
		{"ltm pool", "load-balancing-mode fastest", "", `"fastest" is not a valid value for "load-balancing-mode"`},
		{"ltm pool", "slow-ramp-time soon", "", `"soon" is not a valid value for "slow-ramp-time"`},
		{"ltm pool", "colour blue", "", `Syntax Error: "colour" unknown property (at 1:19;`},
		// The valid names start with real words: a bare flag's absence
		// (ip-forward, internal, ...) is not one.
		{"ltm virtual", "colour blue", "", `unknown property (at 1:22; expected one of: address-status, app-service,`},
		{"ltm snatpool", "members add { 10.1.1.1 /Common/10.1.1.2 10.1.1.3%2 dead::1 }",
			"ltm snatpool x { members { 10.1.1.1 10.1.1.2 10.1.1.3%2 dead::1 } }", ""},
		{"ltm snatpool", "members add { 10.1.1.1 300.1.1.1 }", "", `"300.1.1.1" is not an IP address (at 1:46;`},
		{"ltm snatpool", "members add { dead::beef::1 }", "", `"dead::beef::1" is not an IP address`},
		// A name: an ltm snat-translation's (TestSnatPoolMemberNames).
		{"ltm snatpool", "members add { foo /Common/xlat_1 }", "ltm snatpool x { members { foo xlat_1 } }", ""},
		{"ltm snatpool", "members add { a$b }", "", `"a$b" is not an IP address`},
		{"ltm pool", "members add { 10.1.1.1 }", "", "a pool member is written node:port"},
		{"ltm pool", "members add { 10.1.1.1:99999 }", "", "is not a port"},
		{"ltm virtual", "destination 10.1.1.5:https disabled pool /Common/p1 profiles add { tcp { context clientside } }",
			"ltm virtual x { destination 10.1.1.5:https disabled pool p1 profiles { tcp { context clientside } } }", ""},
		{"ltm virtual", "destination 10.1.1.5", "", "a destination is written address:port"},
		{"ltm virtual", "source-address-translation { type snat pool sp1 }",
			"ltm virtual x { source-address-translation { pool sp1 type snat } }", ""},
		{"ltm virtual", "source-address-translation { type magic }", "", `"magic" is not a valid value for "type"`},
		{"ltm virtual", "rules { r1 /Other/r2 }", "ltm virtual x { rules { r1 /Other/r2 } }", ""},
		{"ltm virtual", "vs-index 3", "", `"vs-index" is read-only`},
		{"ltm monitor http", `send "GET / HTTP/1.1\r\nHost: a\r\n\r\n" recv "200 OK"`,
			`ltm monitor http x { recv "200 OK" send "GET / HTTP/1.1\r\nHost: a\r\n\r\n" }`, ""},
		{"ltm data-group internal", "type ip records add { 10.0.0.0/8 { data inside } 192.0.2.1/32 { } }",
			"ltm data-group internal x { records { 10.0.0.0/8 { data inside } 192.0.2.1/32 { } } type ip }", ""},
		{"ltm snatpool", "members add { 10.9.9.9 10.9.9.10 }", "ltm snatpool x { members { 10.9.9.9 10.9.9.10 } }", ""},
		{"ltm pool", "{ members { 10.1.1.1:80 { address 10.1.1.1 } } description \"a b\" }",
			`ltm pool x { description "a b" members { 10.1.1.1:http { address 10.1.1.1 } } }`, ""},
	} {
		got, err := apply(t, tc.key, ModeCreate, nil, tc.args)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s: error %v, want it to contain %q", tc.key, tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s %s: %v", tc.key, tc.args, err)
		case got != tc.want:
			t.Errorf("%s %s:\n got %s\nwant %s", tc.key, tc.args, got, tc.want)
		}
	}
}

func TestReadModifyCollections(t *testing.T) {
	start := func() *Object {
		k := Default.Kind("ltm pool")
		st, _ := grammar.ParseStatement("x members add { 10.1.1.1:80 10.1.1.2:80 { ratio 2 } }", grammar.Options{})
		o := &Object{Kind: k, Name: "/Common/x", Props: map[string]*Value{}}
		r := &Reader{Schema: Default, Folder: "/Common", Mode: ModeCreate}
		if err := r.ReadProps(st, o, st.Items[1:]); err != nil {
			t.Fatal(err)
		}
		return o
	}
	for _, tc := range []struct{ args, want, err string }{
		{"members add { 10.1.1.3:80 }", "members { 10.1.1.1:http { } 10.1.1.2:http { ratio 2 } 10.1.1.3:http { } }", ""},
		{"members add { 10.1.1.1:80 }", "", "01020066:3: The requested Pool Member (/Common/10.1.1.1:80) already exists"},
		{"members delete { 10.1.1.1:80 }", "members { 10.1.1.2:http { ratio 2 } }", ""},
		{"members delete { 10.1.1.9:80 }", "", "01020036:3: The requested pool member (/Common/10.1.1.9:80) was not found."},
		{"members delete { all }", "members { }", ""},
		{"members none", "members { }", ""},
		{"members modify { 10.1.1.2:80 { ratio 5 session user-disabled } }", "members { 10.1.1.1:http { } 10.1.1.2:http { ratio 5 session user-disabled } }", ""},
		{"members modify { all { state user-down } }", "members { 10.1.1.1:http { state user-down } 10.1.1.2:http { ratio 2 state user-down } }", ""},
		{"members replace-all-with { 10.1.1.7:8080 }", "members { 10.1.1.7:webcache { } }", ""},
		{"members { 10.1.1.8:80 }", "members { 10.1.1.8:http { } }", ""},
		{"members modify { 10.1.1.2:80 { bogus 1 } }", "", `"bogus" unknown property`},
	} {
		got, err := apply(t, "ltm pool", ModeModify, start(), tc.args)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want it to contain %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.args, err)
		case got != "ltm pool x { "+tc.want+" }":
			t.Errorf("%s:\n got %s\nwant ltm pool x { %s }", tc.args, got, tc.want)
		}
	}
}

func TestReadModifyLists(t *testing.T) {
	k := Default.Kind("ltm virtual")
	o := &Object{Kind: k, Name: "/Common/x", Props: map[string]*Value{"rules": {List: []string{"/Common/a", "/Common/b"}}}}
	for _, tc := range []struct{ args, want, err string }{
		{"rules add { c }", "rules { a b c }", ""},
		{"rules delete { a }", "rules { b }", ""},
		{"rules delete { z }", "", `"/Common/z" is not in the "rules" list`},
		{"rules replace-all-with { z }", "rules { z }", ""},
		{"rules none", "rules { }", ""},
		{"rules { y x }", "rules { y x }", ""},
	} {
		got, err := apply(t, "ltm virtual", ModeModify, o, tc.args)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.args, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.args, err)
		case got != "ltm virtual x { "+tc.want+" }":
			t.Errorf("%s: got %s, want ltm virtual x { %s }", tc.args, got, tc.want)
		}
	}
}

func TestDest(t *testing.T) {
	for _, tc := range []struct{ in, canon, display, err string }{
		{"10.1.1.1:80", "/Common/10.1.1.1:80", "10.1.1.1:http", ""},
		{"/Common/10.1.1.1:http", "/Common/10.1.1.1:80", "10.1.1.1:http", ""},
		{"/Part/10.1.1.1:8080", "/Part/10.1.1.1:8080", "/Part/10.1.1.1:webcache", ""},
		{"dead:beef::1.443", "/Common/dead:beef::1.443", "dead:beef::1.https", ""},
		{"10.1.1.1%2:80", "/Common/10.1.1.1%2:80", "10.1.1.1%2:http", ""},
		{"any6.any", "/Common/any6.0", "any6.any", ""},
		{"0.0.0.0:any", "/Common/any:0", "any:any", ""},
		{"::0.80", "/Common/any6.80", "any6.http", ""},
		{"//::0.0", "", "", "a folder name is empty"},
		{"/Common//10.1.1.1:80", "", "", "a folder name is empty"},
		{"10.1.1.1", "", "", "written address:port"},
		{"10.1.1.1:http2x", "", "", "is not a port"},
		{"dead:beef::1", "", "", "an IPv6 destination is written address.port"},
	} {
		d, err := ParseDest(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if c := d.Canonical("/Common"); c != tc.canon {
			t.Errorf("%s: canonical %s, want %s", tc.in, c, tc.canon)
		}
		if s := d.Display("/Common"); s != tc.display {
			t.Errorf("%s: display %s, want %s", tc.in, s, tc.display)
		}
	}
}

// References to kept objects of unknown kinds resolve through an index that
// follows Put, Delete and Clone.
func TestLookupUnknownKinds(t *testing.T) {
	objs, err := Default.ReadConfig("x.conf", []byte("ltm profile sctp /Common/my_ssl { }\napm profile access /Common/ap { }\n"), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := NewConfig()
	for _, o := range objs {
		c.Put(o)
	}
	spec := []string{"ltm profile "}
	ssl := c.Lookup(Default, spec, "/Common/my_ssl")
	if ssl == nil || ssl.Kind != nil {
		t.Fatalf("sctp profile (a kind openltm has no table for) not found: %v", ssl)
	}
	if c.Lookup(Default, spec, "/Common/ap") != nil {
		t.Fatal("an apm profile answered an ltm profile reference")
	}
	if c.Lookup(Default, []string{"apm profile "}, "/Other/ap") == nil {
		t.Fatal("a name in another partition does not fall back to /Common")
	}
	d := c.Clone()
	d.Delete(ssl)
	if d.Lookup(Default, spec, "/Common/my_ssl") != nil {
		t.Fatal("deleted object still found")
	}
	if c.Lookup(Default, spec, "/Common/my_ssl") == nil {
		t.Fatal("deleting from a clone changed the original")
	}
	d.Put(ssl)
	d.Put(ssl) // replacing keeps one entry
	if n := len(d.unknown["/Common/my_ssl"]); n != 1 {
		t.Fatalf("%d index entries after replacing, want 1", n)
	}
}

// A member name splits into its node and port; a name without a node
// part is refused (it would create a node named "" that no load takes).
func TestSplitMember(t *testing.T) {
	for _, tc := range []struct {
		in, node string
		port     int
		err      string
	}{
		{"10.1.1.1:80", "10.1.1.1", 80, ""},
		{"/Common/web1:http", "/Common/web1", 80, ""},
		{"dead:beef::1.443", "dead:beef::1", 443, ""},
		{":0", "", 0, "the node name is empty"},
		{"/Common/:80", "", 0, "the node name is empty"},
		{"web1", "", 0, "written node:port"},
	} {
		node, port, err := SplitMember(tc.in)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.in, err, tc.err)
			}
		case err != nil || node != tc.node || port != tc.port:
			t.Errorf("%s: %q %d %v, want %q %d", tc.in, node, port, err, tc.node, tc.port)
		}
	}
}
