package mqtt

import (
	"strings"
	"testing"
)

// TestProps: property blocks split and encode again byte for byte, and
// cut or unknown properties and out-of-range values are errors.
func TestProps(t *testing.T) {
	for _, tt := range []struct {
		name  string
		block string
		err   string
	}{
		{"empty", "", ""},
		{"byte, u16, u32, varint", "\x01\x01\x23\x00\x07\x02\x00\x00\x00\x3c\x0b\x80\x01", ""},
		{"string, binary, pair", "\x03\x00\x04text\x09\x00\x02\x00\xff\x26\x00\x01k\x00\x01v", ""},
		{"unknown id", "\x7f\x00", "unknown property 0x7f"},
		{"u32 cut", "\x02\x00\x00", "cut short"},
		{"string cut", "\x03\x00\x05abc", "cut short"},
		{"pair value missing", "\x26\x00\x01k", "cut short"},
		{"varint too long", "\x0b\x80\x80\x80\x80\x01", "cut short"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			props, err := ParseProps([]byte(tt.block))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("error %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := AppendProps(nil, props)
			if err != nil || string(b) != tt.block {
				t.Fatalf("encoded again %q %v, want %q", b, err, tt.block)
			}
		})
	}
	alias, _ := PropByName("topic_alias")
	ct, _ := PropByName("content_type")
	for _, bad := range []Prop{{Info: alias, Num: 0}, {Info: alias, Num: 65536}, {Info: ct, Value: "a\x00b"}, {Info: ct, Value: "\xff"}} {
		if _, err := AppendProps(nil, []Prop{bad}); err == nil {
			t.Errorf("%+v encoded", bad)
		}
	}
}
