package tcl

import (
	"strings"
	"testing"
)

func TestLenientBraces(t *testing.T) {
	script := "set r {}\nif {1}{ set r yes } else { set r no }\nforeach {a b} {1 2}{ append r $a$b }\nset r"
	plain := NewInterp(NewCommands())
	if _, err := plain.EvalString(script); err == nil || !strings.Contains(err.Error(), "extra characters after close-brace") {
		t.Fatalf("plain Tcl: err %v, want extra characters after close-brace", err)
	}
	cmds := NewCommands()
	cmds.Lenient = true
	in := NewInterp(cmds)
	v, err := in.EvalString(script)
	if err != nil {
		t.Fatal(err)
	}
	if v.String() != "yes12" {
		t.Errorf("got %q", v.String())
	}
	// Other tclsh refusals stay refusals.
	for _, bad := range []string{"if {1} {set x 1}else {set x 2}", `set x "a"{b}`} {
		if _, err := in.EvalString(bad); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
