// Package policy compiles BIG-IP local traffic policies (`ltm policy`) into
// iRules for the rules engine.
//
// A policy is a list of rules, each a set of conditions on the request
// (the URI's path, the Host, a header, the client's address ...) and the
// actions run when they hold (forward to a pool, redirect, edit a header,
// reset). Every condition and action openltm runs has an exact iRule
// equivalent, so a policy becomes one rule of `when HTTP_REQUEST priority
// 0` (and HTTP_RESPONSE for response actions, CLIENT_ACCEPTED for a
// policy without HTTP) that runs before the virtual's own iRules, as
// BIG-IP evaluates policies before iRules. Pool selection, persistence,
// redirects and header edits then behave exactly as they do from a rule,
// with one implementation of each.
//
// Compile refuses what BIG-IP refuses (an action without its target, a
// condition without its operand) and lists, as NotRun, what BIG-IP runs
// and openltm does not yet (ASM, compression, geolocation): the caller
// keeps such a policy and does not run the virtual servers that use it.
package policy

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Spec is one numbered condition or action as the configuration holds it:
// its flag words by group (operand, event, selector, side, case, not,
// operator, verb) and its named values (name, index, pool, location, ...).
type Spec struct {
	Num    string
	Words  map[string]string
	Values []string
}

// Rule is one rule of a policy.
type Rule struct {
	Name       string
	Ordinal    int
	Conditions []Spec
	Actions    []Spec
}

// Policy is what Compile needs of an `ltm policy`.
type Policy struct {
	Name string
	// Strategy is the strategy's name without its folder: first-match,
	// all-match or best-match.
	Strategy string
	Requires []string
	Rules    []Rule
}

// Compiled is a policy as an iRule.
type Compiled struct {
	// Tcl is the rule's text; empty when NotRun is not.
	Tcl string
	// NotRun says what of the policy openltm does not run ("rule r
	// action 0: asm enable"); a policy with any is kept but not run.
	NotRun []string
	// HTTP reports whether the policy runs on HTTP requests (it needs an
	// http profile on its virtual servers).
	HTTP bool
}

// Error is a policy BIG-IP refuses, in its words: the policy, the rule
// and what is wrong.
type Error struct {
	Policy, Rule, Msg string
}

func (e *Error) Error() string {
	if e.Rule == "" {
		return fmt.Sprintf("Policy '%s'; %s", e.Policy, e.Msg)
	}
	return fmt.Sprintf("Policy '%s', rule '%s'; %s", e.Policy, e.Rule, e.Msg)
}

// compiler holds one policy's compilation.
type compiler struct {
	p      *Policy
	http   bool
	notRun []string
	rule   string
}

func (c *compiler) errorf(format string, a ...any) error {
	return &Error{Policy: c.p.Name, Rule: c.rule, Msg: fmt.Sprintf(format, a...)}
}

func (c *compiler) lacks(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	if c.rule != "" {
		msg = "rule " + c.rule + " " + msg
	}
	c.notRun = append(c.notRun, msg)
}

// Compile turns p into an iRule.
func Compile(p Policy) (Compiled, error) {
	c := &compiler{p: &p}
	c.http = needsHTTP(&p)
	rules := append([]Rule(nil), p.Rules...)
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Ordinal < rules[j].Ordinal })
	strategy := p.Strategy
	switch strategy {
	case "", "first-match", "all-match":
	case "best-match":
		// The rule with the most conditions that all hold wins, ties in
		// rule order: BIG-IP also weighs each operand's precedence, which
		// openltm does not.
		sort.SliceStable(rules, func(i, j int) bool { return len(rules[i].Conditions) > len(rules[j].Conditions) })
	default:
		c.lacks("strategy %s (only first-match, all-match and best-match)", strategy)
	}
	// A rule whose conditions read the response (http-status, a
	// response header) is decided when the response comes: its request
	// conditions are read with the request and remembered, and its
	// actions run with the response. Each event has its own first match.
	type compiled struct {
		cond, respCond string
		req, resp      []string
		atResponse     bool
	}
	var out []compiled
	respActions, respRules := false, false
	for _, r := range rules {
		c.rule = r.Name
		var cr compiled
		cond, respCond, err := c.conditions(r.Conditions)
		if err != nil {
			return Compiled{}, err
		}
		cr.cond, cr.respCond, cr.atResponse = cond, respCond, respCond != ""
		respRules = respRules || cr.atResponse
		for _, a := range sortedSpecs(r.Actions) {
			line, response, err := c.action(a)
			if err != nil {
				return Compiled{}, err
			}
			if line == "" {
				continue
			}
			switch {
			case response:
				cr.resp = append(cr.resp, line)
				respActions = respActions || !cr.atResponse
			case cr.atResponse:
				return Compiled{}, c.errorf("action %s runs at request, but the rule's conditions are read at response", a.Num)
			default:
				cr.req = append(cr.req, line)
			}
		}
		out = append(out, cr)
	}
	c.rule = ""
	res := Compiled{NotRun: c.notRun, HTTP: c.http}
	if len(c.notRun) > 0 {
		return res, nil
	}
	v := varName(p.Name)
	var b strings.Builder
	reqEvent := "CLIENT_ACCEPTED"
	if c.http {
		reqEvent = "HTTP_REQUEST"
	}
	fmt.Fprintf(&b, "# ltm policy %s, strategy %s\nwhen %s priority 0 {\n", p.Name, orFirst(strategy), reqEvent)
	if respActions || respRules {
		fmt.Fprintf(&b, "    set %s {}\n", v)
	}
	// chain writes rules as one if/elseif chain (first-match, best-match)
	// or as separate ifs (all-match).
	chain := func(indent string, rules []int, test func(int) string, body func(int) []string) {
		for n, i := range rules {
			switch {
			case strategy == "all-match" || n == 0:
				fmt.Fprintf(&b, "%sif { %s } {\n", indent, test(i))
			default:
				fmt.Fprintf(&b, "%s} elseif { %s } {\n", indent, test(i))
			}
			for _, l := range body(i) {
				fmt.Fprintf(&b, "%s    %s\n", indent, l)
			}
			if strategy == "all-match" {
				fmt.Fprintf(&b, "%s}\n", indent)
			}
		}
		if strategy != "all-match" && len(rules) > 0 {
			fmt.Fprintf(&b, "%s}\n", indent)
		}
	}
	var atRequest, atResponse []int
	for i, cr := range out {
		if cr.atResponse {
			atResponse = append(atResponse, i)
		} else {
			atRequest = append(atRequest, i)
		}
	}
	mark := func(i int) string { return fmt.Sprintf("lappend %s %d", v, i) }
	chain("    ", atRequest, func(i int) string { return out[i].cond }, func(i int) []string {
		if len(out[i].resp) > 0 {
			return append(append([]string(nil), out[i].req...), mark(i))
		}
		return out[i].req
	})
	for _, i := range atResponse {
		// The request half of a response rule, remembered.
		if out[i].cond == "1" {
			fmt.Fprintf(&b, "    %s\n", mark(i))
		} else {
			fmt.Fprintf(&b, "    if { %s } { %s }\n", out[i].cond, mark(i))
		}
	}
	b.WriteString("}\n")
	if respActions || respRules {
		b.WriteString("when HTTP_RESPONSE priority 0 {\n")
		for _, i := range atRequest {
			if len(out[i].resp) == 0 {
				continue
			}
			fmt.Fprintf(&b, "    if { [lsearch -exact $%s %d] >= 0 } {\n", v, i)
			for _, l := range out[i].resp {
				fmt.Fprintf(&b, "        %s\n", l)
			}
			b.WriteString("    }\n")
		}
		chain("    ", atResponse, func(i int) string {
			return fmt.Sprintf("[lsearch -exact $%s %d] >= 0 && %s", v, i, out[i].respCond)
		}, func(i int) []string { return out[i].resp })
		b.WriteString("}\n")
	}
	res.Tcl = b.String()
	return res, nil
}

func orFirst(s string) string {
	if s == "" {
		return "first-match"
	}
	return s
}

// varName is the connection variable that carries, from the request to
// its response, which rules of the policy matched.
func varName(policy string) string {
	var b strings.Builder
	b.WriteString("__ltm_policy")
	for _, r := range policy {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// needsHTTP reports whether the policy reads or edits HTTP: it then runs
// on each request, else once per connection.
func needsHTTP(p *Policy) bool {
	for _, r := range p.Requires {
		if r == "http" {
			return true
		}
	}
	for _, r := range p.Rules {
		for _, s := range append(append([]Spec(nil), r.Conditions...), r.Actions...) {
			if op := s.Words["operand"]; strings.HasPrefix(op, "http") {
				return true
			}
		}
	}
	return false
}

// sortedSpecs orders a rule's conditions or actions by their numbers.
func sortedSpecs(in []Spec) []Spec {
	out := append([]Spec(nil), in...)
	sort.SliceStable(out, func(i, j int) bool {
		a, ea := strconv.Atoi(out[i].Num)
		b, eb := strconv.Atoi(out[j].Num)
		if ea == nil && eb == nil {
			return a < b
		}
		return out[i].Num < out[j].Num
	})
	return out
}

// event is the moment a spec is read or run: "request" unless it says.
func event(s Spec) string {
	if e := s.Words["event"]; e != "" {
		return e
	}
	return "request"
}
