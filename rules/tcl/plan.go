package tcl

import "strings"

// A plan runs one compiled command directly, without pushing its words
// onto the stack and without the command re-reading its own arguments on
// every run. Only the shapes of if and switch that rules use on every
// request get one: their words are literals checked once at compile time,
// so the run does exactly what cmdIf and cmdSwitch would do with less work
// between the rule's own commands.
type plan interface {
	run(in *Interp, c *command) (Value, error)
}

// planCommand returns a plan for the command, or nil to run it the
// ordinary way.
func planCommand(cmd *command) plan {
	if cmd.fn == nil || cmd.expand {
		return nil
	}
	switch cmd.fn.native {
	case nativeIf:
		if p := planIf(cmd); p != nil {
			return p
		}
	case nativeSwitch:
		if p := planSwitch(cmd); p != nil {
			return p
		}
	}
	return nil
}

// ifPlan is an if command whose conditions are precompiled expressions
// and whose bodies are precompiled scripts.
type ifPlan struct {
	conds  []*exprNode
	bodies []*Script
	els    *Script
}

// planIf follows cmdIf's reading of the words and gives up on anything
// cmdIf would report as an error, leaving the error to run time.
func planIf(cmd *command) *ifPlan {
	if cmd.lits == nil {
		return nil
	}
	ws := cmd.lits
	n := len(ws)
	p := &ifPlan{}
	for i := 1; ; {
		if i >= n || ws[i].kind != kExpr {
			return nil
		}
		p.conds = append(p.conds, ws[i].rep.(*exprNode))
		i++
		if i < n && ws[i].String() == "then" {
			i++
		}
		if i >= n || ws[i].kind != kScript {
			return nil
		}
		p.bodies = append(p.bodies, ws[i].rep.(*Script))
		i++
		if i >= n {
			return p
		}
		switch ws[i].String() {
		case "elseif":
			i++
			continue
		case "else":
			i++
		}
		if i != n-1 || ws[i].kind != kScript {
			return nil
		}
		p.els = ws[i].rep.(*Script)
		return p
	}
}

func (p *ifPlan) run(in *Interp, c *command) (Value, error) {
	for k, cond := range p.conds {
		r, err := in.evalExprNode(cond)
		if err != nil {
			return Empty, err
		}
		ok, err := r.Truth()
		if err != nil {
			return Empty, err
		}
		if ok {
			return in.evalScript(p.bodies[k])
		}
	}
	if p.els != nil {
		return in.evalScript(p.els)
	}
	return Empty, nil
}

// switchPlan is a switch -exact or -glob (optionally -nocase) whose
// options, patterns and bodies are literals; only the string is evaluated.
type switchPlan struct {
	subject int // index of the string's word
	glob    bool
	nocase  bool
	cases   []switchCase
}

type switchCase struct {
	pat  string
	body Value // the body run on a match, after following "-" bodies
	// how to match without -nocase: the pattern has no glob characters
	// (equal) or only a final star (prefix); otherwise globMatch.
	equal, prefix bool
	isDefault     bool
}

// planSwitch follows cmdSwitch's reading of the words; forms it does not
// plan (-regexp, -matchvar, options or patterns computed at run time,
// malformed pattern lists) run through cmdSwitch as before.
func planSwitch(cmd *command) *switchPlan {
	ws := cmd.words
	n := len(ws)
	p := &switchPlan{}
	i := 1
options:
	for ; i < n-2; i++ {
		if ws[i].kind != wLit {
			return nil // might be an option once evaluated
		}
		switch o := ws[i].lit.String(); {
		case !strings.HasPrefix(o, "-"):
			break options
		case o == "-exact":
			p.glob = false
		case o == "-glob":
			p.glob = true
		case o == "-nocase":
			p.nocase = true
		case o == "--":
			i++
			break options
		default:
			return nil
		}
	}
	if n-i < 2 || ws[i].expand {
		return nil
	}
	p.subject = i
	var pb []Value
	for k := i + 1; k < n; k++ {
		if ws[k].kind != wLit || ws[k].expand {
			return nil
		}
		pb = append(pb, ws[k].lit)
	}
	if len(pb) == 1 {
		l, err := AsList(pb[0])
		if err != nil {
			return nil
		}
		pb = l
	}
	if len(pb) == 0 || len(pb)%2 != 0 || pb[len(pb)-1].String() == "-" {
		return nil
	}
	for k := 0; k < len(pb); k += 2 {
		sc := switchCase{pat: pb[k].String()}
		sc.isDefault = k == len(pb)-2 && sc.pat == "default"
		b := k
		for pb[b+1].String() == "-" {
			b += 2
		}
		sc.body = pb[b+1]
		if p.glob && !p.nocase {
			sc.equal, sc.prefix = globShape(sc.pat)
		}
		p.cases = append(p.cases, sc)
	}
	return p
}

// globShape tells whether an ASCII glob pattern matches only itself
// (equal) or only strings starting with its text before a final star
// (prefix), which a byte comparison decides as globMatch would.
func globShape(pat string) (equal, prefix bool) {
	for i := 0; i < len(pat); i++ {
		c := pat[i]
		if c >= 0x80 {
			return false, false
		}
		if c == '*' && i == len(pat)-1 {
			return false, true
		}
		if c == '*' || c == '?' || c == '[' || c == '\\' {
			return false, false
		}
	}
	return true, false
}

func (p *switchPlan) run(in *Interp, c *command) (Value, error) {
	subj, err := in.evalWord(&c.words[p.subject])
	if err != nil {
		return Empty, err
	}
	str := subj.String()
	for k := range p.cases {
		sc := &p.cases[k]
		var matched bool
		switch {
		case sc.isDefault:
			matched = true
		case !p.glob && p.nocase:
			matched = strings.EqualFold(sc.pat, str)
		case !p.glob, sc.equal:
			matched = sc.pat == str
		case sc.prefix:
			matched = strings.HasPrefix(str, sc.pat[:len(sc.pat)-1])
		default:
			matched = GlobMatch(sc.pat, str, p.nocase)
		}
		if matched {
			return in.EvalValue(sc.body)
		}
	}
	return Empty, nil
}
