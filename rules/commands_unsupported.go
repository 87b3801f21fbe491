package rules

import "github.com/openltm/openltm/rules/tcl"

// registerUnsupported adds F5 commands whose underlying thing openltm
// lacks, each with the reason: a rule naming one is kept with a warning
// that says why, and not run, as one with TCP::setmss is (an answer it
// could mistake for "no threat", "no limit" or "done" would be worse
// than no answer); the command itself, should a script build the call
// at run time, is a Tcl error with the same reason.
func registerUnsupported(t *tcl.Commands, reasons map[string]string) {
	for name, why := range reasons {
		t.Register(name, func(*tcl.Interp, []tcl.Value) (tcl.Value, error) {
			return tcl.Empty, tcl.Errorf("%s: not supported: %s", name, why)
		}).Compile = func(c *tcl.Compiler) error {
			if r, ok := c.Context().(*Rule); ok {
				line, col := c.Pos(0)
				r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: name + " (" + why + ")", Line: line, Col: col})
			}
			return nil
		}
	}
}
