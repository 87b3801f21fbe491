package rules

import (
	"strings"
	"testing"
)

// TestParseJSON: bodies parse into documents within the profile's
// maximums, anything else is an error; an unedited document renders
// the same JSON compactly.
func TestParseJSON(t *testing.T) {
	cases := []struct {
		name, in string
		lim      JSONLimits
		out      string // Render of the parsed document
		err      string
	}{
		{name: "object", in: `{"a": 1, "b": [true, null, "x\"y"], "c": {"d": 1.5e3}}`, out: `{"a":1,"b":[true,null,"x\"y"],"c":{"d":1.5e3}}`},
		{name: "replicate keys kept in order", in: `{"k":1,"j":2,"k":3}`, out: `{"k":1,"j":2,"k":3}`},
		{name: "scalar root", in: ` "hi\u0001" `, out: `"hi\u0001"`},
		{name: "big number is a literal", in: `[18446744073709551616,-9223372036854775808]`, out: `[18446744073709551616,-9223372036854775808]`},
		{name: "empty containers", in: `{"a":{},"b":[]}`, out: `{"a":{},"b":[]}`},
		{name: "bytes at the maximum", in: `[1,2]`, lim: JSONLimits{MaxBytes: 5}, out: `[1,2]`},
		{name: "bytes over the maximum", in: `[1,2] `, lim: JSONLimits{MaxBytes: 5}, err: "maximum-bytes"},
		{name: "entries at the maximum", in: `{"a":[1,2]}`, lim: JSONLimits{MaxEntries: 3}, out: `{"a":[1,2]}`},
		{name: "entries over the maximum", in: `{"a":[1,2,3]}`, lim: JSONLimits{MaxEntries: 3}, err: "maximum-entries"},
		{name: "truncated", in: `{"a":[1,2`, err: "json"},
		{name: "trailing", in: `{} {}`, err: "after the value"},
		{name: "empty", in: ``, err: "not a value"},
		{name: "not json", in: `<xml/>`, err: "invalid character"},
		{name: "too deep", in: strings.Repeat("[", 300) + strings.Repeat("]", 300), err: "deeper"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, err := ParseJSON([]byte(c.in), c.lim)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if d.Modified() {
				t.Fatal("a parsed document is modified")
			}
			if got := string(d.Render()); got != c.out {
				t.Fatalf("rendered %s, want %s", got, c.out)
			}
		})
	}
}

// TestJSONCommands: in JSON_REQUEST and JSON_RESPONSE the JSON::
// commands read and edit the message's document through element
// handles; JSON::create and JSON::parse make caches usable anywhere;
// bad input is a Tcl error and leaves the document as it was.
func TestJSONCommands(t *testing.T) {
	const doc = `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"big":1e400,"k":1,"k":2}`
	cases := []struct {
		name, body string
		ev         Event
		log        string // what the rule logged
		out        string // the document rendered after the rule ("": unchanged)
		err        string
	}{
		{name: "root type", body: `log local0. [JSON::type [JSON::root]]`, log: "object"},
		{name: "object get typed", body: `set r [JSON::root]; log local0. "[JSON::object get $r user string] [JSON::object get $r n integer] [JSON::object get $r ok boolean] [JSON::object get $r big literal]"`, log: "ann 3 1 1e400"},
		{name: "object get handle then get", body: `log local0. [JSON::get [JSON::object get [JSON::root] user]]`, log: "ann"},
		{name: "object type, size, keys", body: `set r [JSON::root]; log local0. "[JSON::object type $r tags] [JSON::object size $r] [JSON::object size $r k] [JSON::object keys $r]"`, log: "array 8 2 user n ok tags x big k k"},
		{name: "object values of a key", body: `set r [JSON::root]; set l {}; foreach v [JSON::object values $r k] { lappend l [JSON::get $v] }; log local0. $l`, log: "1 2"},
		{name: "same element same handle", body: `set r [JSON::root]; log local0. [expr {[JSON::object get $r tags] eq [JSON::object get $r tags]}]`, log: "1"},
		{name: "object set replaces and drops replicates", body: `JSON::object set [JSON::root] k string "v\"w"`,
			out: `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"big":1e400,"k":"v\"w"}`},
		{name: "object add appends a replicate", body: `JSON::object add [JSON::root] n integer 4`,
			out: `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"big":1e400,"k":1,"k":2,"n":4}`},
		{name: "object remove every k", body: `JSON::object remove [JSON::root] k`, out: `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"big":1e400}`},
		{name: "object remove by value", body: `JSON::object remove [JSON::root] k integer 2`, out: `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"big":1e400,"k":1}`},
		{name: "object set a new object and fill it", body: `set o [JSON::object set [JSON::root] meta object]; JSON::object set $o by string lb; JSON::object remove [JSON::root] big`,
			out: `{"user":"ann","n":3,"ok":true,"tags":["a","b"],"x":null,"k":1,"k":2,"meta":{"by":"lb"}}`},
		{name: "array ops", body: `set a [JSON::object get [JSON::root] tags]; JSON::array append $a integer 7; JSON::array insert $a 0 null; JSON::array set $a 1 boolean 0; JSON::array remove $a 2; log local0. "[JSON::array size $a] [JSON::array type $a 0] [JSON::array get $a 2 integer]"`,
			log: "3 null 7", out: `{"user":"ann","n":3,"ok":true,"tags":[null,false,7],"x":null,"big":1e400,"k":1,"k":2}`},
		{name: "array insert at the size appends", body: `JSON::array insert [JSON::object get [JSON::root] tags] 2 string c`,
			out: `{"user":"ann","n":3,"ok":true,"tags":["a","b","c"],"x":null,"big":1e400,"k":1,"k":2}`},
		{name: "array values", body: `set l {}; foreach v [JSON::array values [JSON::object get [JSON::root] tags]] { lappend l [JSON::get $v string] }; log local0. $l`, log: "a b"},
		{name: "set the root", body: `JSON::set [JSON::root] string HelloWorld`, out: `"HelloWorld"`},
		{name: "render the event's document", body: `JSON::object remove [JSON::root] tags; log local0. [JSON::render]`,
			log: `{"user":"ann","n":3,"ok":true,"x":null,"big":1e400,"k":1,"k":2}`, out: `{"user":"ann","n":3,"ok":true,"x":null,"big":1e400,"k":1,"k":2}`},
		{name: "create and render a cache", body: `set c [JSON::create]; set r [JSON::root $c]; log local0. [JSON::type $r]; JSON::set $r object; JSON::object set $r a array; JSON::array append [JSON::object get $r a] literal 1.50; log local0. [JSON::render $c]`,
			log: `{"a":[1.50]}`},
		{name: "parse a cache", body: `set c [JSON::parse {{"z":[1,{"y":"q"}]}}]; log local0. [JSON::object get [JSON::array get [JSON::object get [JSON::root $c] z] 1] y string]`, log: "q"},
		{name: "response side", ev: JSONResponse, body: `JSON::object set [JSON::root] n integer 9`, out: `{"user":"ann","n":9,"ok":true,"tags":["a","b"],"x":null,"big":1e400,"k":1,"k":2}`},
		{name: "wrong type asked", body: `JSON::object get [JSON::root] user integer`, err: "is string, not integer"},
		{name: "missing key", body: `JSON::object get [JSON::root] nope`, err: `no key "nope"`},
		{name: "not an object", body: `JSON::object keys [JSON::object get [JSON::root] tags]`, err: "is array, not object"},
		{name: "index out of range", body: `JSON::array get [JSON::object get [JSON::root] tags] 2`, err: "out of range"},
		{name: "bad handle", body: `JSON::type json_elem_99`, err: "not a JSON element handle"},
		{name: "bad cache", body: `JSON::root nope`, err: "not a JSON cache handle"},
		{name: "integer too big", body: `JSON::object set [JSON::root] n integer 99999999999999999999`, err: "not a 64-bit integer"},
		{name: "literal not json", body: `JSON::object set [JSON::root] n literal {1 2}`, err: "not a JSON literal"},
		{name: "bad type", body: `JSON::set [JSON::root] number 1`, err: "bad type"},
		{name: "value for null", body: `JSON::set [JSON::root] null 1`, err: "takes no value"},
		{name: "bad subcommand", body: `JSON::object frob [JSON::root]`, err: "bad subcommand"},
		{name: "bad parse", body: `JSON::parse {{"a":}}`, err: "JSON::parse"},
		{name: "root outside the JSON events", ev: HTTPRequest, body: `JSON::root`, err: "valid without a cache in JSON_REQUEST, JSON_RESPONSE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := c.ev
			if ev == 0 {
				ev = JSONRequest
			}
			r := mustCompile(t, "json", "when "+ev.String()+" { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			d, err := ParseJSON([]byte(doc), JSONLimits{MaxBytes: 65536, MaxEntries: 2048})
			if err != nil {
				t.Fatal(err)
			}
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if ev != HTTPRequest {
				s.SetJSON(d)
			}
			err = s.Run(ev)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if d.Modified() {
					t.Fatalf("document changed by a failed command: %s", d.Render())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.out == "" {
				if d.Modified() {
					t.Fatalf("document modified: %s", d.Render())
				}
				return
			}
			if !d.Modified() {
				t.Fatal("document not marked modified")
			}
			if got := string(d.Render()); got != c.out {
				t.Fatalf("rendered %s\nwant     %s", got, c.out)
			}
		})
	}
}
