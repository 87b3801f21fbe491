package rules

import (
	"slices"

	"github.com/openltm/openltm/rules/tcl"
)

// PolicyInfo is what the POLICY:: commands say of a local traffic policy
// attached to a virtual server: the daemon gives it to the policy's
// compiled rule (CompilePolicy), so that the commands find the policies
// among the rules of the connection's program.
type PolicyInfo struct {
	// Name is the policy's full path (/Common/p).
	Name string
	// Rules are its rule names in ordinal order; Controls and Targets
	// what its actions control and act on.
	Rules, Controls, Targets []string
	// ConnVar and RequestVar are the connection variables its recording
	// rule keeps its matched rules in (policy.MatchVars; rules/policy
	// imports this package in its tests, so the daemon passes them).
	ConnVar, RequestVar string
}

// CompilePolicy compiles the Tcl of a policy (policy.Compile or, where
// the virtual server's iRules use the POLICY:: commands,
// policy.CompileRecording) as a rule that knows the policy it runs.
func CompilePolicy(info PolicyInfo, body string) (*Rule, error) {
	r, err := Compile("policy "+info.Name, body)
	if err != nil {
		return nil, err
	}
	r.policy = &info
	return r, nil
}

// UsesPolicyCommands reports whether the rule calls a POLICY:: command:
// only then do the policies of its virtual servers record which of
// their rules matched, a cost the other virtual servers do not pay.
func (r *Rule) UsesPolicyCommands() bool { return r.usesPolicy }

func registerPolicy(t *tcl.Commands) {
	t.Register("POLICY::names", cmdPolicyNames).Compile = policyHook
	t.Register("POLICY::rules", cmdPolicyRules).Compile = policyHook
	t.Register("POLICY::controls", cmdPolicyDescribe("POLICY::controls", func(p *PolicyInfo) []string { return p.Controls })).Compile = policyHook
	t.Register("POLICY::targets", cmdPolicyTargets).Compile = policyHook
}

// policyHook marks a rule that uses a POLICY:: command, and refuses
// when the rule is saved what the command would refuse on every run:
// a count of arguments or a literal option of no form of it.
func policyHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.usesPolicy = true
	}
	name, _ := c.Literal(0)
	n := c.NumWords()
	switch name {
	case "POLICY::names":
		if n != 2 {
			return c.Errorf(0, "wrong # args: should be \"POLICY::names active|matched|unmatched\"")
		}
		if v, lit := c.Literal(1); lit && v != "active" && v != "matched" && v != "unmatched" {
			return c.Errorf(1, "POLICY::names: bad option %q: must be active, matched or unmatched", v)
		}
	case "POLICY::rules":
		if n != 2 && n != 3 {
			return c.Errorf(0, "wrong # args: should be \"POLICY::rules ?matched? POLICY_NAME\"")
		}
		if v, lit := c.Literal(1); lit && n == 3 && v != "matched" {
			return c.Errorf(1, "POLICY::rules: bad option %q: must be matched", v)
		}
	case "POLICY::targets":
		if n > 3 {
			return c.Errorf(0, "wrong # args: should be \"POLICY::targets ?TARGET ?enable|disable??\"")
		}
		if v, lit := c.Literal(2); lit && n == 3 && v != "enable" && v != "disable" {
			return c.Errorf(2, "POLICY::targets: bad option %q: must be enable or disable", v)
		}
	default:
		if n > 2 {
			return c.Errorf(0, "wrong # args: should be \"%s ?name?\"", name)
		}
	}
	return nil
}

// policies are the policies attached to the connection's virtual
// server, in the order the virtual lists them.
func policies(in *tcl.Interp, name string) ([]*PolicyInfo, error) {
	s, _, err := sess(in, name)
	if err != nil {
		return nil, err
	}
	var out []*PolicyInfo
	for _, r := range s.prog.rules {
		if r.policy != nil {
			out = append(out, r.policy)
		}
	}
	return out, nil
}

// matched is the rules of p that matched so far: those decided once
// for the connection, then those of the request at hand.
func (p *PolicyInfo) matched(in *tcl.Interp) []string {
	var out []string
	for _, v := range []string{p.ConnVar, p.RequestVar} {
		if !in.VarExists("::" + v) {
			continue
		}
		val, err := in.GetVar("::" + v)
		if err != nil {
			continue
		}
		l, err := tcl.AsList(val)
		if err != nil {
			continue
		}
		for _, e := range l {
			out = append(out, e.String())
		}
	}
	return out
}

func strList(s []string) tcl.Value {
	out := make([]tcl.Value, len(s))
	for i, e := range s {
		out[i] = tcl.Str(e)
	}
	return tcl.List(out...)
}

// cmdPolicyNames is `POLICY::names active|matched|unmatched`: the
// attached policies, those with a rule that matched, the others.
func cmdPolicyNames(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "POLICY::names active|matched|unmatched"
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	which := args[1].String()
	if which != "active" && which != "matched" && which != "unmatched" {
		return tcl.Empty, tcl.Errorf("POLICY::names: bad option %q: must be active, matched or unmatched", which)
	}
	ps, err := policies(in, "POLICY::names")
	if err != nil {
		return tcl.Empty, err
	}
	var out []string
	for _, p := range ps {
		if which == "active" || (len(p.matched(in)) > 0) == (which == "matched") {
			out = append(out, p.Name)
		}
	}
	return strList(out), nil
}

// cmdPolicyRules is `POLICY::rules ?matched? POLICY_NAME`: the rules of
// an attached policy, or those that matched; empty for a policy the
// virtual server does not have.
func cmdPolicyRules(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "POLICY::rules ?matched? POLICY_NAME"
	matched := len(args) == 3 && args[1].String() == "matched"
	if len(args) != 2 && !matched {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	ps, err := policies(in, "POLICY::rules")
	if err != nil {
		return tcl.Empty, err
	}
	name := FullName(args[len(args)-1].String())
	for _, p := range ps {
		if p.Name != name {
			continue
		}
		if matched {
			return strList(p.matched(in)), nil
		}
		return strList(p.Rules), nil
	}
	return tcl.Empty, nil
}

// cmdPolicyDescribe is POLICY::controls and POLICY::targets: without an
// argument what the attached policies control (act on), sorted; with
// one, 1 when one of them does, else 0.
func cmdPolicyDescribe(name string, of func(*PolicyInfo) []string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(name + " ?name?")
		}
		ps, err := policies(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		var all []string
		for _, p := range ps {
			for _, c := range of(p) {
				if !slices.Contains(all, c) {
					all = append(all, c)
				}
			}
		}
		if len(args) == 2 {
			return tcl.Bool(slices.Contains(all, args[1].String())), nil
		}
		slices.Sort(all)
		return strList(all), nil
	}
}

// PolicyTargetOffVar is the connection variable whose presence switches
// a target's actions off in the policies' recording rules
// (policy.TargetOffVar, which must name the same).
func PolicyTargetOffVar(target string) string { return "__ltm_policy_target_off_" + target }

// cmdPolicyTargets is `POLICY::targets ?TARGET ?enable|disable??`: the
// targets (action operands) of the attached policies that are enabled,
// sorted; with a target, 1 when a policy acts on it and it is enabled;
// with enable or disable, the target's actions run again, or not, in
// every policy of the virtual from the next policy event of the
// connection on [M: BIG-IP does not say how long the switch lasts; here
// it lasts for the connection until switched back]. A target no
// attached policy acts on is an error there, which changes nothing.
func cmdPolicyTargets(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "POLICY::targets"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(name + " ?TARGET ?enable|disable??")
	}
	ps, err := policies(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	var all []string
	for _, p := range ps {
		for _, c := range p.Targets {
			if !slices.Contains(all, c) {
				all = append(all, c)
			}
		}
	}
	off := func(t string) bool { return in.VarExists("::" + PolicyTargetOffVar(t)) }
	switch len(args) {
	case 1:
		on := all[:0:0]
		for _, t := range all {
			if !off(t) {
				on = append(on, t)
			}
		}
		slices.Sort(on)
		return strList(on), nil
	case 2:
		t := args[1].String()
		return tcl.Bool(slices.Contains(all, t) && !off(t)), nil
	}
	t, verb := args[1].String(), args[2].String()
	if verb != "enable" && verb != "disable" {
		return tcl.Empty, tcl.Errorf("%s: bad option %q: must be enable or disable", name, verb)
	}
	if !slices.Contains(all, t) {
		return tcl.Empty, tcl.Errorf("%s: no policy of the virtual server has a %s action", name, t)
	}
	v := "::" + PolicyTargetOffVar(t)
	if verb == "disable" {
		if _, err := in.SetVar(v, tcl.Str("1")); err != nil {
			return tcl.Empty, err
		}
	} else if in.VarExists(v) {
		if err := in.UnsetVar(v); err != nil {
			return tcl.Empty, err
		}
	}
	return tcl.Empty, nil
}
