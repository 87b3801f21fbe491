package rules

import (
	"encoding/asn1"
	"encoding/hex"
	"math/big"
	"strings"
	"testing"

	"golang.org/x/crypto/cryptobyte"
	cbasn1 "golang.org/x/crypto/cryptobyte/asn1"

	"github.com/openltm/openltm/rules/tcl"
)

// asn1Eval runs script in CLIENT_ACCEPTED, with $d set to the bytes of
// dataHex, and returns the value of its last command.
func asn1Eval(t *testing.T, dataHex, script string) (string, error) {
	t.Helper()
	body := "when CLIENT_ACCEPTED {\nset d [binary format H* {" + dataHex + "}]\nset ::r [eval {" + script + "}]\n}"
	p := NewProgram(&Env{}, mustCompile(t, "asn1", body))
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err != nil {
		return "", err
	}
	v, _ := s.Var("r")
	return v, nil
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := asn1.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestASN1DecodeGoEncoded decodes what encoding/asn1 writes.
func TestASN1DecodeGoEncoded(t *testing.T) {
	type inner struct {
		N int
		S []byte
	}
	type ldapish struct {
		ID   int
		Op   inner `asn1:"application,tag:0"`
		Flag bool
		E    asn1.Enumerated
		Bits asn1.BitString
	}
	big1, _ := new(big.Int).SetString("-123456789012345678901234567890", 10)
	for _, c := range []struct {
		name   string
		data   string
		script string
		want   string
	}{
		{"integer", mustMarshal(t, 300), `ASN1::decode $d i v; set v`, "300"},
		{"negative integer", mustMarshal(t, -129), `ASN1::decode $d i v; set v`, "-129"},
		{"int64 min", mustMarshal(t, int64(-1<<63)), `ASN1::decode $d i v; set v`, "-9223372036854775808"},
		{"big integer", mustMarshal(t, big1), `ASN1::decode $d i v; set v`, big1.String()},
		{"octet string", mustMarshal(t, []byte("cn=admin")), `ASN1::decode $d a v; set v`, "cn=admin"},
		{"boolean", mustMarshal(t, true), `ASN1::decode $d b v; set v`, "1"},
		{"enumerated", mustMarshal(t, asn1.Enumerated(7)), `ASN1::decode $d e v; set v`, "7"},
		{"bit string", mustMarshal(t, asn1.BitString{Bytes: []byte{0xa0}, BitLength: 3}), `ASN1::decode $d B v; set v`, "101"},
		{"sequence", mustMarshal(t, ldapish{ID: 5, Op: inner{3, []byte("x")}, Flag: false, E: 2, Bits: asn1.BitString{Bytes: []byte{0x80}, BitLength: 1}}),
			`set n [ASN1::decode $d "(it(ia)beB)" id tag n s f e bits]; list $n $id $tag $n $s $f $e $bits`, "1 5 96 1 x 0 2 1"},
		{"skip and length", mustMarshal(t, ldapish{ID: 5, Op: inner{3, []byte("abc")}}),
			`ASN1::decode $d "(x(xl" len; set len`, "3"},
		{"count of top-level elements", mustMarshal(t, 1) + mustMarshal(t, 2) + mustMarshal(t, 3),
			`list [ASN1::decode $d "ii" a b] $a $b`, "2 1 2"},
		{"optional tag absent", mustMarshal(t, ldapish{ID: 5, Op: inner{3, []byte("x")}}),
			`set o keep; ASN1::decode $d "(i?04at" id o n; list $id [info exists o] $n`, "5 0 96"},
		{"optional tag present", mustMarshal(t, 9) + mustMarshal(t, []byte("y")),
			`ASN1::decode $d "i?04a" n s; list $n $s`, "9 y"},
		{"optional at end", mustMarshal(t, 9),
			`set s old; ASN1::decode $d "i?a" n s; list $n [info exists s]`, "9 0"},
		{"set", mustMarshal(t, struct{ A, B int }{1, 2})[:0] + "3106020101020102",
			`ASN1::decode $d "<ii>" a b; list $a $b`, "1 2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := asn1Eval(t, c.data, c.script)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestASN1EncodeCryptobyte compares ASN1::encode with what cryptobyte,
// an independent encoder, builds, and decodes it back with encoding/asn1.
func TestASN1EncodeCryptobyte(t *testing.T) {
	build := func(f func(b *cryptobyte.Builder)) string {
		var b cryptobyte.Builder
		f(&b)
		out, err := b.Bytes()
		if err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(out)
	}
	long := strings.Repeat("z", 300)
	for _, c := range []struct {
		name, script, want string
	}{
		{"integer", `ASN1::encode DER i 300`, build(func(b *cryptobyte.Builder) { b.AddASN1Int64(300) })},
		{"negative", `ASN1::encode DER i -129`, build(func(b *cryptobyte.Builder) { b.AddASN1Int64(-129) })},
		{"zero", `ASN1::encode BER i 0`, build(func(b *cryptobyte.Builder) { b.AddASN1Int64(0) })},
		{"128", `ASN1::encode BER i 128`, build(func(b *cryptobyte.Builder) { b.AddASN1Int64(128) })},
		{"-128", `ASN1::encode BER i -128`, build(func(b *cryptobyte.Builder) { b.AddASN1Int64(-128) })},
		{"big", `ASN1::encode DER i 123456789012345678901234567890`, build(func(b *cryptobyte.Builder) {
			v, _ := new(big.Int).SetString("123456789012345678901234567890", 10)
			b.AddASN1BigInt(v)
		})},
		{"enumerated", `ASN1::encode DER e 2`, build(func(b *cryptobyte.Builder) { b.AddASN1Enum(2) })},
		{"boolean", `ASN1::encode DER bb 1 0`, build(func(b *cryptobyte.Builder) { b.AddASN1Boolean(true); b.AddASN1Boolean(false) })},
		{"octet string long", `ASN1::encode DER a ` + long, build(func(b *cryptobyte.Builder) { b.AddASN1OctetString([]byte(long)) })},
		{"bit string", `ASN1::encode DER B 101`, build(func(b *cryptobyte.Builder) { b.AddASN1BitString([]byte{0xa0}) })[:4] + "05a0"},
		{"ldap bind request", `ASN1::encode BER "(it(iaa))" 1 0x60 3 cn=admin secret`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) {
				b.AddASN1Int64(1)
				b.AddASN1(cbasn1.Tag(0x40).Constructed(), func(b *cryptobyte.Builder) {
					b.AddASN1Int64(3)
					b.AddASN1OctetString([]byte("cn=admin"))
					b.AddASN1OctetString([]byte("secret"))
				})
			})
		})},
		{"implicit tag", `ASN1::encode BER ta 0x80 secret`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.Tag(0).ContextSpecific(), func(b *cryptobyte.Builder) { b.AddBytes([]byte("secret")) })
		})},
		{"optional empty left out", `ASN1::encode BER "(i?a)" 1 {}`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SEQUENCE, func(b *cryptobyte.Builder) { b.AddASN1Int64(1) })
		})},
		{"optional tag", `ASN1::encode BER "?80a" pw`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.Tag(0).ContextSpecific(), func(b *cryptobyte.Builder) { b.AddBytes([]byte("pw")) })
		})},
		{"DER set sorted", `ASN1::encode DER "<ii>" 5 1`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddASN1Int64(1); b.AddASN1Int64(5) })
		})},
		{"BER set in order", `ASN1::encode BER "<ii>" 5 1`, build(func(b *cryptobyte.Builder) {
			b.AddASN1(cbasn1.SET, func(b *cryptobyte.Builder) { b.AddASN1Int64(5); b.AddASN1Int64(1) })
		})},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := asn1Eval(t, "", `binary scan [`+c.script+`] H* h; set h`)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
	// encoding/asn1 reads back a sequence ASN1::encode wrote.
	got, err := asn1Eval(t, "", `binary scan [ASN1::encode DER "(iab)" -5 hello 1] H* h; set h`)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		N int
		S []byte
		B bool
	}
	raw, _ := hex.DecodeString(got)
	if rest, err := asn1.Unmarshal(raw, &v); err != nil || len(rest) != 0 || v.N != -5 || string(v.S) != "hello" || !v.B {
		t.Errorf("encoding/asn1 read %+v, rest %d, err %v", v, len(rest), err)
	}
}

// TestASN1RoundTrip encodes and decodes the same values.
func TestASN1RoundTrip(t *testing.T) {
	for _, c := range []struct{ format, values string }{
		{"i", "-9223372036854775808"},
		{"i", "18446744073709551616"},
		{"(iab)", "7 {a b} 1"},
		{"(it(ia?a))", "1 96 3 cn=x {}"},
		{"<eB>", "3 1100101"},
		{"a", "[binary format H* 00ff80]"},
	} {
		script := `set vs [list ` + c.values + `]
set enc [ASN1::encode BER "` + c.format + `" {*}$vs]
set names {}
for {set k 0} {$k < [llength $vs]} {incr k} { lappend names v$k }
ASN1::decode $enc "` + c.format + `" {*}$names
set out {}
foreach n $names { if {[info exists $n]} { lappend out [set $n] } else { lappend out {} } }
expr {$out eq $vs}`
		got, err := asn1Eval(t, "", script)
		if err != nil {
			t.Fatalf("%s %s: %v", c.format, c.values, err)
		}
		if got != "1" {
			t.Errorf("%s %s: values changed in a round trip", c.format, c.values)
		}
	}
}

// TestASN1Element walks a message with the element subcommands.
func TestASN1Element(t *testing.T) {
	// SEQUENCE { INTEGER 1, [APPLICATION 0] { INTEGER 3, OCTET STRING "cn=a" } } INTEGER 9
	msg := "300e02010160090201030404" + hex.EncodeToString([]byte("cn=a")) + "020109"
	for _, c := range []struct{ name, script, want string }{
		{"tag", `ASN1::element tag $d`, "48"},
		{"size", `ASN1::element size $d`, "16"},
		{"length", `ASN1::element length $d`, "14"},
		{"next", `ASN1::decode [ASN1::element next $d] i v; set v`, "9"},
		{"next count", `ASN1::element byte_offset [ASN1::element next [ASN1::element descend $d] 2]`, "16"},
		{"descend", `set e [ASN1::element descend $d]; list [ASN1::element byte_offset $e] [ASN1::element tag $e]`, "2 2"},
		{"descend twice", `set e [ASN1::element descend [ASN1::element next [ASN1::element descend $d]]]; ASN1::decode $e ia v s; list $v $s`, "3 cn=a"},
		{"init with data", `set e [ASN1::element init DER $d]; ASN1::decode $e "(i(ia)" a b c; list $a $b $c`, "1 3 cn=a"},
		{"byte_offset set", `ASN1::decode [ASN1::element byte_offset [ASN1::element init BER $d] 16] i v; set v`, "9"},
		{"decode count then next", `set n [ASN1::decode $d "(i" id]; ASN1::decode [ASN1::element next $d $n] i v; list $n $v`, "1 9"},
		{"insert", `set e [ASN1::encode insert [ASN1::element init BER $d] 16 i 4]; ASN1::decode [ASN1::element init BER [string range $e [string first "\x00" $e 1]+1 end]] "xii" a b; list $a $b`, "4 9"},
		{"replace", `set e [ASN1::encode replace [ASN1::element init BER $d] 16 i 77]; ASN1::decode $e i v; set v`, "77"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := asn1Eval(t, msg, c.script)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestASN1Errors checks bad formats and bad data are clear Tcl errors.
func TestASN1Errors(t *testing.T) {
	for _, c := range []struct{ name, data, script, want string }{
		{"truncated value", "020201", `ASN1::decode $d i v`, "ASN1::decode: truncated element: value at byte 0"},
		{"truncated length", "0482", `ASN1::decode $d a v`, "ASN1::decode: truncated element: length at byte 0"},
		{"no data", "", `ASN1::decode $d i v`, "ASN1::decode: truncated element: no tag at byte 0"},
		{"past sequence end", "3003020101", `ASN1::decode $d "(ii" a b`, "ASN1::decode: truncated element: no tag at byte 5"},
		{"unknown format", "020101", `ASN1::decode $d z v`, `ASN1::decode: bad format "z": unknown character 'z'`},
		{"unbalanced", "020101", `ASN1::decode $d "i)" v`, `ASN1::decode: bad format "i)": unbalanced ')'`},
		{"too few variables", "3003020101", `ASN1::decode $d "(i"`, `ASN1::decode: format "(i" needs more variable names than given`},
		{"sequence expected", "020101", `ASN1::decode $d "(i" v`, "ASN1::decode: expected a constructed element (sequence or set) at byte 0"},
		{"primitive expected", "3003020101", `ASN1::decode $d i v`, "ASN1::decode: expected a primitive element at byte 0"},
		{"DER non-minimal length", "02810101", `ASN1::decode [ASN1::element init DER $d] i v`, "ASN1::decode: non-minimal length in DER at byte 0"},
		{"DER indefinite", "30800201010000", `ASN1::decode [ASN1::element init DER $d] "(i" v`, "ASN1::decode: indefinite length not allowed at byte 0"},
		{"bad boolean", "01020000", `ASN1::decode $d b v`, "ASN1::decode: bad boolean length at byte 0"},
		{"encode type", "", `ASN1::encode XER i 1`, `ASN1::encode: bad encoding type "XER": must be BER, DER, insert or replace`},
		{"encode integer", "", `ASN1::encode BER i x`, `ASN1::encode: expected integer but got "x"`},
		{"encode unclosed", "", `ASN1::encode BER "(i" 1`, `ASN1::encode: bad format "(i": unclosed ')'`},
		{"encode values", "", `ASN1::encode BER ii 1`, `ASN1::encode: format "ii" needs more values than given`},
		{"element type", "", `ASN1::element init XER`, `ASN1::element: bad encoding type "XER": must be BER or DER`},
		{"descend primitive", "020101", `ASN1::element descend $d`, "ASN1::element: cannot descend into a primitive element at byte 0"},
		{"length set", "020101", `ASN1::element length $d 3`, "ASN1::element length: changing an element's length is not supported"},
		{"deep", strings.Repeat("3080", 70), `ASN1::element size $d`, "ASN1::element: elements nested too deep at byte 130"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := asn1Eval(t, c.data, c.script)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}

// TestASN1IndefiniteBER reads BER's indefinite lengths.
func TestASN1IndefiniteBER(t *testing.T) {
	got, err := asn1Eval(t, "30800201050401410000020109", `list [ASN1::decode $d "(ia)i" a s b] $a $s $b [ASN1::element size $d]`)
	if err != nil {
		t.Fatal(err)
	}
	if got != "2 5 A 9 10" {
		t.Errorf("got %q", got)
	}
}

// FuzzASN1Decode feeds arbitrary data and formats to the decoder: it
// must return or fail, never panic or loop.
func FuzzASN1Decode(f *testing.F) {
	f.Add([]byte{0x30, 0x03, 0x02, 0x01, 0x01}, "(i)", false)
	f.Add([]byte{0x30, 0x80, 0x02, 0x01, 0x05, 0x00, 0x00}, "(i?02a)x", false)
	f.Add([]byte{0x03, 0x02, 0x04, 0xf0}, "Bt", true)
	f.Fuzz(func(t *testing.T, data []byte, format string, der bool) {
		if len(format) > 64 {
			return
		}
		e := asn1Elem{der: der, data: data}
		asn1Decode("ASN1::decode", e, format, 16, func(int, tcl.Value, bool) error { return nil })
		for off := 0; off < len(data) && off < 8; off++ {
			asn1Read("ASN1::element", data, off, der, 0)
		}
		back := asn1ElemOf(e.value())
		if back.der != der || back.off != 0 || string(back.data) != string(data) {
			t.Fatalf("element value did not read back")
		}
	})
}
