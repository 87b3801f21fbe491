package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/rtsp"
	"github.com/openltm/openltm/rules/tcl"
)

// RTSPState is the RTSP message the RTSP_ events run over. The host
// binds a parsed message with BeginRTSP, runs the event, and takes the
// rule's decisions with EndRTSP, under the lock its events run under.
type RTSPState struct {
	msg        *rtsp.Message
	fromServer bool
	collect    bool
	respond    *rtsp.Message
}

// BeginRTSP binds m, read from the member (fromServer) or the client,
// to the RTSP:: commands of the events about to run.
func (s *ConnState) BeginRTSP(m *rtsp.Message, fromServer bool) {
	if s.rtsp == nil {
		s.rtsp = &RTSPState{}
	}
	*s.rtsp = RTSPState{msg: m, fromServer: fromServer}
}

// EndRTSP forgets the message and says what the rule asked: collect,
// RTSP::collect (the body's event is to run); respond, RTSP::respond's
// answer (the request goes no further; nil: none).
func (s *ConnState) EndRTSP() (collect bool, respond *rtsp.Message) {
	if s.rtsp == nil {
		return false, nil
	}
	collect, respond = s.rtsp.collect, s.rtsp.respond
	*s.rtsp = RTSPState{}
	return collect, respond
}

func registerRTSP(t *tcl.Commands) {
	t.Register("RTSP::method", cmdRTSPMethod)
	t.Register("RTSP::uri", cmdRTSPURI)
	t.Register("RTSP::version", cmdRTSPVersion)
	t.Register("RTSP::status", cmdRTSPStatus)
	t.Register("RTSP::msg_source", cmdRTSPSource)
	t.Register("RTSP::header", cmdRTSPHeader)
	t.Register("RTSP::payload", cmdRTSPPayload)
	t.Register("RTSP::collect", cmdRTSPCollect)
	t.Register("RTSP::release", cmdRTSPRelease)
	t.Register("RTSP::respond", cmdRTSPRespond)
}

// rtspOf is the event's RTSP state, or the error of a command used where
// no message is at hand.
func rtspOf(in *tcl.Interp, cmd string) (*RTSPState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.rtsp == nil || s.rtsp.msg == nil {
		return nil, tcl.Errorf("%s: no RTSP message in %s (valid in the RTSP_ events)", cmd, s.event)
	}
	return s.rtsp, nil
}

func noArgs(args []tcl.Value, use string) error {
	if len(args) != 1 {
		return tcl.WrongArgs(use)
	}
	return nil
}

// cmdRTSPMethod is the request's method; "" in a response [M].
func cmdRTSPMethod(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if err := noArgs(args, "RTSP::method"); err != nil {
		return tcl.Empty, err
	}
	st, err := rtspOf(in, "RTSP::method")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.msg.Method), nil
}

// cmdRTSPURI is `RTSP::uri ?new?`: the request's URI, or sets it.
func cmdRTSPURI(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("RTSP::uri ?uri?")
	}
	st, err := rtspOf(in, "RTSP::uri")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		u := args[1].String()
		if !st.msg.Request || u == "" || strings.ContainsAny(u, " \t\r\n") {
			return tcl.Empty, tcl.Errorf("RTSP::uri: %q cannot be a request's URI here", u)
		}
		st.msg.URI = u
		return tcl.Empty, nil
	}
	return tcl.Str(st.msg.URI), nil
}

// cmdRTSPVersion is the message's RTSP version ("RTSP/1.0").
func cmdRTSPVersion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if err := noArgs(args, "RTSP::version"); err != nil {
		return tcl.Empty, err
	}
	st, err := rtspOf(in, "RTSP::version")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.msg.Version), nil
}

// cmdRTSPStatus is a response's status code; "" in a request [M].
func cmdRTSPStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if err := noArgs(args, "RTSP::status"); err != nil {
		return tcl.Empty, err
	}
	st, err := rtspOf(in, "RTSP::status")
	if err != nil {
		return tcl.Empty, err
	}
	if st.msg.Request {
		return tcl.Empty, nil
	}
	return tcl.Int(int64(st.msg.Status)), nil
}

// cmdRTSPSource is who sent the message: "client" or "server" [M: the
// words are openltm's].
func cmdRTSPSource(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if err := noArgs(args, "RTSP::msg_source"); err != nil {
		return tcl.Empty, err
	}
	st, err := rtspOf(in, "RTSP::msg_source")
	if err != nil {
		return tcl.Empty, err
	}
	if st.fromServer {
		return tcl.Str("server"), nil
	}
	return tcl.Str("client"), nil
}

// cmdRTSPHeader reads and edits the message's headers as HTTP::header
// does: `RTSP::header ?value? NAME`, `names`, `count ?NAME?`, `exists
// NAME`, `insert NAME VALUE`, `replace NAME VALUE` (insert when absent)
// and `remove NAME` [M: the subcommands follow HTTP::header's].
func cmdRTSPHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "RTSP::header ?value? NAME | names | count ?NAME? | exists NAME | insert NAME VALUE | replace NAME VALUE | remove NAME"
	st, err := rtspOf(in, "RTSP::header")
	if err != nil {
		return tcl.Empty, err
	}
	m := st.msg
	a := args[1:]
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	switch sub := a[0].String(); {
	case sub == "names" && len(a) == 1:
		out := make([]tcl.Value, len(m.Fields))
		for i, f := range m.Fields {
			out[i] = tcl.Str(f.Name)
		}
		return tcl.List(out...), nil
	case sub == "count" && len(a) <= 2:
		if len(a) == 1 {
			return tcl.Int(int64(len(m.Fields))), nil
		}
		return tcl.Int(int64(len(m.Values(a[1].String())))), nil
	case sub == "exists" && len(a) == 2:
		_, ok := m.Get(a[1].String())
		return tcl.Bool(ok), nil
	case sub == "value" && len(a) == 2:
		v, _ := m.Get(a[1].String())
		return tcl.Str(v), nil
	case (sub == "insert" || sub == "replace") && len(a) == 3:
		name, val := a[1].String(), a[2].String()
		if name == "" || strings.ContainsAny(name, ": \t\r\n") || strings.ContainsAny(val, "\r\n") {
			return tcl.Empty, tcl.Errorf("RTSP::header %s: %q: %q is not a header line", sub, name, val)
		}
		if sub == "insert" {
			m.Add(name, val)
		} else {
			m.Set(name, val)
		}
		return tcl.Empty, nil
	case sub == "remove" && len(a) == 2:
		m.Remove(a[1].String())
		return tcl.Empty, nil
	case len(a) == 1:
		v, _ := m.Get(sub)
		return tcl.Str(v), nil
	}
	return tcl.Empty, tcl.WrongArgs(use)
}

// cmdRTSPPayload is `RTSP::payload ?length? | replace OFFSET LENGTH
// DATA`: the message's body (what RTSP::collect gathered), or an edit
// of it (Content-Length follows).
func cmdRTSPPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "RTSP::payload ?length? | replace OFFSET LENGTH DATA"
	st, err := rtspOf(in, "RTSP::payload")
	if err != nil {
		return tcl.Empty, err
	}
	body := st.msg.Body
	switch {
	case len(args) == 1:
		return tcl.Bytes(body), nil
	case len(args) == 2:
		n, err := args[1].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		return tcl.Bytes(body[:min(int(n), len(body))]), nil
	case len(args) == 5 && args[1].String() == "replace":
		off, err1 := args[2].Int64()
		n, err2 := args[3].Int64()
		if err1 != nil || err2 != nil || off < 0 || n < 0 || int(off) > len(body) {
			return tcl.Empty, tcl.Errorf("RTSP::payload replace: offset %s and length %s are not within the %d-byte payload", args[2].String(), args[3].String(), len(body))
		}
		end := min(int(off+n), len(body))
		nb := append(append(append([]byte(nil), body[:off]...), tcl.BytesOf(args[4])...), body[end:]...)
		st.msg.Body = nb
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(use)
}

// cmdRTSPCollect asks for the message's body: RTSP_REQUEST_DATA (or
// RTSP_RESPONSE_DATA) runs over it once it is in. The gateway reads
// whole messages (their bodies are bounded by max-queued-data), so a
// length is accepted and the whole body given [M].
func cmdRTSPCollect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("RTSP::collect ?length?")
	}
	st, err := rtspOf(in, "RTSP::collect")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		if n, err := args[1].Int64(); err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("RTSP::collect: expected a length of 0 or more but got %q", args[1].String())
		}
	}
	st.collect = true
	return tcl.Empty, nil
}

// cmdRTSPRelease lets the collected message go on; it goes once its
// events have run in any case.
func cmdRTSPRelease(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if err := noArgs(args, "RTSP::release"); err != nil {
		return tcl.Empty, err
	}
	_, err := rtspOf(in, "RTSP::release")
	return tcl.Empty, err
}

// cmdRTSPRespond is `RTSP::respond CODE ?content BODY? ?NAME VALUE ...?`
// in RTSP_REQUEST: the client gets this answer (with the request's
// CSeq and Session) and the request goes no further [M: the argument
// form follows HTTP::respond's].
func cmdRTSPRespond(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "RTSP::respond CODE ?content BODY? ?NAME VALUE ...?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	st, err := rtspOf(in, "RTSP::respond")
	if err != nil {
		return tcl.Empty, err
	}
	if !st.msg.Request || st.fromServer {
		return tcl.Empty, tcl.Errorf("RTSP::respond: valid over a client's request (RTSP_REQUEST)")
	}
	code, err := strconv.Atoi(args[1].String())
	if err != nil || code < 100 || code > 999 {
		return tcl.Empty, tcl.Errorf("RTSP::respond: %q is not a status code", args[1].String())
	}
	r := &rtsp.Message{Version: "RTSP/1.0", Status: code, Reason: rtsp.Reason(code)}
	if v, ok := st.msg.Get("CSeq"); ok {
		r.Add("CSeq", v)
	}
	if v, ok := st.msg.Get("Session"); ok {
		r.Add("Session", v)
	}
	a := args[2:]
	if len(a) >= 2 && a[0].String() == "content" {
		r.Body = tcl.BytesOf(a[1])
		a = a[2:]
	}
	if len(a)%2 != 0 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	for i := 0; i < len(a); i += 2 {
		r.Set(a[i].String(), a[i+1].String())
	}
	st.respond = r
	return tcl.Empty, nil
}
