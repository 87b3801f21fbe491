package fix

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// msg writes a message with | for SOH.
func msg(s string) []byte { return []byte(strings.ReplaceAll(s, "|", "\x01")) }

// The lengths and checksums below were computed apart from this
// package (the byte sum of everything before "10=", modulo 256).
var (
	logon42 = msg("8=FIX.4.2|9=65|35=A|34=1|49=BANZAI|52=20250101-10:00:00.000|56=EXEC|98=0|108=30|10=181|")
	order44 = msg("8=FIX.4.4|9=137|35=D|34=2|49=BANZAI|52=20250101-10:00:01.000|56=EXEC|11=ORD1|21=1|38=100|40=2|44=101.25|54=1|55=IBM|60=20250101-10:00:01.000|10001=desk7|10=076|")
	hb44    = msg("8=FIX.4.4|9=53|35=0|34=3|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=143|")
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name  string
		raw   []byte
		quick bool
		err   string // "" valid
		typ   string
	}{
		{"logon 4.2", logon42, false, "", "A"},
		{"order 4.4", order44, false, "", "D"},
		{"heartbeat 4.4", hb44, false, "", "0"},
		{"bad checksum", msg("8=FIX.4.4|9=53|35=0|34=3|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=144|"), false, "CheckSum 144, the message sums to 143", ""},
		{"bad checksum, quick", msg("8=FIX.4.4|9=53|35=0|34=3|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=144|"), true, "", "0"},
		{"short body length", msg("8=FIX.4.4|9=52|35=0|34=3|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=143|"), false, "BodyLength 52, the body is 53 bytes", ""},
		{"no msgtype first", msg("8=FIX.4.4|9=53|34=3|35=0|49=BANZAI|52=20250101-10:00:30.000|56=EXEC|10=143|"), false, "MsgType (35) is not the third field", ""},
		{"field without =", msg("8=FIX.4.4|9=5|35=0|x|10=000|"), false, `field "x" is not tag=value`, ""},
		{"tag not a number", msg("8=FIX.4.4|9=8|35=0|a=1|10=000|"), false, `tag "a" is not a positive number`, ""},
		{"tag zero", msg("8=FIX.4.4|9=8|35=0|0=1|10=000|"), false, `tag "0" is not a positive number`, ""},
		{"two-digit checksum", msg("8=FIX.4.4|9=5|35=0|10=00|"), false, "three-digit CheckSum", ""},
		{"no SOH at the end", msg("8=FIX.4.4|9=5|35=0|10=000"), false, "does not end with SOH", ""},
		{"no header", msg("35=0|9=5|8=FIX.4.4|10=000|"), false, "the header is not BeginString (8), BodyLength (9)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var m Message
			err := m.Parse(tc.raw, tc.quick)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				if m.MsgType() != tc.typ {
					t.Fatalf("MsgType %q, want %q", m.MsgType(), tc.typ)
				}
				// Encoding an unedited message gives its bytes back (quick
				// aside: there the checksum is computed again).
				if out := m.Encode(nil); !tc.quick && !bytes.Equal(out, tc.raw) {
					t.Fatalf("Encode:\n%q\nwant\n%q", out, tc.raw)
				}
				return
			}
			var fe *Error
			if !errors.As(err, &fe) || !strings.Contains(err.Error(), tc.err) {
				t.Fatalf("Parse: %v, want an *Error with %q", err, tc.err)
			}
		})
	}
}

func TestGetRemapEncode(t *testing.T) {
	var m Message
	if err := m.Parse(order44, false); err != nil {
		t.Fatal(err)
	}
	for tag, want := range map[int]string{49: "BANZAI", 55: "IBM", 44: "101.25", 10001: "desk7", 8: "FIX.4.4", 9: "137", 10: "076"} {
		if v, ok := m.Get(tag); !ok || string(v) != want {
			t.Fatalf("Get(%d) = %q %v, want %q", tag, v, ok, want)
		}
	}
	if _, ok := m.Get(58); ok {
		t.Fatal("Get(58) found a tag the message lacks")
	}
	if !m.Remap(map[int]int{10001: 20001, 9: 99, 10: 11}) {
		t.Fatal("Remap changed nothing")
	}
	// 10001 became 20001 (same length): BodyLength stays, the checksum
	// moves by '2'-'1'; header and trailer tags are never renumbered.
	want := msg("8=FIX.4.4|9=137|35=D|34=2|49=BANZAI|52=20250101-10:00:01.000|56=EXEC|11=ORD1|21=1|38=100|40=2|44=101.25|54=1|55=IBM|60=20250101-10:00:01.000|20001=desk7|10=077|")
	if out := m.Encode(nil); !bytes.Equal(out, want) {
		t.Fatalf("Encode:\n%q\nwant\n%q", out, want)
	}
	// A shorter tag: BodyLength and CheckSum both follow.
	m.Remap(map[int]int{20001: 7})
	out := m.Encode(nil)
	var back Message
	if err := back.Parse(out, false); err != nil {
		t.Fatalf("the re-encoded message does not parse: %v\n%q", err, out)
	}
	if v, _ := back.Get(9); string(v) != "133" {
		t.Fatalf("BodyLength %s, want 133", v)
	}
	if m.Remap(nil) || m.Remap(map[int]int{7: 7}) {
		t.Fatal("Remap reported a change it did not make")
	}
}

func TestReader(t *testing.T) {
	stream := append(append(append([]byte{}, logon42...), order44...), hb44...)
	for _, tc := range []struct {
		name string
		in   []byte
		max  int
		want [][]byte
		err  error  // the error after the messages
		msg  string // or an *Error with this text
	}{
		{"three messages", stream, 0, [][]byte{logon42, order44, hb44}, io.EOF, ""},
		{"cut in the body", stream[:len(logon42)+20], 0, [][]byte{logon42}, io.ErrUnexpectedEOF, ""},
		{"cut in the head", stream[:len(logon42)+5], 0, [][]byte{logon42}, io.ErrUnexpectedEOF, ""},
		{"past the bound", stream, 100, [][]byte{logon42}, ErrTooLarge, ""},
		{"not FIX", []byte("GET / HTTP/1.1\r\n\r\n"), 0, nil, nil, "does not begin with BeginString"},
		{"no end of head", []byte("8=" + strings.Repeat("x", 100)), 0, nil, nil, "no BodyLength within"},
		{"no BeginString", msg("9=5|8=FIX.4.4|35=0|10=000|"), 0, nil, nil, "does not begin with BeginString"},
		{"BodyLength second", msg("8=FIX.4.4|35=0|9=5|10=000|"), 0, nil, nil, "BodyLength (9) is not the second field"},
		{"BodyLength not a number", msg("8=FIX.4.4|9=-5|35=0|10=000|"), 0, nil, nil, `BodyLength "-5" is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := Reader{R: bytes.NewReader(tc.in), Max: tc.max}
			for i := 0; i < len(tc.want)+1; i++ {
				raw, err := r.Next()
				if i < len(tc.want) {
					if err != nil || !bytes.Equal(raw, tc.want[i]) {
						t.Fatalf("message %d: %q %v", i, raw, err)
					}
					continue
				}
				if tc.msg != "" {
					var fe *Error
					if !errors.As(err, &fe) || !fe.Framing || !strings.Contains(err.Error(), tc.msg) {
						t.Fatalf("error %v, want a framing error with %q", err, tc.msg)
					}
					return
				}
				if err != tc.err {
					t.Fatalf("error %v, want %v", err, tc.err)
				}
			}
		})
	}
}

func TestReverse(t *testing.T) {
	r := Reverse(map[int]int{10001: 20001, 10002: 20002})
	if len(r) != 2 || r[20001] != 10001 || r[20002] != 10002 || Reverse(nil) != nil {
		t.Fatalf("Reverse %v", r)
	}
}

// FuzzMessage: no input panics the reader or the parser, and a message
// that parses encodes to one that parses with the same fields.
func FuzzMessage(f *testing.F) {
	f.Add(logon42)
	f.Add(order44)
	f.Add(append(append([]byte{}, hb44...), logon42...))
	f.Add(msg("8=FIX.4.4|9=0|10=000|"))
	f.Fuzz(func(t *testing.T, in []byte) {
		r := Reader{R: bytes.NewReader(in), Max: 1 << 12}
		for i := 0; i < 64; i++ {
			raw, err := r.Next()
			if err != nil {
				return
			}
			var m Message
			if m.Parse(raw, false) != nil {
				continue
			}
			out := m.Encode(nil)
			var back Message
			if err := back.Parse(out, false); err != nil {
				t.Fatalf("re-encoded %q does not parse: %v", out, err)
			}
			if len(back.Fields) != len(m.Fields) {
				t.Fatalf("fields %d, want %d", len(back.Fields), len(m.Fields))
			}
		}
	})
}

func TestTagMap(t *testing.T) {
	for _, tc := range []struct {
		recs [][2]string
		err  string
	}{
		{[][2]string{{"10001", `"20001"`}, {"10002", "20002"}}, ""},
		{[][2]string{{"x", "1"}}, "does not map a tag number"},
		{[][2]string{{"10", "11"}}, "cannot be mapped"},
		{[][2]string{{"1", "3"}, {"2", "3"}}, "both map to 3"},
	} {
		m, err := TagMap(tc.recs)
		if tc.err == "" {
			if err != nil || m[10001] != 20001 || m[10002] != 20002 {
				t.Fatalf("TagMap(%v) = %v %v", tc.recs, m, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Fatalf("TagMap(%v): %v, want %q", tc.recs, err, tc.err)
		}
	}
}
