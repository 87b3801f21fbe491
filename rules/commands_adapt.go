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
}

// cmdAdaptAllow is `ADAPT::allow http_v1.0 ?request|response? ?bool?`:
// whether the side adapts HTTP/1.0 messages, after setting it when bool
// is given. http_v1.0 is the only property BIG-IP documents.
func cmdAdaptAllow(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "ADAPT::allow http_v1.0 ?request|response? ?bool?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if p := args[1].String(); p != "http_v1.0" {
		return tcl.Empty, tcl.Errorf("ADAPT::allow: %q is not a property (http_v1.0)", p)
	}
	st, resp, rest, err := adaptOf(in, "ADAPT::allow", args[2:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	side := &st.RequestHTTP10
	if resp {
		side = &st.ResponseHTTP10
	}
	if len(rest) == 1 {
		on, err := rest[0].Truth()
		if err != nil {
			return tcl.Empty, err
		}
		*side = on
	}
	return tcl.Bool(*side), nil
}

// cmdAdaptSelect is `ADAPT::select ?request|response? ?virtual?`: the
// internal virtual server the side's message goes to, after choosing it
// when given; a name that is not an internal virtual server with an
// icap profile is an error, and the choice stays.
func cmdAdaptSelect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, resp, rest, err := adaptOf(in, "ADAPT::select", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::select ?request|response? ?virtual?")
	}
	side := &st.RequestVirtual
	if resp {
		side = &st.ResponseVirtual
	}
	if len(rest) == 1 {
		name := rest[0].String()
		full, ok := "", false
		if st.internal != nil {
			full, ok = st.internal(name)
		}
		if !ok {
			return tcl.Empty, tcl.Errorf("ADAPT::select: %q is not an internal virtual server with an icap profile", name)
		}
		*side = full
	}
	return tcl.Str(*side), nil
}

// cmdAdaptResult is `ADAPT::result`: what the exchange did, in
// ADAPT_REQUEST_RESULT and ADAPT_RESPONSE_RESULT. Setting a result is
// not supported [M].
func cmdAdaptResult(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::result")
	}
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
	return tcl.Str(s.adapt.Result), nil
}

// adaptOf returns the connection's ADAPT:: state and the side the
// command names (its first argument request or response, if given;
// otherwise the side of the event running), or the error of a command
// run without an adapt profile or outside HTTP_REQUEST.
func adaptOf(in *tcl.Interp, cmd string, args []tcl.Value) (*AdaptState, bool, []tcl.Value, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, false, nil, err
	}
	if s.adapt == nil {
		return nil, false, nil, tcl.Errorf("%s: the virtual server has no request-adapt or response-adapt profile", cmd)
	}
	if s.event != HTTPRequest {
		return nil, false, nil, tcl.Errorf("%s: not valid in %s (valid in HTTP_REQUEST)", cmd, s.event)
	}
	resp := false
	if len(args) > 0 {
		switch args[0].String() {
		case "request":
			args = args[1:]
		case "response":
			resp, args = true, args[1:]
		}
	}
	return s.adapt, resp, args, nil
}

// cmdAdaptEnable is `ADAPT::enable ?request|response? ?bool?`: whether
// the side (request by default) is adapted, after setting it when bool
// is given; a side without its profile stays off.
func cmdAdaptEnable(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, resp, rest, err := adaptOf(in, "ADAPT::enable", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::enable ?request|response? ?bool?")
	}
	side, has := &st.Request, st.hasReq
	if resp {
		side, has = &st.Response, st.hasResp
	}
	if len(rest) == 1 {
		on, err := rest[0].Truth()
		if err != nil {
			return tcl.Empty, err
		}
		*side = on && has
	}
	return tcl.Bool(*side), nil
}

// cmdAdaptDown is `ADAPT::service_down_action ?request|response?
// ?ignore|drop|reset?`: the side's service-down-action, after setting
// it when given.
func cmdAdaptDown(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, resp, rest, err := adaptOf(in, "ADAPT::service_down_action", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::service_down_action ?request|response? ?ignore|drop|reset?")
	}
	side := &st.RequestDown
	if resp {
		side = &st.ResponseDown
	}
	if len(rest) == 1 {
		switch a := rest[0].String(); a {
		case "ignore", "drop", "reset":
			*side = a
		default:
			return tcl.Empty, tcl.Errorf("ADAPT::service_down_action: %q is not ignore, drop or reset", a)
		}
	}
	return tcl.Str(*side), nil
}

// maxAdaptTimeout bounds ADAPT::timeout as the profile's timeout is
// bounded (milliseconds in 32 bits).
const maxAdaptTimeout = 1<<32 - 1

// maxAdaptPreview bounds ADAPT::preview_size as the profile's
// preview-size is (31 bits).
const maxAdaptPreview = 1<<31 - 1

// cmdAdaptTimeout is `ADAPT::timeout ?request|response? ?ms?`: the
// side's exchange timeout in milliseconds (0 none), after setting it
// when given.
func cmdAdaptTimeout(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	return adaptNumber(in, "ADAPT::timeout", "ms", maxAdaptTimeout, args, func(st *AdaptState, resp bool) *int {
		if resp {
			return &st.ResponseTimeout
		}
		return &st.RequestTimeout
	})
}

// cmdAdaptPreview is `ADAPT::preview_size ?request|response? ?bytes?`:
// the side's preview-size (0 no preview), after setting it when given.
func cmdAdaptPreview(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	return adaptNumber(in, "ADAPT::preview_size", "bytes", maxAdaptPreview, args, func(st *AdaptState, resp bool) *int {
		if resp {
			return &st.ResponsePreview
		}
		return &st.RequestPreview
	})
}

// adaptNumber is the ADAPT:: commands reading and setting one number of
// a side, from 0 to most.
func adaptNumber(in *tcl.Interp, cmd, unit string, most int64, args []tcl.Value, field func(*AdaptState, bool) *int) (tcl.Value, error) {
	st, resp, rest, err := adaptOf(in, cmd, args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?request|response? ?" + unit + "?")
	}
	f := field(st, resp)
	if len(rest) == 1 {
		n, err := strconv.ParseInt(rest[0].String(), 10, 64)
		if err != nil || n < 0 || n > most {
			return tcl.Empty, tcl.Errorf("%s: %q is not a number of %s from 0 to %d", cmd, rest[0].String(), unit, most)
		}
		*f = int(n)
	}
	return tcl.Int(int64(*f)), nil
}
