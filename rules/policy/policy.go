// Package policy compiles BIG-IP local traffic policies (`ltm policy`) into
// iRules for the rules engine.
//
// A policy is a list of rules, each a set of conditions on the request
// (the URI's path, the Host, a header, the client's address ...) and the
// actions run when they hold (forward to a pool, redirect, edit a header,
// reset). Every condition and action openltm runs has an exact iRule
// equivalent, so a policy becomes one rule of `when HTTP_REQUEST priority
// 0` (and HTTP_RESPONSE for response actions, CLIENT_ACCEPTED for a
// policy without HTTP, CLIENTSSL_HANDSHAKE for the client's TLS hello,
// or CLIENTSSL_CLIENTHELLO where TLS passes through) that runs before
// the virtual's own iRules, as BIG-IP evaluates policies before iRules.
// Pool selection, persistence, redirects and header edits then behave
// exactly as they do from a rule, with one implementation of each.
//
// Compile refuses what BIG-IP refuses (an action without its target, a
// condition without its operand) and lists, as NotRun, what BIG-IP runs
// and openltm does not yet (ASM, compression): the caller
// keeps such a policy and does not run the virtual servers that use it.
package policy

import (
	"fmt"
	"slices"
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
	// TLS reports whether it reads or acts at the client's TLS handshake
	// (it needs a client-ssl profile, or an ssl persistence profile on a
	// virtual server that passes TLS through).
	TLS bool
	// HelloTcl is Tcl for the virtual servers that pass TLS through (an
	// ssl persistence profile, no client-ssl), set when TLS is: there is
	// no handshake to wait for, only the ClientHello the dataplane reads,
	// so the ssl-client-hello moment is CLIENTSSL_CLIENTHELLO rather
	// than CLIENTSSL_HANDSHAKE.
	HelloTcl string
	// Rules are the policy's rule names in ordinal order, Controls and
	// Targets what its actions control and act on (forwarding; forward,
	// http-header): what the POLICY:: commands report of an attached
	// policy.
	Rules, Controls, Targets []string
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
func Compile(p Policy) (Compiled, error) { return compile(p, false) }

// CompileRecording is Compile for the virtual servers whose iRules ask
// which rules matched (POLICY::names matched, POLICY::rules matched): the
// rule also records, in the connection variables MatchVars names, each
// policy rule that matched. Other virtual servers run Compile's rule,
// which records nothing, so that they pay nothing for it.
func CompileRecording(p Policy) (Compiled, error) { return compile(p, true) }

// TargetOffVar is the connection variable whose presence switches off
// the actions of target (an action's operand: forward, http-header,
// ...) in a recording policy's rule: `POLICY::targets TARGET disable`
// sets it, enable unsets it (rules.PolicyTargetOffVar, the same name).
// Only the recording rule tests it, so the virtual servers whose iRules
// use no POLICY:: command pay nothing.
func TargetOffVar(target string) string { return "__ltm_policy_target_off_" + target }

// MatchVars are the connection variables a recording policy's rule
// keeps its matched rules in (lists of rule names): conn for the rules
// decided once per connection (client-accepted, ssl-client-hello),
// request for those decided at the request at hand or its response,
// emptied as each request starts.
func MatchVars(policy string) (conn, request string) {
	v := varName(policy)
	return v + "_matched_conn", v + "_matched"
}

func compile(p Policy, record bool) (Compiled, error) {
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
	// Each rule is decided at the latest moment one of its conditions is
	// read (or, without conditions, the first one of its actions runs):
	// its conditions of earlier moments are read then and remembered, and
	// its actions of later moments run then if it matched. Each moment
	// has its own first match.
	out := make([]compiled, 0, len(rules))
	var used [numPhases]bool
	for _, r := range rules {
		c.rule = r.Name
		cr := compiled{name: r.Name}
		maxCond := phase(-1)
		for _, s := range sortedSpecs(r.Conditions) {
			t, ph, err := c.condition(s)
			if err != nil {
				return Compiled{}, err
			}
			if t != "" {
				cr.cond[ph] = append(cr.cond[ph], t)
				maxCond = max(maxCond, ph)
			}
		}
		minAct := phase(numPhases)
		for _, a := range sortedSpecs(r.Actions) {
			line, ph, err := c.action(a, maxCond)
			if err != nil {
				return Compiled{}, err
			}
			if line == "" {
				continue
			}
			if ph < maxCond {
				return Compiled{}, c.errorf("action %s runs at %s, but the rule's conditions are read at %s", a.Num, phaseWords[ph], phaseWords[maxCond])
			}
			if record {
				// POLICY::targets OPERAND disable switches the action off.
				line = fmt.Sprintf("if {![info exists %s]} { %s }", TargetOffVar(a.Words["operand"]), line)
			}
			cr.act[ph] = append(cr.act[ph], line)
			minAct = min(minAct, ph)
		}
		switch {
		case maxCond >= 0:
			cr.decided = maxCond
		case minAct < numPhases:
			cr.decided = minAct
		case c.http:
			cr.decided = atRequest
		default:
			cr.decided = atAccept
		}
		used[cr.decided] = true
		for ph := range numPhases {
			used[ph] = used[ph] || len(cr.cond[ph]) > 0 || len(cr.act[ph]) > 0
		}
		out = append(out, cr)
	}
	c.rule = ""
	res := Compiled{NotRun: c.notRun, HTTP: c.http, TLS: used[atTLS]}
	res.Rules, res.Controls, res.Targets = describe(&p)
	if len(c.notRun) > 0 {
		return res, nil
	}
	if record && (used[atRequest] || used[atResponse]) {
		// The request's block empties its record, even where the
		// policy reads nothing of the request.
		used[atRequest] = true
	}
	res.Tcl = write(p.Name, strategy, out, used, phaseEvents, record)
	if res.TLS {
		events := phaseEvents
		events[atTLS] = "CLIENTSSL_CLIENTHELLO"
		res.HelloTcl = write(p.Name, strategy, out, used, events, record)
	}
	return res, nil
}

// describe is what the POLICY:: commands say of p: its rules in ordinal
// order, what they control (as Needs), and the operands of their
// actions.
func describe(p *Policy) (names, controls, targets []string) {
	rules := append([]Rule(nil), p.Rules...)
	sort.SliceStable(rules, func(i, j int) bool { return rules[i].Ordinal < rules[j].Ordinal })
	tg := map[string]bool{}
	for _, r := range rules {
		names = append(names, r.Name)
		for _, a := range r.Actions {
			if op := a.Words["operand"]; op != "" {
				tg[op] = true
			}
		}
	}
	_, controls = Needs(*p)
	return names, controls, sortedKeys(tg)
}

// compiled is one policy rule as Tcl: its conditions and actions by the
// moment they are read or run, and the moment it is decided.
type compiled struct {
	name    string
	cond    [numPhases][]string
	act     [numPhases][]string
	decided phase
}

// write is the Tcl of a policy's compiled rules, one `when` block per
// moment used, each moment run at its event in events; record adds the
// record of matched rules (CompileRecording).
func write(name, strategy string, out []compiled, used [numPhases]bool, events [numPhases]string, record bool) string {
	v := varName(name)
	mark := func(ph phase) string { return v + "_" + phaseVars[ph] }
	connVar, reqVar := MatchVars(name)
	recVar := func(ph phase) string {
		if ph < atRequest {
			return connVar
		}
		return reqVar
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# ltm policy %s, strategy %s\n", name, orFirst(strategy))
	for ph := range numPhases {
		if !used[ph] {
			continue
		}
		// What is remembered at this moment: the rules decided now that
		// act later, and the conditions of rules decided later.
		marks := false
		for _, cr := range out {
			marks = marks || cr.decided == ph && hasLater(cr.act, ph) || cr.decided > ph && len(cr.cond[ph]) > 0
		}
		fmt.Fprintf(&b, "when %s priority 0 {\n", events[ph])
		if marks {
			fmt.Fprintf(&b, "    set %s {}\n", mark(ph))
		}
		if record && (ph == atAccept || ph == atRequest) {
			fmt.Fprintf(&b, "    set %s {}\n", recVar(ph))
		}
		first := true
		for i, cr := range out {
			if cr.decided != ph {
				continue
			}
			var test []string
			for q := range ph {
				if len(cr.cond[q]) > 0 {
					test = append(test, fmt.Sprintf("[lsearch -exact $%s c%d] >= 0", mark(q), i))
				}
			}
			test = append(test, cr.cond[ph]...)
			if len(test) == 0 {
				test = []string{"1"}
			}
			switch {
			case strategy == "all-match" || first:
				fmt.Fprintf(&b, "    if { %s } {\n", strings.Join(test, " && "))
			default:
				fmt.Fprintf(&b, "    } elseif { %s } {\n", strings.Join(test, " && "))
			}
			first = false
			if record {
				fmt.Fprintf(&b, "        lappend %s %s\n", recVar(ph), quote(cr.name))
			}
			for _, l := range cr.act[ph] {
				fmt.Fprintf(&b, "        %s\n", l)
			}
			if hasLater(cr.act, ph) {
				fmt.Fprintf(&b, "        lappend %s m%d\n", mark(ph), i)
			}
			if strategy == "all-match" {
				b.WriteString("    }\n")
			}
		}
		if strategy != "all-match" && !first {
			b.WriteString("    }\n")
		}
		for i, cr := range out {
			if cr.decided > ph && len(cr.cond[ph]) > 0 {
				fmt.Fprintf(&b, "    if { %s } { lappend %s c%d }\n", strings.Join(cr.cond[ph], " && "), mark(ph), i)
			}
		}
		for i, cr := range out {
			if cr.decided < ph && len(cr.act[ph]) > 0 {
				fmt.Fprintf(&b, "    if { [lsearch -exact $%s m%d] >= 0 } {\n", mark(cr.decided), i)
				for _, l := range cr.act[ph] {
					fmt.Fprintf(&b, "        %s\n", l)
				}
				b.WriteString("    }\n")
			}
		}
		b.WriteString("}\n")
	}
	return b.String()
}

// hasLater reports whether a rule has actions after moment ph.
func hasLater(act [numPhases][]string, ph phase) bool {
	for q := ph + 1; q < numPhases; q++ {
		if len(act[q]) > 0 {
			return true
		}
	}
	return false
}

// phase is a moment a condition is read or an action runs, in the order
// a connection meets them.
type phase int

const (
	atAccept   phase = iota // the client connects (BIG-IP's client-accepted)
	atTLS                   // the client's TLS handshake (ssl-client-hello)
	atRequest               // each request
	atResponse              // each response
	numPhases
)

var (
	phaseEvents = [numPhases]string{"CLIENT_ACCEPTED", "CLIENTSSL_HANDSHAKE", "HTTP_REQUEST", "HTTP_RESPONSE"}
	phaseWords  = [numPhases]string{"client-accepted", "ssl-client-hello", "request", "response"}
	// phaseVars name the variables of what a moment remembers ($ takes
	// no hyphen).
	phaseVars = [numPhases]string{"accept", "tls", "request", "response"}
)

// phaseOf is the moment of a condition or action; false when openltm
// does not run at that moment (noted by the caller) or BIG-IP refuses it
// (err).
func (c *compiler) phaseOf(s Spec, what string) (phase, bool, error) {
	switch ev := event(s); ev {
	case "request":
		if c.http {
			return atRequest, true, nil
		}
		return atAccept, true, nil
	case "client-accepted":
		return atAccept, true, nil
	case "ssl-client-hello":
		return atTLS, true, nil
	case "response":
		if !c.http {
			return 0, false, c.errorf("%s %s: response %ss need the policy to require http", what, s.Num, what)
		}
		return atResponse, true, nil
	default:
		c.lacks("%s %s %s at %s", what, s.Num, map[string]string{"condition": "reads " + s.Words["operand"], "action": "runs"}[what], ev)
		return 0, false, nil
	}
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

// What a policy's operands require of a virtual server and what its
// actions control, as BIG-IP 12.1 and later compute a policy's requires
// and controls from its rules (chosen where F5 does not document the
// table: the profile or feature each operand names; every http-*
// operand requires http).
var (
	requiresOf = map[string]string{"tcp": "tcp", "client-ssl": "client-ssl", "ssl-extension": "client-ssl", "ssl-cert": "client-ssl"}
	controlsOf = map[string]string{"forward": "forwarding", "persist": "persistence", "cache": "caching", "compress": "compression",
		"decompress": "compression", "asm": "asm", "server-ssl": "server-ssl", "classification": "classification", "request-adapt": "request-adaptation",
		"response-adapt": "response-adaptation", "l7dos": "l7dos", "avr": "avr"}
)

// requiresOfOperand is what one condition's or action's operand requires.
func requiresOfOperand(op string) string {
	if strings.HasPrefix(op, "http") {
		return "http"
	}
	return requiresOf[op]
}

// Needs is what p's rules require of a virtual server and what they
// control, sorted: what BIG-IP lists as a policy's requires and controls.
// Conditions' operands require; actions' require http when they edit it,
// and control.
func Needs(p Policy) (requires, controls []string) {
	req, ctl := map[string]bool{}, map[string]bool{}
	for _, r := range p.Rules {
		for _, c := range r.Conditions {
			if n := requiresOfOperand(c.Words["operand"]); n != "" {
				req[n] = true
			}
		}
		for _, a := range r.Actions {
			op := a.Words["operand"]
			if requiresOfOperand(op) == "http" {
				req["http"] = true
			}
			if n := controlsOf[op]; n != "" {
				ctl[n] = true
			}
		}
	}
	return sortedKeys(req), sortedKeys(ctl)
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// needsHTTP reports whether the policy reads or edits HTTP, by its
// requires or its rules: it then runs on each request, else once per
// connection.
func needsHTTP(p *Policy) bool {
	req, _ := Needs(*p)
	return slices.Contains(p.Requires, "http") || slices.Contains(req, "http")
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
