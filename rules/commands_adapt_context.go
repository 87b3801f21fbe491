package rules

import (
	"errors"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// AdaptContext is one dynamic adaptation context (ADAPT::context_create):
// an ICAP exchange of its own, with its own settings, that a side's
// messages go through in the order the contexts were created. While a
// side has dynamic contexts they take the static (profile) context's
// place, as on BIG-IP; a dynamic context starts from the side's profile
// settings [M].
type AdaptContext struct {
	// Name is the name the rule gave it (ADAPT::context_name).
	Name string
	// Response: the context adapts responses (RESPMOD), else requests.
	Response bool
	// Enable, Down, Timeout, Preview, HTTP10 and Virtual are the
	// context's ADAPT::enable, service_down_action, timeout (ms),
	// preview_size, allow http_v1.0 and select.
	Enable           bool
	Down             string
	Timeout, Preview int
	HTTP10           bool
	Virtual          string

	handle string
}

// Handle is the context's handle, as ADAPT::context_create returned it.
func (c *AdaptContext) Handle() string { return c.handle }

// maxAdaptContexts bounds the dynamic contexts of a connection, so that
// a rule creating one per request cannot grow it without end [M].
const maxAdaptContexts = 16

// adaptHandlePrefix starts every context handle [M: BIG-IP's handles are
// opaque]; the static contexts' are adaptStaticReq and adaptStaticResp.
const (
	adaptHandlePrefix = "adapt_ctx_"
	adaptStaticReq    = adaptHandlePrefix + "request_static"
	adaptStaticResp   = adaptHandlePrefix + "response_static"
)

func isAdaptHandle(s string) bool { return strings.HasPrefix(s, adaptHandlePrefix) }

func sideWord(resp bool) string {
	if resp {
		return "response"
	}
	return "request"
}

// context resolves a handle: the dynamic context (nil for a static
// handle) and its side.
func (st *AdaptState) context(h string) (*AdaptContext, bool, error) {
	switch h {
	case adaptStaticReq:
		if !st.hasReq {
			return nil, false, errors.New("the virtual server has no request-adapt profile")
		}
		return nil, false, nil
	case adaptStaticResp:
		if !st.hasResp {
			return nil, true, errors.New("the virtual server has no response-adapt profile")
		}
		return nil, true, nil
	}
	for _, c := range st.contexts {
		if c.handle == h {
			return c, c.Response, nil
		}
	}
	return nil, false, errors.New("no adaptation context " + strconv.Quote(h) + " on this connection")
}

// Contexts is how many dynamic contexts the side has now.
func (st *AdaptState) Contexts(resp bool) int {
	n := 0
	for _, c := range st.contexts {
		if c.Response == resp {
			n++
		}
	}
	return n
}

// Context is the side's i-th dynamic context (a copy), false past the
// last: the host asks again after each exchange's ADAPT_ events, which
// may have created more.
func (st *AdaptState) Context(resp bool, i int) (AdaptContext, bool) {
	for _, c := range st.contexts {
		if c.Response != resp {
			continue
		}
		if i == 0 {
			return *c, true
		}
		i--
	}
	return AdaptContext{}, false
}

// SetCurrent says whose exchange the ADAPT_ events about to run follow:
// the side's i-th dynamic context, or its static one when i < 0.
func (st *AdaptState) SetCurrent(resp bool, i int) {
	st.current, st.currentResp = nil, resp
	if i < 0 {
		return
	}
	for _, c := range st.contexts {
		if c.Response != resp {
			continue
		}
		if i == 0 {
			st.current = c
			return
		}
		i--
	}
}

func registerAdaptContexts(t *tcl.Commands) {
	t.Register("ADAPT::context_create", cmdAdaptContextCreate)
	t.Register("ADAPT::context_current", cmdAdaptContextCurrent)
	t.Register("ADAPT::context_delete_all", cmdAdaptContextDeleteAll)
	t.Register("ADAPT::context_name", cmdAdaptContextName)
	t.Register("ADAPT::context_static", cmdAdaptContextStatic)
}

// adaptState is the connection's ADAPT:: state, or the error of a
// virtual server without an adapt profile.
func adaptState(in *tcl.Interp, cmd string) (*ConnState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.adapt == nil {
		return nil, tcl.Errorf("%s: the virtual server has no request-adapt or response-adapt profile", cmd)
	}
	return s, nil
}

// eventSide is the side of the running event: response in the response
// events, request otherwise.
func eventSide(s *ConnState) bool {
	switch s.event {
	case HTTPResponse, AdaptResponseHeaders, AdaptResponseResult:
		return true
	}
	return false
}

// adaptContextEvent reports whether a dynamic context may be created or
// set in ev: HTTP_REQUEST (before the request's chain) and the ADAPT_
// events (between two exchanges of a chain). In HTTP_RESPONSE the
// response has been adapted already here [M: RESPMOD runs before it].
func adaptContextEvent(ev Event) bool {
	switch ev {
	case HTTPRequest, AdaptRequestHeaders, AdaptRequestResult, AdaptResponseHeaders, AdaptResponseResult:
		return true
	}
	return false
}

// cmdAdaptContextCreate is `ADAPT::context_create ?request|response?
// NAME`: a new dynamic context on the side (that of the running event
// by default), after the side's others, returning its handle.
func cmdAdaptContextCreate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "ADAPT::context_create"
	s, err := adaptState(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	rest := args[1:]
	resp := eventSide(s)
	if len(rest) == 2 {
		switch rest[0].String() {
		case "request":
			resp = false
		case "response":
			resp = true
		default:
			return tcl.Empty, tcl.Errorf("%s: %q is not request or response", cmd, rest[0].String())
		}
		rest = rest[1:]
	}
	if len(rest) != 1 || rest[0].String() == "" {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?request|response? name")
	}
	if !adaptContextEvent(s.event) {
		return tcl.Empty, tcl.Errorf("%s: not valid in %s (valid in HTTP_REQUEST and the ADAPT_ events)", cmd, s.event)
	}
	st := s.adapt
	if resp && !st.hasResp || !resp && !st.hasReq {
		return tcl.Empty, tcl.Errorf("%s: the virtual server has no %s-adapt profile", cmd, sideWord(resp))
	}
	if len(st.contexts) >= maxAdaptContexts {
		return tcl.Empty, tcl.Errorf("%s: the connection has %d adaptation contexts already, the most it may have", cmd, maxAdaptContexts)
	}
	d := st.def
	c := &AdaptContext{Name: rest[0].String(), Response: resp, Enable: true, Down: d.RequestDown, Timeout: d.RequestTimeout,
		Preview: d.RequestPreview, HTTP10: d.RequestHTTP10, Virtual: d.RequestVirtual}
	if resp {
		c.Down, c.Timeout, c.Preview, c.HTTP10, c.Virtual = d.ResponseDown, d.ResponseTimeout, d.ResponsePreview, d.ResponseHTTP10, d.ResponseVirtual
	}
	st.next++
	c.handle = adaptHandlePrefix + strconv.Itoa(st.next)
	st.contexts = append(st.contexts, c)
	return tcl.Str(c.handle), nil
}

// cmdAdaptContextCurrent is `ADAPT::context_current`: the context whose
// exchange the running ADAPT_ event follows; in other events the
// event's side's static context [M].
func cmdAdaptContextCurrent(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::context_current")
	}
	s, err := adaptState(in, "ADAPT::context_current")
	if err != nil {
		return tcl.Empty, err
	}
	st := s.adapt
	switch s.event {
	case AdaptRequestHeaders, AdaptRequestResult, AdaptResponseHeaders, AdaptResponseResult:
		if st.current != nil {
			return tcl.Str(st.current.handle), nil
		}
		return tcl.Str(staticHandle(st, st.currentResp)), nil
	}
	return tcl.Str(staticHandle(st, eventSide(s))), nil
}

// staticHandle is the side's static context's handle, "" when the side
// has no adapt profile.
func staticHandle(st *AdaptState, resp bool) string {
	switch {
	case resp && st.hasResp:
		return adaptStaticResp
	case !resp && st.hasReq:
		return adaptStaticReq
	}
	return ""
}

// cmdAdaptContextStatic is `ADAPT::context_static ?request|response?`:
// the side's static (profile) context, "" when the side has no adapt
// profile.
func cmdAdaptContextStatic(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, err := adaptState(in, "ADAPT::context_static")
	if err != nil {
		return tcl.Empty, err
	}
	resp := eventSide(s)
	switch {
	case len(args) == 2 && args[1].String() == "request":
		resp = false
	case len(args) == 2 && args[1].String() == "response":
		resp = true
	case len(args) != 1:
		return tcl.Empty, tcl.WrongArgs("ADAPT::context_static ?request|response?")
	}
	return tcl.Str(staticHandle(s.adapt, resp)), nil
}

// cmdAdaptContextName is `ADAPT::context_name CONTEXT`: the name a
// dynamic context was created with, or the adapt profile of a static
// one.
func cmdAdaptContextName(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::context_name context")
	}
	s, err := adaptState(in, "ADAPT::context_name")
	if err != nil {
		return tcl.Empty, err
	}
	c, resp, err := s.adapt.context(args[1].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("ADAPT::context_name: %v", err)
	}
	switch {
	case c != nil:
		return tcl.Str(c.Name), nil
	case resp:
		return tcl.Str(s.adapt.def.ResponseProfile), nil
	}
	return tcl.Str(s.adapt.def.RequestProfile), nil
}

// cmdAdaptContextDeleteAll is `ADAPT::context_delete_all`: every dynamic
// context of both sides goes, and the static contexts apply again from
// the next exchange; the handles name nothing after.
func cmdAdaptContextDeleteAll(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("ADAPT::context_delete_all")
	}
	s, err := adaptState(in, "ADAPT::context_delete_all")
	if err != nil {
		return tcl.Empty, err
	}
	s.adapt.contexts, s.adapt.current = nil, nil
	return tcl.Empty, nil
}
