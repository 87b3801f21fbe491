package policy

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// action is one action's Tcl command and whether it runs on the response;
// "" when it is not run (noted).
func (c *compiler) action(s Spec) (string, bool, error) {
	op, verb := s.Words["operand"], s.Words["verb"]
	if op == "" {
		return "", false, c.errorf("action %s has no operand (forward, http-reply, http-header, ...)", s.Num)
	}
	response := false
	switch ev := event(s); ev {
	case "request":
	case "client-accepted":
		if c.http {
			c.lacks("action %s runs at %s", s.Num, ev)
			return "", false, nil
		}
	case "response":
		if !c.http {
			return "", false, c.errorf("action %s: response actions need the policy to require http", s.Num)
		}
		response = true
	default:
		c.lacks("action %s runs at %s", s.Num, ev)
		return "", false, nil
	}
	if strings.HasPrefix(op, "http") && !c.http {
		return "", false, c.errorf("action %s: %s needs the policy to require http", s.Num, op)
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
			return "", false, nil
		}
		switch {
		case w("pool") != "":
			return "pool " + quote(w("pool")), false, nil
		case w("node") != "":
			return nodeCommand(w("node")), false, nil
		case w("virtual") != "":
			return "virtual " + quote(w("virtual")), false, nil
		case w("snatpool") != "":
			return "snatpool " + quote(w("snatpool")), false, nil
		case w("snat") != "":
			return "snat " + quote(w("snat")), false, nil
		case w("member") != "":
			c.lacks("action %s: forward select member", s.Num)
			return "", false, nil
		}
		return "", false, c.errorf("missing or invalid target.")
	case "forward reset", "shutdown connection":
		return "reject", response, nil
	case "drop ":
		return "drop", response, nil
	case "http-reply redirect":
		if err := need("location"); err != nil {
			return "", false, err
		}
		if !requestOnly() {
			return "", false, nil
		}
		return "HTTP::redirect " + literal(w("location")), false, nil
	case "http-header insert", "http-header replace":
		if err := need("name", "value"); err != nil {
			return "", false, err
		}
		return "HTTP::header " + verb + " " + quote(w("name")) + " " + literal(w("value")), response, nil
	case "http-header remove":
		if err := need("name"); err != nil {
			return "", false, err
		}
		return "HTTP::header remove " + quote(w("name")), response, nil
	case "http-uri replace":
		if !requestOnly() {
			return "", false, nil
		}
		switch {
		case w("value") != "":
			return "HTTP::uri " + literal(w("value")), false, nil
		case w("path") != "":
			return "HTTP::path " + literal(w("path")), false, nil
		case w("query-string") != "":
			return "HTTP::query " + literal(w("query-string")), false, nil
		}
		return "", false, c.errorf("action %s: http-uri replace needs value, path or query-string", s.Num)
	case "http-host replace":
		if err := need("value"); err != nil {
			return "", false, err
		}
		if !requestOnly() {
			return "", false, nil
		}
		return "HTTP::header replace Host " + literal(w("value")), false, nil
	case "http-cookie insert":
		if err := need("name", "value"); err != nil {
			return "", false, err
		}
		if !requestOnly() {
			return "", false, nil
		}
		return "HTTP::cookie insert name " + quote(w("name")) + " value " + literal(w("value")), false, nil
	case "http-cookie remove":
		if err := need("name"); err != nil {
			return "", false, err
		}
		if !requestOnly() {
			return "", false, nil
		}
		return "HTTP::cookie remove " + quote(w("name")), false, nil
	case "log write":
		if err := need("message"); err != nil {
			return "", false, err
		}
		return "log local0. " + literal(w("message")), response, nil
	case "tcl set-variable":
		if err := need("name", "expression"); err != nil {
			return "", false, err
		}
		return "set " + quote(w("name")) + " " + literal(w("expression")), response, nil
	case "http disable":
		if !requestOnly() {
			return "", false, nil
		}
		return "HTTP::disable", false, nil
	case "persist source-address":
		if !requestOnly() {
			return "", false, nil
		}
		if t := w("timeout"); t != "" {
			return "persist source_addr " + quote(t), false, nil
		}
		return "persist source_addr", false, nil
	}
	what := strings.TrimSpace(op + " " + verb)
	c.lacks("action %s: %s", s.Num, what)
	return "", false, nil
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
