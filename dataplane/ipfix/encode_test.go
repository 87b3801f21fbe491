package ipfix

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"
)

func el(t *testing.T, name string) *Element {
	t.Helper()
	e, ok := IANA().Lookup(name)
	if !ok {
		t.Fatalf("no element %s", name)
	}
	return e
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRFC7011AppendixA encodes RFC 7011's appendix A.2 template set and
// A.3 data set (counters in reduced-size encoding, four octets) and
// compares the octets.
func TestRFC7011AppendixA(t *testing.T) {
	tm := NewTemplate(256, []Field{
		{Elem: el(t, "sourceIPv4Address")},
		{Elem: el(t, "destinationIPv4Address")},
		{Elem: el(t, "ipNextHopIPv4Address")},
		{Elem: el(t, "packetDeltaCount"), Len: 4},
		{Elem: el(t, "octetDeltaCount"), Len: 4},
	})
	rows := [][5]string{
		{"192.0.2.12", "192.0.2.254", "192.0.2.1", "5009", "5344385"},
		{"192.0.2.27", "192.0.2.23", "192.0.2.2", "748", "388934"},
		{"192.0.2.56", "192.0.2.65", "192.0.2.3", "5", "6534"},
	}
	var m Message
	m.Begin(IPFIX, nil)
	m.Template(tm)
	var r Record
	for _, row := range rows {
		r.Reset(tm)
		for i, v := range row {
			if err := r.Set(tm.Fields[i].Elem.Name, 0, v); err != nil {
				t.Fatal(err)
			}
		}
		m.Data(tm, r.AppendIPFIX(nil))
	}
	got := m.Finish(Header{ExportTime: 0x4A4A4A4A, Sequence: 7, Domain: 12345678})
	want := unhex(t, `
		000a 006c 4a4a4a4a 00000007 00bc614e
		0002 001c  0100 0005  0008 0004 000c 0004 000f 0004 0002 0004 0001 0004
		0100 0040
		c000020c c00002fe c0000201 00001391 00518c81
		c000021b c0000217 c0000202 000002ec 0005ef46
		c0000238 c0000241 c0000203 00000005 00001986`)
	if !bytes.Equal(got, want) {
		t.Fatalf("message:\n got %x\nwant %x", got, want)
	}
}

// TestEncodeFields is a table of single fields: each type's encoding,
// the variable-length forms of RFC 7011 section 7, and what is refused.
func TestEncodeFields(t *testing.T) {
	long := strings.Repeat("a", 300)
	custom := func(typ DataType, size uint32) *Element {
		e, err := NewElement("x", 3375, 100, typ, size)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	for _, c := range []struct {
		name  string
		elem  *Element
		value string
		want  string // hex of the IPFIX record; "" with err
		v9    string // hex of the v9 record, when it differs
		err   string
	}{
		{"u8", el(t, "protocolIdentifier"), "6", "06", "", ""},
		{"u16", el(t, "destinationTransportPort"), "443", "01bb", "", ""},
		{"u16 hex", el(t, "destinationTransportPort"), "0x50", "0050", "", ""},
		{"u16 too big", el(t, "destinationTransportPort"), "70000", "", "", "does not fit in 2 octets"},
		{"u64", el(t, "octetDeltaCount"), "1099511627776", "0000010000000000", "", ""},
		{"unsigned negative", el(t, "octetDeltaCount"), "-1", "", "", "negative"},
		{"not a number", el(t, "octetDeltaCount"), "lots", "", "", "not an unsigned integer"},
		{"ipv4", el(t, "sourceIPv4Address"), "10.1.2.3", "0a010203", "", ""},
		{"ipv4 route domain", el(t, "sourceIPv4Address"), "10.1.2.3%2", "0a010203", "", ""},
		{"ipv4 refuses v6", el(t, "sourceIPv4Address"), "2001:db8::1", "", "", "not an IPv4 address"},
		{"ipv6", el(t, "sourceIPv6Address"), "2001:db8::1", "20010db8000000000000000000000001", "", ""},
		{"ipv6 mapped", el(t, "sourceIPv6Address"), "192.0.2.1", "00000000000000000000ffffc0000201", "", ""},
		{"mac", el(t, "sourceMacAddress"), "00:50:56:c0:00:08", "005056c00008", "", ""},
		{"seconds", el(t, "flowStartSeconds"), "1700000000", "6553f100", "", ""},
		{"milliseconds", el(t, "flowStartMilliseconds"), "1700000000123", "0000018bcfe5687b", "", ""},
		// NTP: 1700000000 + 2208988800 seconds, half a second.
		{"microseconds", el(t, "flowStartMicroseconds"), "1700000000500000", "e8fe6f8080000000", "", ""},
		{"string short", el(t, "httpRequestHost"), "example.com", "0b" + hex.EncodeToString([]byte("example.com")),
			hex.EncodeToString([]byte("example.com")) + strings.Repeat("00", V9Len-11), ""},
		{"string empty", el(t, "httpRequestHost"), "", "00", strings.Repeat("00", V9Len), ""},
		{"string 255 and more", el(t, "httpRequestHost"), long, "ff012c" + hex.EncodeToString([]byte(long)),
			hex.EncodeToString([]byte(long[:V9Len])), ""},
		{"fixed string", custom(String, 4), "abcdef", "61626364", "", ""},
		{"fixed string padded", custom(String, 4), "ab", "61620000", "", ""},
		{"boolean true", custom(Boolean, 0), "true", "01", "", ""},
		{"boolean false", custom(Boolean, 0), "0", "02", "", ""},
		{"reduced u64", custom(Unsigned64, 4), "5344385", "00518c81", "", ""},
		{"signed", custom(Signed16, 0), "-2", "fffe", "", ""},
		{"signed too small", custom(Signed8, 0), "-129", "", "", "does not fit"},
		{"float32", custom(Float32, 0), "1.5", "3fc00000", "", ""},
		{"float64 reduced", custom(Float64, 4), "1.5", "3fc00000", "", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			tm := NewTemplate(300, []Field{{Elem: c.elem}})
			var r Record
			r.Reset(tm)
			err := r.Set(c.elem.Name, 0, c.value)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := hex.EncodeToString(r.AppendIPFIX(nil)); got != c.want {
				t.Errorf("ipfix %s, want %s", got, c.want)
			}
			v9 := c.v9
			if v9 == "" {
				v9 = c.want
			}
			if got := hex.EncodeToString(r.AppendV9(nil)); got != v9 {
				t.Errorf("v9 %s, want %s", got, v9)
			}
		})
	}
}

// TestTemplateEncodings: an enterprise element sets the enterprise bit
// and follows with its number (RFC 7011 section 3.2); NetFlow v9 writes
// the template in flowset 0, variable fields at V9Len, padded to four
// octets (RFC 3954 section 5), with its 20-octet header.
func TestTemplateEncodings(t *testing.T) {
	ent, err := NewElement("f5Action", 3375, 4000, String, 0)
	if err != nil {
		t.Fatal(err)
	}
	tm := NewTemplate(257, []Field{{Elem: el(t, "protocolIdentifier")}, {Elem: ent}})
	var m Message
	m.Begin(IPFIX, nil)
	m.Template(tm)
	got := m.Finish(Header{ExportTime: 1, Sequence: 2, Domain: 3})
	want := unhex(t, `000a 0024 00000001 00000002 00000003
		0002 0014 0101 0002 0004 0001 8fa0 ffff 00000d2f`)
	if !bytes.Equal(got, want) {
		t.Fatalf("ipfix template:\n got %x\nwant %x", got, want)
	}

	var r Record
	r.Reset(tm)
	r.Set("protocolIdentifier", 0, "17")
	r.Set("f5Action", 0, "drop")
	m.Begin(NetFlowV9, nil)
	m.Template(tm)
	m.Data(tm, r.AppendV9(nil))
	got = m.Finish(Header{ExportTime: 1, Sequence: 2, Domain: 3, Uptime: 4})
	want = unhex(t, `0009 0002 00000004 00000001 00000002 00000003
		0000 0010 0101 0002 0004 0001 0fa0 0020
		0101 0028 11 64726f70`+strings.Repeat("00", 28)+`000000`)
	if !bytes.Equal(got, want) {
		t.Fatalf("v9 message:\n got %x\nwant %x", got, want)
	}

	// A withdrawal is the template id and no fields.
	m.Begin(IPFIX, nil)
	m.Withdraw(tm)
	got = m.Finish(Header{})
	if want := unhex(t, `000a 0018 00000000 00000000 00000000 0002 0008 0101 0000`); !bytes.Equal(got, want) {
		t.Fatalf("withdrawal:\n got %x\nwant %x", got, want)
	}
}

// TestTemplatesAndElements: templates are made from names and shared by
// equal specs; the positions of a repeated element; custom elements are
// checked.
func TestTemplatesAndElements(t *testing.T) {
	act, err := NewElement("action", 3375, 1000, String, 0)
	if err != nil {
		t.Fatal(err)
	}
	els, err := NewElements([]*Element{act})
	if err != nil {
		t.Fatal(err)
	}
	ts := NewTemplates()
	a, err := ts.Create(els, "flowStartSeconds sourceIPv4Address tcpSourcePort action action")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := ts.Create(els, " flowStartSeconds  sourceIPv4Address tcpSourcePort\naction action")
	if a != b || a.ID != 256 {
		t.Fatalf("templates %p %p id %d: want one template, id 256", a, b, a.ID)
	}
	var r Record
	r.Reset(a)
	if err := r.Set("action", 1, "second"); err != nil {
		t.Fatal(err)
	}
	if err := r.Set("action", 2, "x"); err == nil || !strings.Contains(err.Error(), "at position 2") {
		t.Fatalf("pos 2: %v", err)
	}
	if err := r.Set("destinationIPv4Address", 0, "1.2.3.4"); err == nil || !strings.Contains(err.Error(), "no element destinationIPv4Address") {
		t.Fatalf("absent element: %v", err)
	}
	if got := r.AppendIPFIX(nil); !bytes.HasSuffix(got, []byte("\x00\x06second")) {
		t.Fatalf("record %x", got)
	}
	if _, err := ts.Create(els, "sourceIPv4Address bogusElement"); err == nil || !strings.Contains(err.Error(), `unknown IPFIX element "bogusElement"`) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := ts.Create(IANA(), "action"); err == nil {
		t.Fatal("a custom element outside its configuration was found")
	}
	if !ts.Delete(a.ID) || a.Deleted().IsZero() {
		t.Fatal("delete")
	}
	if _, ok := ts.Get(a.ID); ok {
		t.Fatal("deleted template still found")
	}
	c, _ := ts.Create(els, "flowStartSeconds sourceIPv4Address tcpSourcePort action action")
	if c == a || c.ID == a.ID {
		t.Fatal("a deleted template was given again")
	}

	for _, bad := range []struct {
		name string
		ent  uint32
		id   uint32
		typ  DataType
		size uint32
		els  bool
		err  string
	}{
		{"zero id", 1, 0, Unsigned8, 0, false, "must be 1 to 32767"},
		{"big id", 1, 40000, Unsigned8, 0, false, "must be 1 to 32767"},
		{"too long", 1, 5, Unsigned16, 4, false, "at most 2 octets"},
		{"mac reduced", 1, 5, MACAddress, 4, false, "always 6 octets"},
		{"iana name", 1, 5, Unsigned8, 0, true, "IANA element"},
		{"no enterprise", 0, 5, Unsigned8, 0, true, "enterprise-id is required"},
	} {
		name := "mine"
		if bad.name == "iana name" {
			name = "octetDeltaCount"
		}
		e, err := NewElement(name, bad.ent, bad.id, bad.typ, bad.size)
		if err == nil && bad.els {
			_, err = NewElements([]*Element{e})
		}
		if err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: err %v, want %q", bad.name, err, bad.err)
		}
	}
	if _, err := ParseType("ipv4address"); err != nil {
		t.Fatal(err)
	}
}
