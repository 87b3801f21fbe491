package tcl

import "testing"

// Qualified variable names are global from procedures only for hosts that
// ask (tmsh scripts); iRules keep them local to the procedure.
func TestNamespaceVars(t *testing.T) {
	tests := []struct {
		ns   bool
		src  string
		want string
		err  bool
	}{
		{ns: true, src: `set tmsh::argv {a b}; proc f {} { return $tmsh::argv }; f`, want: "a b"},
		{ns: true, src: `proc f {} { set EVENT::context(k) v }; f; set EVENT::context(k)`, want: "v"},
		{ns: true, src: `proc f {} { incr n::count }; f; f; set n::count`, want: "2"},
		{ns: true, src: `set x 1; proc f {} { info exists x }; f`, want: "0"},
		{ns: false, src: `set tmsh::argv {a b}; proc f {} { return $tmsh::argv }; f`, err: true},
		{ns: false, src: `proc f {} { set n::x 1 }; f; info exists n::x`, want: "0"},
		{ns: false, src: `set ::g 1; proc f {} { return $::g }; f`, want: "1"},
	}
	for _, tc := range tests {
		in := NewInterp(NewCommands())
		in.NamespaceVars = tc.ns
		v, err := in.EvalString(tc.src)
		if tc.err {
			if err == nil {
				t.Errorf("%q (namespace vars %v): %q, want an error", tc.src, tc.ns, v.String())
			}
			continue
		}
		if err != nil || v.String() != tc.want {
			t.Errorf("%q (namespace vars %v): %q %v, want %q", tc.src, tc.ns, v.String(), err, tc.want)
		}
	}
	in := NewInterp(NewCommands())
	if _, err := in.EvalString(`proc a::b {} {}`); err != nil {
		t.Fatal(err)
	}
	if in.Proc("a::b") == nil || in.Proc("::a::b") == nil || in.Proc("c") != nil {
		t.Fatal("Proc does not find the procedures defined")
	}
}
