package rules

import (
	"math"

	"github.com/openltm/openltm/rules/tcl"
)

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
	// PostProcess is REWRITE::post_process's switch: the response to
	// the request at hand gets its REWRITE_RESPONSE_DONE. The host reads
	// it once the request is mapped (TakePostProcess), so that each
	// request starts with it off, as BIG-IP's default is.
	PostProcess bool
	// Payload is the response body as the profile left it, which
	// REWRITE::payload reads and edits in REWRITE_RESPONSE_DONE; the
	// host sets it before the event and reads it back when Replaced.
	Payload  []byte
	Replaced bool
}

// TakePostProcess reports whether REWRITE::post_process asked for the
// REWRITE_RESPONSE_DONE of the request just mapped, and switches it back
// off for the next request.
func (st *RewriteState) TakePostProcess() bool {
	on := st.PostProcess
	st.PostProcess = false
	return on
}

// SetRewrite gives the connection a rewrite profile's switch (on).
func (s *ConnState) SetRewrite() { s.rewrite = &RewriteState{} }

// Rewrite is the connection's rewrite switch; nil without a rewrite
// profile. The host reads it under the lock its events run under.
func (s *ConnState) Rewrite() *RewriteState { return s.rewrite }

func registerRewrite(t *tcl.Commands) {
	t.Register("REWRITE::disable", cmdRewriteSwitch("REWRITE::disable", true))
	t.Register("REWRITE::enable", cmdRewriteSwitch("REWRITE::enable", false))
	t.Register("REWRITE::post_process", cmdRewritePostProcess)
	t.Register("REWRITE::payload", cmdRewritePayload)
	for _, n := range []string{"REWRITE::disable", "REWRITE::enable", "REWRITE::post_process", "REWRITE::payload"} {
		cmd := t.Lookup(n)
		cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.rewriteNeeds }, cmd.Compile)
	}
}

// RewriteNeeds lists the rule's REWRITE_ event handlers, then the
// REWRITE:: commands in its when blocks, in source order: BIG-IP refuses
// the rule on a virtual server without a rewrite profile (01070394 [M]).
func (r *Rule) RewriteNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event >= RewriteRequest && h.Event <= RewriteResponseDone {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return append(out, inEvents(r.rewriteNeeds)...)
}

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

// rewriteOf is the connection's rewrite state, or the error of a
// command run on a virtual server without a rewrite profile.
func rewriteOf(in *tcl.Interp, name string) (*ConnState, *RewriteState, error) {
	s, _, err := sess(in, name)
	if err != nil {
		return nil, nil, err
	}
	if s.rewrite == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no rewrite profile", name)
	}
	return s, s.rewrite, nil
}

// cmdRewritePostProcess is REWRITE::post_process ?0|1?: without an
// argument, whether it is on.
func cmdRewritePostProcess(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "REWRITE::post_process"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(name + " ?0|1?")
	}
	_, st, err := rewriteOf(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		if st.PostProcess {
			return tcl.Str("1"), nil
		}
		return tcl.Str("0"), nil
	}
	on, err := args[1].Truth()
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: expected 0 or 1 but got %q", name, args[1].String())
	}
	st.PostProcess = on
	return tcl.Empty, nil
}

const rewritePayloadUsage = "REWRITE::payload ?length? | ?offset length? | length | replace offset length string"

// cmdRewritePayload is REWRITE::payload, over the response body the
// profile rewrote, in REWRITE_RESPONSE_DONE: the whole of it, its first
// bytes or a range, its length, or a range replaced (the response then
// goes with its new length).
func cmdRewritePayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "REWRITE::payload"
	s, st, err := rewriteOf(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	if s.event != RewriteResponseDone {
		return tcl.Empty, tcl.Errorf("%s: only valid in REWRITE_RESPONSE_DONE", name)
	}
	p := st.Payload
	num := func(v tcl.Value, what string) (int, error) {
		n, err := v.Int64()
		if err != nil || n < 0 || n > math.MaxInt32 {
			return 0, tcl.Errorf("%s: %s must be a number of bytes, 0 or more, not %q", name, what, v.String())
		}
		return int(n), nil
	}
	switch {
	case len(args) == 1:
		return tcl.Bytes(p), nil
	case len(args) == 2 && args[1].String() == "length":
		return tcl.Int(int64(len(p))), nil
	case len(args) == 2:
		n, err := num(args[1], "length")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bytes(p[:min(n, len(p))]), nil
	case len(args) == 3:
		off, err := num(args[1], "offset")
		if err != nil {
			return tcl.Empty, err
		}
		n, err := num(args[2], "length")
		if err != nil {
			return tcl.Empty, err
		}
		off = min(off, len(p))
		return tcl.Bytes(p[off:min(off+n, len(p))]), nil
	case len(args) == 5 && args[1].String() == "replace":
		off, err := num(args[2], "offset")
		if err != nil {
			return tcl.Empty, err
		}
		n, err := num(args[3], "length")
		if err != nil {
			return tcl.Empty, err
		}
		if off > len(p) {
			return tcl.Empty, tcl.Errorf("%s replace: offset %d is past the payload (%d bytes)", name, off, len(p))
		}
		end := min(off+n, len(p))
		data := tcl.BytesOf(args[4])
		out := make([]byte, 0, len(p)-(end-off)+len(data))
		out = append(out, p[:off]...)
		out = append(out, data...)
		out = append(out, p[end:]...)
		st.Payload, st.Replaced = out, true
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(rewritePayloadUsage)
}
