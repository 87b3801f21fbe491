package rules

import (
	"errors"
	"strings"
	"testing"
)

// rateClassFake is a connection a rate class can shape: it records the
// classes rateclass put it in, and knows the classes in classes.
type rateClassFake struct {
	*fakeConn
	got     []string
	classes map[string]bool
}

func (f *rateClassFake) RateClass(name string) error {
	if !f.classes[name] {
		return errors.New("rate class /Common/" + name + " not found")
	}
	f.got = append(f.got, name)
	return nil
}

// TestRateClass: rateclass puts the connection in the class named; a
// missing class, wrong arguments and a connection no class can shape
// are Tcl errors.
func TestRateClass(t *testing.T) {
	for _, c := range []struct{ expr, got, err string }{
		{"rateclass gold", "gold", ""},
		{"rateclass gold; rateclass silver", "gold silver", ""},
		{"rateclass nosuch", "", "rateclass: rate class /Common/nosuch not found"},
		{"rateclass", "", "wrong # args"},
		{"rateclass a b", "", "wrong # args"},
	} {
		f := &rateClassFake{fakeConn: newFakeConn(), classes: map[string]bool{"gold": true, "silver": true}}
		_, err := evalIn(t, f, nil, ClientAccepted, c.expr)
		if got := strings.Join(f.got, " "); got != c.got || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: classes %q, error %v; want %q, %q", c.expr, got, err, c.got, c.err)
		}
	}
	if _, err := evalIn(t, newFakeConn(), nil, ClientAccepted, "rateclass gold"); err == nil || !strings.Contains(err.Error(), "cannot be shaped by a rate class") {
		t.Errorf("a connection no class shapes: %v", err)
	}
}
