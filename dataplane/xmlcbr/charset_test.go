package xmlcbr

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/unicode"
)

// encode returns s in enc (the test's documents are all encodable).
func encode(t *testing.T, enc encoding.Encoding, s string) []byte {
	t.Helper()
	b, err := enc.NewEncoder().Bytes([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestEvaluateEncodings(t *testing.T) {
	doc := func(label string) string {
		return `<?xml version="1.0" encoding="` + label + `"?><order><city>Zürich</city><note>café «noël»</note></order>`
	}
	be := unicode.UTF16(unicode.BigEndian, unicode.UseBOM)
	le := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM)
	leNoBOM := unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	beNoBOM := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	want := []Match{{"//city", "Zürich"}, {"//note", "café «noël»"}}
	for _, tc := range []struct {
		name string
		body []byte
		want []Match
		err  error
	}{
		{"UTF-8", []byte(doc("UTF-8")), want, nil},
		{"ISO-8859-1", encode(t, charmap.ISO8859_1, doc("ISO-8859-1")), want, nil},
		{"latin1 alias", encode(t, charmap.ISO8859_1, doc("latin1")), want, nil},
		{"windows-1252", encode(t, charmap.Windows1252, doc("windows-1252")), want, nil},
		{"ISO-8859-15", encode(t, charmap.ISO8859_15, doc("ISO-8859-15")), want, nil},
		{"UTF-16BE with a BOM", encode(t, be, doc("UTF-16")), want, nil},
		{"UTF-16LE with a BOM", encode(t, le, doc("UTF-16")), want, nil},
		{"UTF-16LE without a BOM", encode(t, leNoBOM, doc("UTF-16LE")), want, nil},
		{"UTF-16BE without a declaration", encode(t, be, `<order><city>Zürich</city><note>café «noël»</note></order>`), want, nil},
		{"UTF-16 with trailing white space", append(encode(t, beNoBOM, doc("UTF-16BE")), 0, '\n'), want, nil},
		{"Shift_JIS", encode(t, japanese.ShiftJIS, `<?xml version="1.0" encoding="Shift_JIS"?><order><city>東京</city><note>x</note></order>`),
			[]Match{{"//city", "東京"}, {"//note", "x"}}, nil},
		{"unknown encoding", []byte(doc("x-no-such")), nil, ErrMalformed},
		{"declares UTF-16 but is not", []byte(doc("UTF-16")), nil, ErrMalformed},
		{"UTF-16 declaring another encoding", encode(t, be, doc("ISO-8859-1")), nil, ErrMalformed},
		{"UTF-16 of an odd length", append(encode(t, be, doc("UTF-16")), '>'), nil, ErrMalformed},
		{"UTF-16 with a lone surrogate", append(encode(t, beNoBOM, "<a>"), 0xd8, 0x00, 0, '<', 0, '/', 0, 'a', 0, '>'), nil, ErrMalformed},
		{"ISO-8859-1 read as UTF-8", encode(t, charmap.ISO8859_1, doc("UTF-8")), nil, ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Compile("/Common/x", nil, []string{"//city", "//note"}, true)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Evaluate(tc.body, nil)
			if !errors.Is(err, tc.err) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("matches %q, want %q", got, tc.want)
			}
		})
	}
}

func TestWalk(t *testing.T) {
	const doc = `<?xml version="1.0"?><s:Env xmlns:s="urn:s"><s:Body>` +
		`<Order id="7" kind="a&amp;b"><Item>one</Item><Item><![CDATA[<two>]]></Item></Order>` +
		"\n  <Empty/></s:Body></s:Env>"
	walk := func(body []byte, stopAt int) ([]string, error) {
		var got []string
		err := Walk(body, func(n *Node) bool {
			s := [...]string{"BEGIN_DOCUMENT", "BEGIN_ELEMENT", "CDATA", "END_ELEMENT", "END_DOCUMENT"}[n.Kind]
			if n.Kind != BeginDocument && n.Kind != EndDocument {
				s += " " + n.Name + " " + n.Path + " " + strconv.Itoa(n.Depth)
			}
			for _, a := range n.Attrs {
				s += " @" + a.Name.Local + "=" + a.Value
			}
			if n.Kind == CData {
				s += " " + n.Text
			}
			got = append(got, s)
			return len(got) != stopAt
		})
		return got, err
	}
	want := []string{
		"BEGIN_DOCUMENT",
		"BEGIN_ELEMENT s:Env /s:Env 1 @s=urn:s",
		"BEGIN_ELEMENT s:Body /s:Env/s:Body 2",
		"BEGIN_ELEMENT Order /s:Env/s:Body/Order 3 @id=7 @kind=a&b",
		"BEGIN_ELEMENT Item /s:Env/s:Body/Order/Item 4",
		"CDATA Item /s:Env/s:Body/Order/Item 4 one",
		"END_ELEMENT Item /s:Env/s:Body/Order/Item 4",
		"BEGIN_ELEMENT Item /s:Env/s:Body/Order/Item[2] 4",
		"CDATA Item /s:Env/s:Body/Order/Item[2] 4 <two>",
		"END_ELEMENT Item /s:Env/s:Body/Order/Item[2] 4",
		"END_ELEMENT Order /s:Env/s:Body/Order 3",
		"BEGIN_ELEMENT Empty /s:Env/s:Body/Empty 3",
		"END_ELEMENT Empty /s:Env/s:Body/Empty 3",
		"END_ELEMENT s:Body /s:Env/s:Body 2",
		"END_ELEMENT s:Env /s:Env 1",
		"END_DOCUMENT",
	}
	got, err := walk([]byte(doc), -1)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("walk: %v\n%s\nwant\n%s", err, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same document in UTF-16 and in ISO-8859-1 walks the same.
	got, err = walk(encode(t, unicode.UTF16(unicode.LittleEndian, unicode.UseBOM), doc), -1)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("UTF-16 walk: %v\n%s", err, strings.Join(got, "\n"))
	}
	latin := `<?xml version="1.0" encoding="ISO-8859-1"?><a>Zürich</a>`
	got, err = walk(encode(t, charmap.ISO8859_1, latin), -1)
	if err != nil || len(got) != 5 || got[2] != "CDATA a /a 1 Zürich" {
		t.Fatalf("ISO-8859-1 walk: %v %q", err, got)
	}
	// A callback that says stop ends the walk there.
	if got, err := walk([]byte(doc), 3); err != nil || len(got) != 3 {
		t.Fatalf("stopped walk: %v %q", err, got)
	}
	// A malformed document gives no event.
	if got, err := walk([]byte("<a><b></a>"), -1); !errors.Is(err, ErrMalformed) || len(got) != 0 {
		t.Fatalf("malformed: %v %q", err, got)
	}
}
