package rules

import (
	"errors"
	"strings"
	"testing"
)

func TestParseBitRate(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
		ok   bool
	}{
		{"10mbps", 10e6, true}, {"512kbps", 512e3, true}, {"1gbps", 1e9, true}, {"800bps", 800, true},
		{"2000", 2000, true}, {"0", 0, true}, {"2MBPS", 2e6, true},
		{"2furlongs", 0, false}, {"mbps", 0, false}, {"-1mbps", 0, false}, {"99999999999999999999gbps", 0, false},
	} {
		got, ok := ParseBitRate(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseBitRate(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

// TestBWCUnsupported: the BWC:: commands openltm's buckets cannot act on
// fail with a Tcl error naming what is missing, whatever their words.
func TestBWCUnsupported(t *testing.T) {
	for _, c := range []struct{ expr, want string }{
		{"BWC::priority gold 1", "BWC::priority: not supported: priority groups"},
		{"BWC::color set red", "BWC::color: not supported: traffic colors"},
		{"BWC::mark gold ip-tos 10", "BWC::mark: not supported: the policy's packet marking"},
		{"BWC::measure start", "BWC::measure: not supported: measurement"},
		{"BWC::debug on", "BWC::debug: not supported"},
	} {
		name := strings.Fields(c.expr)[0]
		r, err := Compile("r", "when CLIENT_ACCEPTED { "+c.expr+" }")
		var ue *UnsupportedError
		if !errors.As(err, &ue) || r == nil || len(r.Unsupported()) != 1 || !strings.HasPrefix(r.Unsupported()[0], name+" (") {
			t.Errorf("%s: %v; want the rule kept with a warning naming it", c.expr, err)
		}
		_, err = evalIn(t, newFakeConn(), nil, ClientAccepted, "eval [list "+c.expr+"]")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.expr, err, c.want)
		}
	}
}
