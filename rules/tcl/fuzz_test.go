package tcl

import (
	"testing"
	"time"
)

// FuzzCompile feeds arbitrary text to the parser, strict and lenient, and
// runs what compiles under a small budget: nothing may panic or hang.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"set x 1; puts $x",
		"if {$a > 1} { set b [expr {$a * 2}] } else { set b {} }",
		"foreach {a b} {1 2 3} { lappend l \"$a-$b\" }",
		"switch -glob -- $x { a* - b* { set y 1 } default { set y 2 } }",
		"set a(k) [string map {a b} \"x\\ny\"]; {*}[list set z 1]",
		"proc p {a {b 2} args} { return [list $a $b $args] }; p 1",
		"binary scan [binary format Sa* 5 hello] S n; format %05.2f $n",
		"regsub -all {(\\w+)} {a b} {<\\1>}; scan {1 2} {%d %d}",
		"catch { error boom } m; expr {1 / 0}",
		"expr {2**64 + 0x10 - 1e3 ? \"a\" : [set b]}",
		"set s ${x}(y); # comment \\\n more",
		"while {$i < 3} { incr i; if {$i == 2} continue }",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		cmds := NewCommands()
		strict := func(name string, _ *Source, _ int) error {
			if len(name) > 3 {
				return nil
			}
			return &SyntaxError{Msg: "unknown " + name}
		}
		_, _ = CompileWith(cmds, strict, "fuzz", src)
		in := NewInterp(cmds)
		in.SleepBudget = 0
		in.SetBudget(20_000, time.Now().Add(2*time.Second))
		_, _ = in.EvalString(src)
	})
}

// FuzzList checks that any string that parses as a list formats back to a
// string that parses to the same elements.
func FuzzList(f *testing.F) {
	for _, s := range []string{"a b c", "{a b} c", `a\ b "c d"`, "{} {{}} \\{", "#a {#b}", "x\\\ny", `"a"b`, "{a}b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		elems, err := parseList(s)
		if err != nil {
			return
		}
		out := formatList(elems)
		again, err := parseList(out)
		if err != nil {
			t.Fatalf("formatted list %q does not parse: %v", out, err)
		}
		if len(again) != len(elems) {
			t.Fatalf("%q -> %q: %d elements, then %d", s, out, len(elems), len(again))
		}
		for i := range elems {
			if elems[i].String() != again[i].String() {
				t.Fatalf("%q -> %q: element %d %q became %q", s, out, i, elems[i].String(), again[i].String())
			}
		}
	})
}

// FuzzExpr compiles and evaluates arbitrary expressions.
func FuzzExpr(f *testing.F) {
	for _, s := range []string{"1+2*3", "2**100 % 7", "\"a\" eq {a} && !0", "max(1,2.5) + int(1e20)", "1 << 70 >> 3", "-0x7fffffffffffffff - 2", "$x(1) + [set y]"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		in := NewInterp(NewCommands())
		in.SleepBudget = 0
		in.SetBudget(10_000, time.Now().Add(2*time.Second))
		_, _ = in.EvalExpr(Str(s))
	})
}
