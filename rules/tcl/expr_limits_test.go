package tcl

import (
	"strconv"
	"strings"
	"testing"
)

// TestIntegerSizeLimits: shifts, powers and products refuse results
// past maxIntBits at once, and strings longer than maxNumberLen are not
// numbers, where tclsh would compute for seconds or minutes; below the
// limits, and for powers of -1, 0 and 1, the answers are tclsh's.
func TestIntegerSizeLimits(t *testing.T) {
	big6000 := "1" + strings.Repeat("8", 6000)
	for _, c := range []struct {
		expr, want, err string
	}{
		{big6000 + "**10000", "", "exponent too large"},
		{"(2**1000)**1049", "", "exponent too large"},
		{"bool((2**1000)**1048)", "1", ""},
		{"(2**65536) % 7", "2", ""},
		{"2**65537", "", "exponent too large"},
		{"1**(2**70)", "1", ""},
		{"(-1)**(2**70+1)", "-1", ""},
		{"(-1)**(2**70)", "1", ""},
		{"0**(2**70)", "0", ""},
		{"0**0", "1", ""},
		{"(-1)**-3", "-1", ""},
		{"(-1)**-4", "1", ""},
		{"1**-5", "1", ""},
		{"(-2)**-1", "0", ""},
		{"0**-1", "", "exponentiation of zero by negative power"},
		{"(1<<(1<<20)) > 0", "1", ""},
		{"1<<((1<<20)+1)", "", "integer value too large to represent"},
		{"(1<<600000)*(1<<600000)", "", "integer value too large to represent"},
		{"bool((1<<500000)*(1<<500000))", "1", ""},
		{"[string repeat 9 " + strconv.Itoa(maxNumberLen) + "] % 10", "9", ""},
		{"[string repeat 9 " + strconv.Itoa(maxNumberLen+1) + "] + 1", "", "non-numeric"},
	} {
		in := NewInterp(NewCommands())
		v, err := in.EvalExpr(Str(c.expr))
		short := c.expr
		if len(short) > 40 {
			short = short[:20] + "…" + short[len(short)-10:]
		}
		checkResult(t, short, v, err, c.want, c.err)
	}
}

// checkResult reports a result other than want, or an error that does
// not contain wantErr (when set), of the script or expression named by
// short.
func checkResult(t *testing.T, short string, v Value, err error, want, wantErr string) {
	t.Helper()
	switch {
	case wantErr != "" && (err == nil || !strings.Contains(err.Error(), wantErr)):
		t.Errorf("%s: err %v, want %q", short, err, wantErr)
	case wantErr == "" && err != nil:
		t.Errorf("%s: %v", short, err)
	case wantErr == "" && v.String() != want:
		got := v.String()
		if len(got) > 40 {
			got = got[:40] + "…"
		}
		t.Errorf("%s = %s, want %s", short, got, want)
	}
}
