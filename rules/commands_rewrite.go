package rules

import "github.com/openltm/openltm/rules/tcl"

// RewriteState is a connection's rewrite profile (uri-translation) as
// its rules leave it: REWRITE::disable turns the mapping of requests and
// responses off, REWRITE::enable back on. One switch for the connection
// from where it is turned [M: as STREAM::disable, so that a rule that
// disables in HTTP_REQUEST also leaves that request's response as the
// server wrote it]. Nil without a rewrite profile: the REWRITE::
// commands are then errors.
type RewriteState struct {
	// Off: the next messages pass without rewriting.
	Off bool
}

// SetRewrite gives the connection a rewrite profile's switch (on).
func (s *ConnState) SetRewrite() { s.rewrite = &RewriteState{} }

// Rewrite is the connection's rewrite switch; nil without a rewrite
// profile. The host reads it under the lock its events run under.
func (s *ConnState) Rewrite() *RewriteState { return s.rewrite }

func registerRewrite(t *tcl.Commands) {
	t.Register("REWRITE::disable", cmdRewriteSwitch("REWRITE::disable", true))
	t.Register("REWRITE::enable", cmdRewriteSwitch("REWRITE::enable", false))
	for _, n := range []string{"REWRITE::disable", "REWRITE::enable"} {
		cmd := t.Lookup(n)
		cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.rewriteNeeds }, cmd.Compile)
	}
}

// RewriteNeeds lists the REWRITE:: commands in the rule's when blocks,
// in source order: BIG-IP refuses the rule on a virtual server without
// a rewrite profile (01070394 [M]).
func (r *Rule) RewriteNeeds() []HTTPNeed { return inEvents(r.rewriteNeeds) }

// cmdRewriteSwitch is REWRITE::disable and REWRITE::enable.
func cmdRewriteSwitch(name string, off bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		s, _, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if s.rewrite == nil {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no rewrite profile", name)
		}
		s.rewrite.Off = off
		return tcl.Empty, nil
	}
}
