package daemon

import (
	"slices"
	"strconv"
	"strings"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
	"github.com/openltm/openltm/rules/policy"
)

// ltm policy
var (
	ltmPolicy            = schema.MustKind("ltm policy")
	specPolicy           = schema.MustSpec("ltm policy")
	virtualPolicies      = ltmVirtual.MustProp("policies")
	policyStrategy       = ltmPolicy.MustProp("strategy")
	policyStatus         = ltmPolicy.MustProp("status")
	policyRequires       = ltmPolicy.MustProp("requires")
	policyControls       = ltmPolicy.MustProp("controls")
	policyRules          = ltmPolicy.MustProp("rules")
	policyRuleOrdinal    = policyRules.Sub.MustProp("ordinal")
	policyRuleConditions = policyRules.Sub.MustProp("conditions")
	policyRuleActions    = policyRules.Sub.MustProp("actions")
	policyConditionKind  = policyRuleConditions.Sub
	policyActionKind     = policyRuleActions.Sub
)

// policyIsDraft reports whether a policy is a draft: in a Drafts folder,
// or with status draft. A draft is edited, published, and never attached.
func policyIsDraft(o *objects.Object) bool {
	return policyStatus.Str(o) == "draft" || inDrafts(o.Name)
}

// inDrafts reports whether a full path is in a Drafts folder
// (/Common/Drafts/p, /Tenant/app/Drafts/p).
func inDrafts(name string) bool {
	i := strings.LastIndexByte(name, '/')
	return i > 0 && strings.HasSuffix(name[:i], "/Drafts")
}

// policyOf reads an ltm policy for the compiler.
func policyOf(o *objects.Object) policy.Policy {
	p := policy.Policy{Name: o.Name, Strategy: "first-match"}
	if s := policyStrategy.Str(o); s != "" && s != "none" {
		p.Strategy = s[strings.LastIndexByte(s, '/')+1:]
	}
	if v := policyRequires.Get(o); v != nil {
		p.Requires = v.List
	}
	if v := policyRules.Get(o); v != nil {
		for _, it := range v.Items {
			r := policy.Rule{Name: it.Name}
			if ov := policyRuleOrdinal.In(it); ov != nil {
				r.Ordinal, _ = strconv.Atoi(ov.Str)
			}
			r.Conditions = specs(policyConditionKind, policyRuleConditions.In(it))
			r.Actions = specs(policyActionKind, policyRuleActions.In(it))
			p.Rules = append(p.Rules, r)
		}
	}
	return p
}

// specs reads a rule's numbered conditions or actions: every word and
// named value by its property, the values list apart.
func specs(k *objects.Kind, v *objects.Value) []policy.Spec {
	if v == nil {
		return nil
	}
	out := make([]policy.Spec, 0, len(v.Items))
	for _, it := range v.Items {
		s := policy.Spec{Num: it.Name, Words: map[string]string{}}
		for _, p := range k.Props {
			pv := it.Props[p.Name]
			if pv == nil {
				continue
			}
			if p.Type == objects.TList {
				s.Values = pv.List
				continue
			}
			s.Words[p.Name] = pv.Str
		}
		out = append(out, s)
	}
	return out
}

// compiledPolicy is one policy compiled once per translation.
type compiledPolicy struct {
	c    policy.Compiled
	rule *rules.Rule
	// hello is the rule for virtual servers that pass TLS through
	// (c.HelloTcl), when the policy reads the client's hello.
	hello *rules.Rule
	err   error
	// info is what the POLICY:: commands say of the policy; rec its
	// recording rules (recording), shared by the virtual servers whose
	// iRules use those commands; passthrough marks the copy of a
	// virtual server that passes TLS through, which runs the hello's rule.
	info        rules.PolicyInfo
	src         policy.Policy
	rec         *policyRecording
	passthrough bool
}

// policyRecording is a policy compiled with policy.CompileRecording,
// once, on the first virtual server that needs it.
type policyRecording struct {
	done        bool
	c           policy.Compiled
	rule, hello *rules.Rule
	err         error
}

// recording is the policy's rule that also records its matched rules,
// and its Tcl: what a virtual server whose iRules use the POLICY::
// commands runs instead of cp.rule.
func (cp *compiledPolicy) recording() (*rules.Rule, string, error) {
	r := cp.rec
	if !r.done {
		r.done = true
		r.c, r.err = policy.CompileRecording(cp.src)
		if r.err == nil {
			r.rule, r.err = rules.CompilePolicy(cp.info, r.c.Tcl)
		}
		if r.err == nil && r.c.TLS {
			r.hello, r.err = rules.CompilePolicy(cp.info, r.c.HelloTcl)
		}
	}
	if cp.passthrough {
		return r.hello, r.c.HelloTcl, r.err
	}
	return r.rule, r.c.Tcl, r.err
}

// policies compiles every policy of the configuration: one BIG-IP
// refuses is refused from every source, attached or not; one openltm
// does not run is kept with a warning.
func (t *translator) policies() {
	t.policy = map[string]*compiledPolicy{}
	for _, o := range t.cfg.Of(ltmPolicy) {
		src := policyOf(o)
		c, err := policy.Compile(src)
		cp := &compiledPolicy{c: c, err: err, src: src, rec: &policyRecording{}}
		cp.info = rules.PolicyInfo{Name: o.Name, Rules: c.Rules, Controls: c.Controls, Targets: c.Targets}
		cp.info.ConnVar, cp.info.RequestVar = policy.MatchVars(o.Name)
		if v := policyControls.Get(o); v != nil {
			for _, n := range v.List {
				if !slices.Contains(cp.info.Controls, n) {
					cp.info.Controls = append(cp.info.Controls, n)
				}
			}
		}
		switch {
		case err != nil:
			t.skipped = append(t.skipped, err.Error())
			t.refused = append(t.refused, err.Error())
		case len(c.NotRun) > 0:
			t.keep(o, "openltm does not run %s yet, nor the virtual servers using the policy", strings.Join(c.NotRun, "; "))
		default:
			cp.rule, cp.err = rules.CompilePolicy(cp.info, c.Tcl)
			if cp.err == nil && c.TLS {
				cp.hello, cp.err = rules.CompilePolicy(cp.info, c.HelloTcl)
			}
			if cp.err != nil { // a compiler fault: say so, never run half a policy
				t.skip(o, "openltm could not compile it: %v", cp.err)
			}
		}
		t.policy[o.Name] = cp
	}
}

// virtualPolicyRules is the rules that run a virtual's policies, before
// its iRules; false when the virtual cannot run (noted).
func (t *translator) virtualPolicyRules(o *objects.Object) ([]*compiledPolicy, bool) {
	v := virtualPolicies.Get(o)
	if v == nil || len(v.Items) == 0 {
		return nil, true
	}
	var out []*compiledPolicy
	http := t.profile(o, profileHTTP) != nil
	for _, it := range v.Items {
		n := it.Name
		po := t.cfg.Lookup(t.s, specPolicy, n)
		if po == nil {
			t.skip(o, "policy %s does not exist", n)
			return nil, false
		}
		if policyIsDraft(po) {
			msg := about(o, "policy %s is a draft: publish it (publish ltm policy %s) and attach the published policy", po.Name, po.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return nil, false
		}
		cp := t.policy[po.Name]
		switch {
		case cp == nil || cp.err != nil:
			t.skip(o, "policy %s cannot run", po.Name)
			return nil, false
		case len(cp.c.NotRun) > 0:
			t.keep(o, "policy %s uses what openltm does not run yet: %s", po.Name, strings.Join(cp.c.NotRun, "; "))
			return nil, false
		case !http && t.profile(o, profileMBLB) != nil:
			// A message-based virtual chooses a pool per message (CLIENT_DATA),
			// where a policy's moments are the connection's.
			t.keep(o, "policy %s is on a message-based virtual server, where openltm does not run policies yet", po.Name)
			return nil, false
		case cp.c.TLS && t.profile(o, profileClientSSL) == nil && !t.passesTLS(o): // translate_sni.go
			msg := about(o, "policy %s reads the client's TLS hello (ssl-client-hello), which needs a client-ssl profile on the virtual server, or an ssl persistence profile to read it from TLS passed through", po.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return nil, false
		case cp.c.HTTP && !http:
			msg := about(o, "policy %s requires an http profile on the virtual server", po.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return nil, false
		}
		if cp.c.TLS && t.profile(o, profileClientSSL) == nil {
			// TLS passed through: the policy runs at the hello.
			pass := &compiledPolicy{c: cp.c, rule: cp.hello, info: cp.info, src: cp.src, rec: cp.rec, passthrough: true}
			pass.c.Tcl = cp.c.HelloTcl
			cp = pass
		}
		out = append(out, cp)
	}
	return out, true
}
