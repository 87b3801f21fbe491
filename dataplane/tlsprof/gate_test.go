package tlsprof

import "testing"

// TestHandshakeGate: a gate lets max handshakes in at once and refuses
// (and counts) the others until places are given back; no bound lets
// every one in.
func TestHandshakeGate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		max       int
		steps     string // e: enter, l: leave
		admitted  string // per e: y or n
		refused   uint64
		remaining int64
	}{
		{"indefinite", 0, "eeee", "yyyy", 0, 0},
		{"two", 2, "eee", "yyn", 1, 2},
		{"a place given back", 2, "eeelee", "yynyn", 2, 2},
		{"all given back", 1, "elelee", "yyyn", 1, 1},
	} {
		g := NewHandshakeGate(tc.max)
		if (g == nil) != (tc.max <= 0) {
			t.Fatalf("%s: gate %v for max %d", tc.name, g, tc.max)
		}
		var got []byte
		for _, s := range tc.steps {
			if s == 'l' {
				g.Leave()
				continue
			}
			if g.Enter() {
				got = append(got, 'y')
			} else {
				got = append(got, 'n')
			}
		}
		if string(got) != tc.admitted || g.Refused() != tc.refused || g.Active() != tc.remaining {
			t.Errorf("%s: admitted %s refused %d active %d, want %s %d %d", tc.name, got, g.Refused(), g.Active(), tc.admitted, tc.refused, tc.remaining)
		}
	}
}
