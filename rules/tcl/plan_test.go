package tcl

import (
	"fmt"
	"sync"
	"testing"
)

// TestPlanChosen checks which forms of if and switch run from a plan; the
// others must keep going through cmdIf and cmdSwitch, whose results the
// conformance cases compare with tclsh.
func TestPlanChosen(t *testing.T) {
	tests := []struct {
		src  string
		plan bool
	}{
		{`if {$x} {set a 1}`, true},
		{`if {$x} then {set a 1} elseif {$y} {set a 2} else {set a 3}`, true},
		{`if {$x} {set a 1} {set a 2}`, true},
		{`if {$x} {set a 1} else`, false},
		{`if {$x} {set a 1} else {set a 2} extra`, false},
		{`if $x {set a 1}`, false},
		{`if {$x} $body`, false},
		{`switch $x {a {set r 1} default {set r 2}}`, true},
		{`switch -glob -- [string tolower $x] {"api.*" {set r 1} b - c {set r 2}}`, true},
		{`switch -exact -nocase -- $x a {set r 1} b {set r 2}`, true},
		{`switch $x a {set r 1} b {set r 2}`, false}, // $x may be an option
		{`switch -regexp $x {a {set r 1}}`, false},
		{`switch -glob -matchvar m $x {a {set r 1}}`, false},
		{`switch $opt $x {a {set r 1}}`, false},
		{`switch $x $cases`, false},
		{`switch $x {a}`, false},
		{`switch $x {a -}`, false},
		{`switch $x {a {set r 1} {*}$more}`, false},
		{`set a 1`, false},
	}
	cmds := NewCommands()
	for _, tc := range tests {
		s, err := CompileWith(cmds, nil, "t", tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		if got := s.cmds[0].plan != nil; got != tc.plan {
			t.Errorf("%s: plan %v, want %v", tc.src, got, tc.plan)
		}
	}
}

func TestGlobShape(t *testing.T) {
	tests := []struct {
		pat           string
		equal, prefix bool
	}{
		{"api.example.com", true, false},
		{"api.*", false, true},
		{"*", false, true},
		{"", true, false},
		{"a*b", false, false},
		{"a**", false, false},
		{"a?", false, false},
		{"[ab]*", false, false},
		{`a\*`, false, false},
		{"é*", false, false},
	}
	for _, tc := range tests {
		e, p := globShape(tc.pat)
		if e != tc.equal || p != tc.prefix {
			t.Errorf("%q: equal %v prefix %v, want %v %v", tc.pat, e, p, tc.equal, tc.prefix)
		}
		if !tc.equal && !tc.prefix {
			continue
		}
		// the byte comparison agrees with globMatch
		for _, s := range []string{"", "api.", "api.example.com", "api.example.com.x", "x"} {
			fast := tc.pat == s
			if tc.prefix {
				fast = len(s) >= len(tc.pat)-1 && s[:len(tc.pat)-1] == tc.pat[:len(tc.pat)-1]
			}
			if want := GlobMatch(tc.pat, s, false); fast != want {
				t.Errorf("%q against %q: %v, globMatch %v", tc.pat, s, fast, want)
			}
		}
	}
}

// TestPlansShared runs one compiled script from several interpreters at
// once, as connections do: plans and literal arguments are shared and
// must only be read (run with -race).
func TestPlansShared(t *testing.T) {
	cmds := NewCommands()
	s, err := CompileWith(cmds, nil, "t", `
		switch -glob [string tolower $h] {
			"api.*" { set r api }
			"www.*" { if {$n % 2 == 0} { set r even } else { set r odd } }
			default { set r other }
		}
		lappend out $r`)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := NewInterp(cmds)
			for n := range 200 {
				h := []string{"API.x", "www.y", "z"}[(n+g)%3]
				in.SetVar("h", Str(h))
				in.SetVar("n", Int(int64(n)))
				in.SetVar("out", Empty)
				if _, err := in.Eval(s); err != nil {
					errs <- err
					return
				}
				want := map[string]string{"API.x": "api", "z": "other"}[h]
				if want == "" {
					want = []string{"even", "odd"}[n%2]
				}
				if got, _ := in.GetVar("out"); got.String() != want {
					errs <- fmt.Errorf("%s %d: got %q, want %q", h, n, got.String(), want)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
