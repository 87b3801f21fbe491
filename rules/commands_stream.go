package rules

import (
	"strings"

	"github.com/openltm/openltm/dataplane/streamfilter"
	"github.com/openltm/openltm/rules/tcl"
)

// StreamState is a connection's stream filter as its rules leave it: the
// stream profile's expression until STREAM::expression replaces it, for
// the rest of the connection ("sticky", as F5's page says), and whether
// the filter is on. The host sets it up (ConnState.SetStream) on a
// virtual server with a stream profile and reads it after HTTP_REQUEST
// and HTTP_RESPONSE to filter that message's body, or as a TCP flow's
// bytes pass; without a stream profile it is nil and the STREAM::
// commands are errors, as BIG-IP refuses such a rule.
type StreamState struct {
	// Expr is the expression in force ("" when neither the profile nor
	// a rule gave one: the filter changes nothing).
	Expr string
	// On: the filter rewrites the next message bodies. A profile with
	// an expression starts on; STREAM::enable and STREAM::disable set it
	// from then on.
	On bool
	// MaxMatch is STREAM::max_matchsize (0: the default, 4096 bytes).
	MaxMatch int
	// UTF8 is STREAM::encoding utf-8 (how STREAM::match gives bytes).
	UTF8 bool

	// inMatch, match and replace serve STREAM_MATCHED: the bytes matched,
	// and STREAM::replace's answer (replaced: it was called).
	inMatch  bool
	match    []byte
	replace  []byte
	replaced bool
}

// Filter is a new filter for the next body or stream as the state has
// it: nil when the filter is off or has no expression. onMatch (nil:
// none) is the host's STREAM_MATCHED (RunStreamMatched under its lock).
func (st *StreamState) Filter(onMatch func(match, repl []byte) []byte) *streamfilter.Filter {
	if !st.On || st.Expr == "" {
		return nil
	}
	e, err := streamfilter.Parse(st.Expr)
	if err != nil {
		return nil // STREAM::expression and the profile's check refused it
	}
	return streamfilter.New(e, st.MaxMatch, onMatch)
}

// SetStream gives the connection a stream filter (the virtual server has
// a stream profile) whose expression is the profile's (may be empty).
func (s *ConnState) SetStream(profileExpr string) {
	s.stream = &StreamState{Expr: profileExpr, On: profileExpr != ""}
}

// Stream is the connection's stream filter state; nil without a stream
// profile. The host reads it under the same lock its events run under.
func (s *ConnState) Stream() *StreamState { return s.stream }

// RunStreamMatched runs STREAM_MATCHED over one match of the filter, with
// repl the replacement the expression gives, and appends to dst what goes
// into the stream in its place: STREAM::replace's text when a rule called
// it, else repl. It copies, so the caller's filter keeps the bytes after
// the host's lock is released (the two directions' filters may run the
// event in turn on different threads). An error of the rule leaves the
// match replaced as the expression says (the host resets the connection).
func (s *ConnState) RunStreamMatched(dst, match, repl []byte) ([]byte, error) {
	st := s.stream
	if st == nil || len(s.prog.handlers[StreamMatched]) == 0 {
		return append(dst, repl...), nil
	}
	st.inMatch, st.match, st.replaced = true, match, false
	err := s.Run(StreamMatched)
	st.inMatch, st.match = false, nil
	if err != nil || !st.replaced {
		return append(dst, repl...), err
	}
	return append(dst, st.replace...), nil
}

func registerStream(t *tcl.Commands) {
	t.Register("STREAM::expression", cmdStreamExpression).Compile = streamExprHook
	t.Register("STREAM::enable", cmdStreamSwitch("STREAM::enable", true))
	t.Register("STREAM::disable", cmdStreamSwitch("STREAM::disable", false))
	t.Register("STREAM::match", cmdStreamMatch)
	t.Register("STREAM::replace", cmdStreamReplace)
	t.Register("STREAM::max_matchsize", cmdStreamMaxMatch)
	t.Register("STREAM::encoding", cmdStreamEncoding)
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "STREAM::") {
			cmd := t.Lookup(n)
			cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.streamNeeds }, cmd.Compile)
		}
	}
}

// needHook records a command that needs a profile (STREAM:: a stream
// profile, COMPRESS:: an http-compression one) in a when block, in the
// list of the rule being compiled that list gives: BIG-IP refuses the
// rule on a virtual server without the profile (Rule.StreamNeeds,
// Rule.CompressNeeds). Then the command's own hook runs.
func needHook(name string, list func(r *Rule) *[]HTTPNeed, next func(c *tcl.Compiler) error) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		if r, ok := c.Context().(*Rule); ok && r.inWhen {
			line, col := c.Pos(0)
			l := list(r)
			*l = append(*l, HTTPNeed{Name: name, Event: r.inEvent, Line: line, Col: col})
		}
		if next != nil {
			return next(c)
		}
		return nil
	}
}

// streamExprHook refuses, when the rule is saved, a literal expression
// the filter could never use: BIG-IP checks it only when the command
// runs, but a rule that fails on every response is better refused with
// its line and column.
func streamExprHook(c *tcl.Compiler) error {
	if v, lit := c.Literal(1); lit && c.NumWords() == 2 {
		if _, err := streamfilter.Parse(v); err != nil {
			return c.Errorf(1, "STREAM::expression: %v", err)
		}
	}
	return nil
}

// streamOf returns the connection's stream state, or the error of a
// command run where there is none.
func streamOf(in *tcl.Interp, cmd string) (*ConnState, *StreamState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	if s.stream == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no stream profile", cmd)
	}
	return s, s.stream, nil
}

// cmdStreamExpression is STREAM::expression EXPRESSION: the expression
// for the rest of the connection. It does not turn the filter on
// (STREAM::enable does).
func cmdStreamExpression(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("STREAM::expression expression")
	}
	_, st, err := streamOf(in, "STREAM::expression")
	if err != nil {
		return tcl.Empty, err
	}
	text := args[1].String()
	if _, err := streamfilter.Parse(text); err != nil {
		return tcl.Empty, tcl.Errorf("STREAM::expression: %v", err)
	}
	st.Expr = text
	return tcl.Empty, nil
}

// cmdStreamSwitch is STREAM::enable and STREAM::disable. Chosen where
// F5's pages differ [M]: the filter has one switch per connection, so
// STREAM::disable in HTTP_REQUEST also keeps the response that follows
// unfiltered, which is what the published rules that disable in
// HTTP_REQUEST and enable in HTTP_RESPONSE rely on.
func cmdStreamSwitch(name string, on bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		_, st, err := streamOf(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		st.On = on
		return tcl.Empty, nil
	}
}

// cmdStreamMatch is STREAM::match: in STREAM_MATCHED, the bytes matched
// (one character per byte, or UTF-8 decoded after STREAM::encoding
// utf-8); elsewhere empty.
func cmdStreamMatch(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("STREAM::match")
	}
	_, st, err := streamOf(in, "STREAM::match")
	if err != nil || !st.inMatch {
		return tcl.Empty, err
	}
	if st.UTF8 {
		return tcl.Str(string(st.match)), nil
	}
	return tcl.Bytes(st.match), nil
}

// cmdStreamReplace is STREAM::replace ?TEXT?: in STREAM_MATCHED, what
// takes the match's place. Chosen where F5's page is silent [M]: without
// TEXT the matched bytes stay as they are.
func cmdStreamReplace(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("STREAM::replace ?replacement?")
	}
	_, st, err := streamOf(in, "STREAM::replace")
	if err != nil {
		return tcl.Empty, err
	}
	if !st.inMatch {
		return tcl.Empty, tcl.Errorf("STREAM::replace: only valid in STREAM_MATCHED")
	}
	st.replaced = true
	if len(args) == 1 {
		st.replace = append(st.replace[:0], st.match...)
		return tcl.Empty, nil
	}
	if st.UTF8 {
		st.replace = append(st.replace[:0], args[1].String()...)
	} else {
		st.replace = append(st.replace[:0], tcl.BytesOf(args[1])...)
	}
	return tcl.Empty, nil
}

// maxStreamMatch bounds STREAM::max_matchsize: what one connection may
// hold back while a match is open (BIG-IP's page gives no bound [M]).
const maxStreamMatch = 1 << 20

// cmdStreamMaxMatch is STREAM::max_matchsize ?N?.
func cmdStreamMaxMatch(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("STREAM::max_matchsize ?size?")
	}
	_, st, err := streamOf(in, "STREAM::max_matchsize")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		n := st.MaxMatch
		if n == 0 {
			n = streamfilter.DefaultMaxMatch
		}
		return tcl.Int(int64(n)), nil
	}
	n, err := args[1].Int64()
	if err != nil || n < 1 || n > maxStreamMatch {
		return tcl.Empty, tcl.Errorf("STREAM::max_matchsize: %q is not a size from 1 to %d", args[1].String(), maxStreamMatch)
	}
	st.MaxMatch = int(n)
	return tcl.Empty, nil
}

// cmdStreamEncoding is STREAM::encoding ?ascii|utf-8?: how STREAM::match
// and STREAM::replace turn bytes into characters. The filter itself
// matches bytes either way.
func cmdStreamEncoding(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("STREAM::encoding ?ascii|utf-8?")
	}
	_, st, err := streamOf(in, "STREAM::encoding")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		if st.UTF8 {
			return tcl.Str("utf-8"), nil
		}
		return tcl.Str("ascii"), nil
	}
	switch args[1].String() {
	case "ascii":
		st.UTF8 = false
	case "utf-8", "utf8":
		st.UTF8 = true
	default:
		return tcl.Empty, tcl.Errorf("STREAM::encoding: %q is neither ascii nor utf-8", args[1].String())
	}
	return tcl.Empty, nil
}
