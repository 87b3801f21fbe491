package dgfile

import (
	"fmt"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name, typ, sep, in string
		want               string // key=value;... or the error
	}{
		{"strings", "string", "", "\"/old\" := \"/new\",\n\"/gone\" := \"\",\n\"/keyonly\",\n", "/old=/new;/gone=;/keyonly="},
		{"bare words and no last comma", "string", "", "a := b,\nc := \"two words\"", "a=b;c=two words"},
		{"escapes", "string", "", `"say \"hi\"" := "back\\slash",`, `say "hi"=back\slash`},
		{"blank lines and CRLF", "string", "", "\r\n\"a\" := \"1\",\r\n\r\n\"b\" := \"2\",\r\n", "a=1;b=2"},
		{"own separator", "string", "=>", "\"a\" => \"x:=y\",\n", "a=x:=y"},
		{"hosts and networks", "ip", "", "host 192.0.2.7 := \"one\",\nnetwork 10.0.0.0 prefixlen 8 := \"ten\",\nnetwork 172.16.0.0 mask 255.240.0.0,\nnetwork 2001:db8:: prefixlen 32,\n", "192.0.2.7=one;10.0.0.0/8=ten;172.16.0.0/12=;2001:db8::/32="},
		{"bare prefixes", "ip", "", "10.1.2.3/16 := \"x\",\n198.51.100.1,\n", "10.1.0.0/16=x;198.51.100.1="},
		{"integers", "integer", "", "1 := \"one\",\n-2 := \"minus two\",\n", "1=one;-2=minus two"},
		{"empty", "string", "", "", ""},
		{"unclosed quote", "string", "", "\"a\" := \"b,\n", "1:8: a quoted string is not closed on its line"},
		{"two values", "string", "", "\"a\" := \"b\" \"c\",\n", `1:12: "c": a value is one word`},
		{"no value", "string", "", "\"a\" :=,\n", `1:5: ":=" needs a value`},
		{"no key", "string", "", "\n := \"b\",\n", `2:2: a record needs a key`},
		{"bad integer", "integer", "", "1 := \"a\",\nten := \"b\",\n", `2:1: "ten" is not an integer`},
		{"bad address", "ip", "", "host 10.0.0.300 := \"a\",\n", `1:6: "10.0.0.300" is not an IP address`},
		{"bad mask", "ip", "", "network 10.0.0.0 mask 255.0.255.0,\n", `1:23: "255.0.255.0" is not a mask for 10.0.0.0`},
		{"bad prefixlen", "ip", "", "network 10.0.0.0 prefixlen 33,\n", `1:28: "33" is not a prefixlen`},
		{"unknown address form", "ip", "", "range 10.0.0.1 10.0.0.9,\n", "1:1: an address record is host ADDR"},
		{"control byte", "string", "", "\"a\" := \x01,\n", "1:8: byte 0x01 is not text"},
	} {
		recs, err := Parse([]byte(tc.in), tc.typ, tc.sep)
		var got string
		if err != nil {
			got = err.Error()
		} else {
			var parts []string
			for _, r := range recs {
				parts = append(parts, fmt.Sprintf("%s=%s", r.Key, r.Value))
			}
			got = strings.Join(parts, ";")
		}
		if !strings.HasPrefix(got, tc.want) || (err == nil && got != tc.want) {
			t.Errorf("%s: got %q, want %q", tc.name, got, tc.want)
		}
	}
}

// FuzzParse: no input makes Parse panic, and what it accepts it accepts
// again once written back in BIG-IP's form.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"\"a\" := \"b\",\n", "host 1.2.3.4,\nnetwork 10.0.0.0 mask 255.0.0.0 := x,", "1 := \"x\"", ",,,", "\"\\"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, typ := range []string{"string", "ip", "integer"} {
			recs, err := Parse([]byte(s), typ, "")
			if err != nil {
				continue
			}
			var b strings.Builder
			for _, r := range recs {
				fmt.Fprintf(&b, "%s := %s,\n", quote(r.Key, typ), quote(r.Value, "string"))
			}
			again, err := Parse([]byte(b.String()), typ, "")
			if err != nil || len(again) != len(recs) {
				t.Fatalf("%s %q: written back as %q: %v", typ, s, b.String(), err)
			}
			for i := range recs {
				if again[i] != recs[i] {
					t.Fatalf("%s %q: record %d %+v became %+v", typ, s, i, recs[i], again[i])
				}
			}
		}
	})
}

func quote(s, typ string) string {
	if typ != "string" {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
