package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// AdaptChoice is what a rule's ADAPT:: commands asked of the HTTP
// request in hand and its answer.
type AdaptChoice struct {
	// Request and Response say whether each side is adapted
	// (ADAPT::enable); a side without a profile is never.
	Request, Response bool
	// RequestDown and ResponseDown are each side's service-down-action
	// (ignore, drop, reset; ADAPT::service_down_action).
	RequestDown, ResponseDown string
	// RequestTimeout and ResponseTimeout bound each side's exchange in
	// milliseconds, 0 none (ADAPT::timeout: the adapt profile's timeout
	// for this message).
	RequestTimeout, ResponseTimeout int
	// RequestPreview and ResponsePreview are each side's preview-size
	// (ADAPT::preview_size): the icap profile's preview-length still
	// caps it, and 0 sends no preview.
	RequestPreview, ResponsePreview int
	// RequestHTTP10 and ResponseHTTP10 say whether each side adapts
	// HTTP/1.0 messages (ADAPT::allow http_v1.0; the profile's
	// allow-http-10 to start with).
	RequestHTTP10, ResponseHTTP10 bool
	// RequestVirtual and ResponseVirtual are the internal virtual server
	// each side sends to (ADAPT::select; the profile's internal-virtual
	// to start with).
	RequestVirtual, ResponseVirtual string
	// RequestProfile and ResponseProfile name each side's adapt profile:
	// ADAPT::context_name of the side's static context.
	RequestProfile, ResponseProfile string
}

// AdaptState is the ADAPT:: commands' state on a virtual server with a
// request-adapt or response-adapt profile. It starts each request from
// the profiles' settings (SetAdapt); the host takes it (Take) after
// HTTP_REQUEST, so a choice never carries over to the next request.
// RESPMOD runs before HTTP_RESPONSE here, so the response side is
// decided in HTTP_REQUEST [M: on BIG-IP HTTP_RESPONSE comes first].
type AdaptState struct {
	AdaptChoice
	// Result is what ADAPT::result returns in ADAPT_REQUEST_RESULT and
	// ADAPT_RESPONSE_RESULT, which the host sets before it runs them:
	// bypass (the message goes on as it was: 204, not adapted, or the
	// service down and ignored), modify, or respond (the ICAP server's
	// answer takes a request's place).
	Result          string
	def             AdaptChoice
	hasReq, hasResp bool
	internal        func(string) (string, bool)
	// contexts are the dynamic adaptation contexts of both sides, in the
	// order they were created (ADAPT::context_create); they last for the
	// connection, as on BIG-IP, until ADAPT::context_delete_all.
	contexts []*AdaptContext
	// next numbers the next context's handle: handles are never reused,
	// so one kept past context_delete_all names nothing.
	next int
	// current is the context whose exchange the running ADAPT_ event
	// follows: nil the side's static one (ADAPT::context_current).
	current     *AdaptContext
	currentResp bool
}

// SetInternal gives ADAPT::select the internal virtual servers it may
// choose: f returns a name's canonical form, false for a name that is
// not an internal virtual server with an icap profile.
func (st *AdaptState) SetInternal(f func(string) (string, bool)) { st.internal = f }

// Take returns the choice and starts the next request from the
// profiles' settings.
func (st *AdaptState) Take() AdaptChoice {
	c := st.AdaptChoice
	st.AdaptChoice = st.def
	return c
}

// SetAdapt gives the connection the ADAPT:: commands' state: d is the
// profiles' settings, d.Request (d.Response) whether the virtual server
// has a request-adapt (response-adapt) profile.
func (s *ConnState) SetAdapt(d AdaptChoice) {
	s.adapt = &AdaptState{AdaptChoice: d, def: d, hasReq: d.Request, hasResp: d.Response}
}

// Adapt is the connection's ADAPT:: state; nil without an adapt
// profile. The host reads it under the lock its events run under.
func (s *ConnState) Adapt() *AdaptState { return s.adapt }

func registerAdapt(t *tcl.Commands) {
	t.Register("ADAPT::enable", cmdAdaptEnable)
	t.Register("ADAPT::service_down_action", cmdAdaptDown)
	t.Register("ADAPT::result", cmdAdaptResult)
	t.Register("ADAPT::timeout", cmdAdaptTimeout)
	t.Register("ADAPT::preview_size", cmdAdaptPreview)
	t.Register("ADAPT::allow", cmdAdaptAllow)
	t.Register("ADAPT::select", cmdAdaptSelect)
	registerAdaptContexts(t) // commands_adapt_context.go
}

// cmdAdaptAllow is `ADAPT::allow ?context? http_v1.0 ?request|response? ?bool?`:
// whether the side adapts HTTP/1.0 messages, after setting it when bool
// is given. http_v1.0 is the only property BIG-IP documents.
func cmdAdaptAllow(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "ADAPT::allow ?context? http_v1.0 ?request|response? ?bool?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if len(args) > 2 && isAdaptHandle(args[1].String()) {
		// ADAPT::allow CONTEXT http_v1.0 ...: the context first, as the
		// other commands take it.
		args = append([]tcl.Value{args[0], args[2], args[1]}, args[3:]...)
	}
	if p := args[1].String(); p != "http_v1.0" {
		return tcl.Empty, tcl.Errorf("ADAPT::allow: %q is not a property (http_v1.0)", p)
	}
	v, rest, err := adaptOf(in, "ADAPT::allow", args[2:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if len(rest) == 1 {
		on, err := rest[0].Truth()
		if err != nil {
			return tcl.Empty, err
		}
		*v.http10 = on
	}
	return tcl.Bool(*v.http10), nil
}

// cmdAdaptSelect is `ADAPT::select ?request|response? ?virtual?`: the
// internal virtual server the side's message goes to, after choosing it
// when given; a name that is not an internal virtual server with an
// icap profile is an error, and the choice stays.
func cmdAdaptSelect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	v, rest, err := adaptOf(in, "ADAPT::select", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::select ?context? ?request|response? ?virtual?")
	}
	if len(rest) == 1 {
		name := rest[0].String()
		full, ok := "", false
		if v.st.internal != nil {
			full, ok = v.st.internal(name)
		}
		if !ok {
			return tcl.Empty, tcl.Errorf("ADAPT::select: %q is not an internal virtual server with an icap profile", name)
		}
		*v.virtual = full
	}
	return tcl.Str(*v.virtual), nil
}

// cmdAdaptResult is `ADAPT::result ?context? ?request|response?`: what
// the exchange did, in ADAPT_REQUEST_RESULT and ADAPT_RESPONSE_RESULT
// (the exchange of the context the event follows; a context given must
// be that one [M: openltm keeps no result of other contexts]). Setting a
// result is not supported [M].
func cmdAdaptResult(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, _, err := sess(in, "ADAPT::result")
	if err != nil {
		return tcl.Empty, err
	}
	if s.adapt == nil {
		return tcl.Empty, tcl.Errorf("ADAPT::result: the virtual server has no request-adapt or response-adapt profile")
	}
	if s.event != AdaptRequestResult && s.event != AdaptResponseResult {
		return tcl.Empty, tcl.Errorf("ADAPT::result: not valid in %s (valid in ADAPT_REQUEST_RESULT, ADAPT_RESPONSE_RESULT)", s.event)
	}
	rest := args[1:]
	if len(rest) > 0 && isAdaptHandle(rest[0].String()) {
		c, resp, err := s.adapt.context(rest[0].String())
		if err != nil {
			return tcl.Empty, tcl.Errorf("ADAPT::result: %v", err)
		}
		if c != s.adapt.current || resp != s.adapt.currentResp {
			return tcl.Empty, tcl.Errorf("ADAPT::result: context %s is not the one whose result this event reports", rest[0].String())
		}
		rest = rest[1:]
	}
	if len(rest) == 1 && (rest[0].String() == "request" || rest[0].String() == "response") {
		rest = rest[1:]
	}
	if len(rest) != 0 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::result ?context? ?request|response?")
	}
	return tcl.Str(s.adapt.Result), nil
}

// adaptView is what one ADAPT:: command acts on: a side's static
// context (the profile's settings for the request in hand) or a
// dynamic context.
type adaptView struct {
	st      *AdaptState
	resp    bool
	on      *bool
	has     bool
	down    *string
	timeout *int
	preview *int
	http10  *bool
	virtual *string
}

// adaptOf returns what the command acts on: the context its first
// argument names (a handle from ADAPT::context_create or
// ADAPT::context_static), else the side its first argument names
// (request or response), else the side of the running event. A static
// context is set only in HTTP_REQUEST (the choice is taken after it); a
// dynamic one also in the ADAPT_ events, which run before its exchange
// when it comes later in the chain. It fails without an adapt profile.
func adaptOf(in *tcl.Interp, cmd string, args []tcl.Value) (*adaptView, []tcl.Value, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	st := s.adapt
	if st == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no request-adapt or response-adapt profile", cmd)
	}
	var ctx *AdaptContext
	resp, named := false, false
	if len(args) > 0 && isAdaptHandle(args[0].String()) {
		c, r, err := st.context(args[0].String())
		if err != nil {
			return nil, nil, tcl.Errorf("%s: %v", cmd, err)
		}
		ctx, resp, named, args = c, r, true, args[1:]
	}
	if len(args) > 0 {
		switch w := args[0].String(); w {
		case "request", "response":
			if named && (w == "response") != resp {
				return nil, nil, tcl.Errorf("%s: the context is on the %s side, not %s", cmd, sideWord(resp), w)
			}
			resp, args = w == "response", args[1:]
		}
	}
	if ctx == nil && s.event != HTTPRequest || ctx != nil && !adaptContextEvent(s.event) {
		valid := "HTTP_REQUEST"
		if ctx != nil {
			valid = "HTTP_REQUEST and the ADAPT_ events"
		}
		return nil, nil, tcl.Errorf("%s: not valid in %s (valid in %s)", cmd, s.event, valid)
	}
	if ctx != nil {
		return &adaptView{st: st, resp: resp, on: &ctx.Enable, has: true, down: &ctx.Down, timeout: &ctx.Timeout,
			preview: &ctx.Preview, http10: &ctx.HTTP10, virtual: &ctx.Virtual}, args, nil
	}
	c := &st.AdaptChoice
	if resp {
		return &adaptView{st: st, resp: true, on: &c.Response, has: st.hasResp, down: &c.ResponseDown, timeout: &c.ResponseTimeout,
			preview: &c.ResponsePreview, http10: &c.ResponseHTTP10, virtual: &c.ResponseVirtual}, args, nil
	}
	return &adaptView{st: st, on: &c.Request, has: st.hasReq, down: &c.RequestDown, timeout: &c.RequestTimeout,
		preview: &c.RequestPreview, http10: &c.RequestHTTP10, virtual: &c.RequestVirtual}, args, nil
}

// cmdAdaptEnable is `ADAPT::enable ?context? ?request|response? ?bool?`:
// whether the context (the side's static one by default, request
// unless named) is adapted, after setting it when bool is given; a side
// without its profile stays off.
func cmdAdaptEnable(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	v, rest, err := adaptOf(in, "ADAPT::enable", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::enable ?context? ?request|response? ?bool?")
	}
	if len(rest) == 1 {
		on, err := rest[0].Truth()
		if err != nil {
			return tcl.Empty, err
		}
		*v.on = on && v.has
	}
	return tcl.Bool(*v.on), nil
}

// cmdAdaptDown is `ADAPT::service_down_action ?context?
// ?request|response? ?ignore|drop|reset?`: the context's
// service-down-action, after setting it when given.
func cmdAdaptDown(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	v, rest, err := adaptOf(in, "ADAPT::service_down_action", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::service_down_action ?context? ?request|response? ?ignore|drop|reset?")
	}
	if len(rest) == 1 {
		switch a := rest[0].String(); a {
		case "ignore", "drop", "reset":
			*v.down = a
		default:
			return tcl.Empty, tcl.Errorf("ADAPT::service_down_action: %q is not ignore, drop or reset", a)
		}
	}
	return tcl.Str(*v.down), nil
}

// maxAdaptTimeout bounds ADAPT::timeout as the profile's timeout is
// bounded (milliseconds in 32 bits).
const maxAdaptTimeout = 1<<32 - 1

// maxAdaptPreview bounds ADAPT::preview_size as the profile's
// preview-size is (31 bits).
const maxAdaptPreview = 1<<31 - 1

// cmdAdaptTimeout is `ADAPT::timeout ?context? ?request|response? ?ms?`:
// the context's exchange timeout in milliseconds (0 none), after
// setting it when given.
func cmdAdaptTimeout(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	return adaptNumber(in, "ADAPT::timeout", "ms", maxAdaptTimeout, args, func(v *adaptView) *int { return v.timeout })
}

// cmdAdaptPreview is `ADAPT::preview_size ?context? ?request|response?
// ?bytes?`: the context's preview-size (0 no preview), after setting it
// when given.
func cmdAdaptPreview(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	return adaptNumber(in, "ADAPT::preview_size", "bytes", maxAdaptPreview, args, func(v *adaptView) *int { return v.preview })
}

// adaptNumber is the ADAPT:: commands reading and setting one number of
// a context, from 0 to most.
func adaptNumber(in *tcl.Interp, cmd, unit string, most int64, args []tcl.Value, field func(*adaptView) *int) (tcl.Value, error) {
	v, rest, err := adaptOf(in, cmd, args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?context? ?request|response? ?" + unit + "?")
	}
	f := field(v)
	if len(rest) == 1 {
		n, err := strconv.ParseInt(rest[0].String(), 10, 64)
		if err != nil || n < 0 || n > most {
			return tcl.Empty, tcl.Errorf("%s: %q is not a number of %s from 0 to %d", cmd, rest[0].String(), unit, most)
		}
		*f = int(n)
	}
	return tcl.Int(int64(*f)), nil
}
