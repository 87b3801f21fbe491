package wsframe

import "testing"

// TestLimitDeflateOffer: every permessage-deflate offer bounds the
// member's window (server_max_window_bits, added or lowered) and the
// client's when the client offered client_max_window_bits; smaller
// bounds and other extensions stay as they came.
func TestLimitDeflateOffer(t *testing.T) {
	for _, c := range []struct {
		in      []string
		bits    int
		want    string
		changed bool
	}{
		{[]string{"permessage-deflate; client_max_window_bits"}, 10, "permessage-deflate; client_max_window_bits=10; server_max_window_bits=10", true},
		{[]string{"permessage-deflate"}, 12, "permessage-deflate; server_max_window_bits=12", true},
		{[]string{"permessage-deflate; server_max_window_bits=9; client_max_window_bits=8"}, 10, "permessage-deflate; server_max_window_bits=9; client_max_window_bits=8", false},
		{[]string{"permessage-deflate; server_max_window_bits=15"}, 10, "permessage-deflate; server_max_window_bits=10", true},
		{[]string{`permessage-deflate; server_max_window_bits="12"`}, 10, "permessage-deflate; server_max_window_bits=10", true},
		{[]string{"permessage-deflate; client_no_context_takeover; client_max_window_bits", "x-webkit-deflate-frame"}, 15,
			"permessage-deflate; client_no_context_takeover; client_max_window_bits=15; server_max_window_bits=15, x-webkit-deflate-frame", true},
		{[]string{"permessage-deflate; client_max_window_bits, permessage-deflate"}, 11,
			"permessage-deflate; client_max_window_bits=11; server_max_window_bits=11, permessage-deflate; server_max_window_bits=11", true},
		{[]string{"PerMessage-Deflate;Server_Max_Window_Bits=14"}, 10, "PerMessage-Deflate; Server_Max_Window_Bits=10", true},
		{[]string{"x-other; a=1"}, 10, "x-other; a=1", false},
		{[]string{" , "}, 10, "", false},
		{[]string{"permessage-deflate"}, 8, "permessage-deflate; server_max_window_bits=9", true}, // zlib's floor
		{[]string{"permessage-deflate"}, 99, "permessage-deflate; server_max_window_bits=15", true},
	} {
		var vs [][]byte
		for _, s := range c.in {
			vs = append(vs, []byte(s))
		}
		got, changed := LimitDeflateOffer(vs, c.bits)
		if string(got) != c.want || changed != c.changed {
			t.Errorf("%q bits %d: %q changed %v, want %q changed %v", c.in, c.bits, got, changed, c.want, c.changed)
		}
	}
}
