package policy

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// action is one action's Tcl command and the moment it runs; "" when it
// is not run (noted). An action that names no moment runs when its rule
// is decided: at the request, or later (floor) if the rule's conditions
// are read later.
func (c *compiler) action(s Spec, floor phase) (string, phase, error) {
	op, verb := s.Words["operand"], s.Words["verb"]
	if op == "" {
		return "", 0, c.errorf("action %s has no operand (forward, http-reply, http-header, ...)", s.Num)
	}
	ph, ok, err := c.phaseOf(s, "action")
	if err != nil || !ok {
		return "", 0, err
	}
	if s.Words["event"] == "" && ph < floor {
		ph = floor
	}
	response := ph == atResponse
	if strings.HasPrefix(op, "http") && !c.http {
		return "", 0, c.errorf("action %s: %s needs the policy to require http", s.Num, op)
	}
	if strings.HasPrefix(op, "http") && ph < atRequest {
		return "", 0, c.errorf("action %s: %s runs at request or response, not at %s", s.Num, op, phaseWords[ph])
	}
	w := func(k string) string { return s.Words[k] }
	need := func(keys ...string) error {
		for _, k := range keys {
			if w(k) == "" {
				return c.errorf("action %s: %s %s needs %s", s.Num, op, verb, k)
			}
		}
		return nil
	}
	requestOnly := func() bool {
		if response {
			c.lacks("action %s: %s %s at response", s.Num, op, verb)
		}
		return !response
	}
	switch op + " " + verb {
	case "forward select":
		if !requestOnly() {
			return "", 0, nil
		}
		switch {
		case w("pool") != "":
			return "pool " + quote(w("pool")), ph, nil
		case w("node") != "":
			return nodeCommand(w("node")), ph, nil
		case w("virtual") != "":
			return "virtual " + quote(w("virtual")), ph, nil
		case w("snatpool") != "":
			return "snatpool " + quote(w("snatpool")), ph, nil
		case w("snat") != "":
			return "snat " + quote(w("snat")), ph, nil
		case w("rateclass") != "":
			// The connection joins the rate class, as the rule command
			// rateclass puts it [M: F5 names rateclass among a forward
			// action's targets; openltm runs it as the command].
			return "rateclass " + quote(w("rateclass")), ph, nil
		case w("member") != "":
			c.lacks("action %s: forward select member", s.Num)
			return "", 0, nil
		}
		return "", 0, c.errorf("missing or invalid target.")
	case "forward reset", "shutdown connection":
		return "reject", ph, nil
	case "drop ":
		return "drop", ph, nil
	case "http-reply redirect":
		if err := need("location"); err != nil {
			return "", 0, err
		}
		if !requestOnly() {
			return "", 0, nil
		}
		return "HTTP::redirect " + literal(w("location")), ph, nil
	case "http-header insert", "http-header replace":
		if err := need("name", "value"); err != nil {
			return "", 0, err
		}
		return "HTTP::header " + verb + " " + quote(w("name")) + " " + literal(w("value")), ph, nil
	case "http-header remove":
		if err := need("name"); err != nil {
			return "", 0, err
		}
		return "HTTP::header remove " + quote(w("name")), ph, nil
	case "http-uri replace":
		if !requestOnly() {
			return "", 0, nil
		}
		switch {
		case w("value") != "":
			return "HTTP::uri " + literal(w("value")), ph, nil
		case w("path") != "":
			return "HTTP::path " + literal(w("path")), ph, nil
		case w("query-string") != "":
			return "HTTP::query " + literal(w("query-string")), ph, nil
		}
		return "", 0, c.errorf("action %s: http-uri replace needs value, path or query-string", s.Num)
	case "http-host replace":
		if err := need("value"); err != nil {
			return "", 0, err
		}
		if !requestOnly() {
			return "", 0, nil
		}
		return "HTTP::header replace Host " + literal(w("value")), ph, nil
	case "http-cookie insert":
		if err := need("name", "value"); err != nil {
			return "", 0, err
		}
		if !requestOnly() {
			return "", 0, nil
		}
		return "HTTP::cookie insert name " + quote(w("name")) + " value " + literal(w("value")), ph, nil
	case "http-cookie remove":
		if err := need("name"); err != nil {
			return "", 0, err
		}
		if !requestOnly() {
			return "", 0, nil
		}
		return "HTTP::cookie remove " + quote(w("name")), ph, nil
	case "log write":
		if err := need("message"); err != nil {
			return "", 0, err
		}
		return "log local0. " + literal(w("message")), ph, nil
	case "tcl set-variable":
		if err := need("name", "expression"); err != nil {
			return "", 0, err
		}
		return "set " + quote(w("name")) + " " + literal(w("expression")), ph, nil
	case "http disable":
		if !requestOnly() {
			return "", 0, nil
		}
		return "HTTP::disable", ph, nil
	case "persist source-address":
		if !requestOnly() {
			return "", 0, nil
		}
		if t := w("timeout"); t != "" {
			return "persist source_addr " + quote(t), ph, nil
		}
		return "persist source_addr", ph, nil
	}
	what := strings.TrimSpace(op + " " + verb)
	c.lacks("action %s: %s", s.Num, what)
	return "", 0, nil
}

// nodeCommand selects a node: an address, or address:port (an IPv6
// address with a port written [addr]:port or addr.port).
func nodeCommand(n string) string {
	if ap, err := netip.ParseAddrPort(n); err == nil {
		return "node " + ap.Addr().String() + " " + strconv.Itoa(int(ap.Port()))
	}
	if a, p, ok := strings.Cut(n, ":"); ok && !strings.Contains(p, ":") {
		return "node " + quote(a) + " " + quote(p)
	}
	return "node " + quote(n)
}

// literal is a value as Tcl: a tcl: value is substituted when the action
// runs (F5's tcl: prefix: variables, [commands] and backslashes), any
// other is taken as written.
func literal(v string) string {
	if expr, ok := strings.CutPrefix(v, "tcl:"); ok {
		return substituted(expr, "", "")
	}
	return quote(v)
}

// substituted is a Tcl word whose value is expr substituted as `subst`
// does, between pre and post. Without a double quote in expr it is a
// double-quoted word, which the rule's compiler parses once; `subst`,
// which would parse expr at every run, is kept for an expr holding one.
func substituted(expr, pre, post string) string {
	if strings.ContainsRune(expr, '"') {
		return "\"" + pre + "[subst " + quote(expr) + "]" + post + "\""
	}
	return "\"" + pre + expr + post + "\""
}

// quote is s as one Tcl word whose value is s exactly: a list of one
// element, which Tcl's list format makes a word of.
func quote(s string) string { return tcl.FormatList(s) }
