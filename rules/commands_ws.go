package rules

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"

	"github.com/openltm/openltm/dataplane/wsframe"
	"github.com/openltm/openltm/rules/tcl"
)

// WSState is what the WS:: commands read and decide on a connection of a
// virtual server with a websocket profile. The host sets Frame while a
// frame event runs (WS_CLIENT_FRAME, _DATA, _FRAME_DONE and the server
// side's) and reads Off and Masking after WS_REQUEST and WS_RESPONSE.
// Without the profile it is nil and the commands are errors, as BIG-IP
// refuses such a rule.
type WSState struct {
	// Frame is the frame at hand; nil outside the frame events.
	Frame *wsframe.Frame
	// Off: WS::enabled false, the upgraded connection is not framed.
	Off bool
	// Masking is WS::masking's choice when MaskingSet.
	Masking    wsframe.Masking
	MaskingSet bool
}

// SetWebSocket gives the connection a websocket state: the virtual
// server has a websocket profile.
func (s *ConnState) SetWebSocket() { s.ws = &WSState{} }

// WebSocket is the connection's websocket state; nil without a websocket
// profile. The host reads it under the lock its events run under.
func (s *ConnState) WebSocket() *WSState { return s.ws }

func registerWS(t *tcl.Commands) {
	t.Register("WS::collect", cmdWSCollect)
	t.Register("WS::payload", cmdWSPayload)
	t.Register("WS::release", cmdWSRelease)
	t.Register("WS::frame", cmdWSFrame)
	t.Register("WS::message", cmdWSMessage)
	t.Register("WS::disconnect", cmdWSDisconnect)
	t.Register("WS::enabled", cmdWSEnabled)
	t.Register("WS::masking", cmdWSMasking)
	t.Register("WS::request", cmdWSHeaders("WS::request", false))
	t.Register("WS::response", cmdWSHeaders("WS::response", true))
	for _, n := range t.Names() {
		if strings.HasPrefix(n, "WS::") {
			cmd := t.Lookup(n)
			cmd.Compile = needHook(n, func(r *Rule) *[]HTTPNeed { return &r.wsNeeds }, cmd.Compile)
		}
	}
}

// wsOf returns the connection's websocket state in one of the events
// valid lists (any event when valid is empty), or the command's error.
func wsOf(in *tcl.Interp, cmd string, valid ...Event) (*ConnState, *WSState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	if s.ws == nil {
		return nil, nil, tcl.Errorf("%s: the virtual server has no websocket profile", cmd)
	}
	if len(valid) == 0 {
		return s, s.ws, nil
	}
	var names []string
	for _, ev := range valid {
		if s.event == ev {
			return s, s.ws, nil
		}
		names = append(names, ev.String())
	}
	return nil, nil, tcl.Errorf("%s: not valid in %s (valid in %s)", cmd, s.event, strings.Join(names, ", "))
}

// The events a frame is at hand in.
var (
	wsFrameEvents = []Event{WSClientFrame, WSServerFrame}
	wsDataEvents  = []Event{WSClientData, WSServerData}
	wsDoneEvents  = []Event{WSClientFrameDone, WSServerFrameDone}
	wsAnyFrame    = []Event{WSClientFrame, WSServerFrame, WSClientData, WSServerData, WSClientFrameDone, WSServerFrameDone}
	wsHandshake   = []Event{WSRequest, WSResponse}
)

// cmdWSCollect is `WS::collect frame ?LENGTH?`: the frame's payload (its
// first LENGTH bytes) before WS_*_DATA. In a DATA event the frame's
// collected part is already decided: the command is accepted and
// collects nothing more [M].
func cmdWSCollect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "WS::collect frame ?length?"
	if len(args) < 2 || len(args) > 3 || args[1].String() != "frame" {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	n := int64(0)
	if len(args) == 3 {
		var err error
		if n, err = args[2].Int64(); err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("WS::collect: expected a length of 0 or more but got %q", args[2].String())
		}
	}
	s, ws, err := wsOf(in, "WS::collect", append(wsFrameEvents, wsDataEvents...)...)
	if err != nil {
		return tcl.Empty, err
	}
	if s.event == WSClientFrame || s.event == WSServerFrame {
		ws.Frame.Collect(int(n))
	}
	return tcl.Empty, nil
}

// cmdWSPayload is `WS::payload ?LENGTH? | ?OFFSET LENGTH? | length |
// replace OFFSET LENGTH STRING` over what WS::collect collected.
func cmdWSPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, ws, err := wsOf(in, "WS::payload", wsDataEvents...)
	if err != nil {
		return tcl.Empty, err
	}
	f := ws.Frame
	p := f.Payload()
	a := args[1:]
	switch {
	case len(a) == 1 && a[0].String() == "length":
		return tcl.Int(int64(len(p))), nil
	case len(a) == 4 && a[0].String() == "replace":
		off, err1 := a[1].Int64()
		n, err2 := a[2].Int64()
		if err1 != nil || err2 != nil {
			return tcl.Empty, tcl.Errorf("WS::payload replace: expected an offset and a length but got %q %q", a[1].String(), a[2].String())
		}
		if err := f.ReplacePayload(int(off), int(n), []byte(a[3].String())); err != nil {
			return tcl.Empty, tcl.Errorf("WS::payload replace: %v", err)
		}
		return tcl.Empty, nil
	case len(a) <= 2:
		off, n := int64(0), int64(len(p))
		var err error
		if len(a) == 1 {
			n, err = a[0].Int64()
		} else if len(a) == 2 {
			off, err = a[0].Int64()
			if err == nil {
				n, err = a[1].Int64()
			}
		}
		if err != nil || off < 0 || n < 0 {
			return tcl.Empty, tcl.WrongArgs("WS::payload ?length? | ?offset length? | length | replace offset length string")
		}
		off = min(off, int64(len(p)))
		n = min(n, int64(len(p))-off)
		return tcl.Str(string(p[off : off+n])), nil
	}
	return tcl.Empty, tcl.WrongArgs("WS::payload ?length? | ?offset length? | length | replace offset length string")
}

// cmdWSRelease is WS::release: the collected payload goes on when the
// DATA event ends whether or not the rule releases it [M], so the
// command only checks where it runs.
func cmdWSRelease(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("WS::release")
	}
	_, _, err := wsOf(in, "WS::release", wsDataEvents...)
	return tcl.Empty, err
}

// cmdWSFrame is WS::frame's questions (eom, type, mask, orig_masked) and
// its edits (drop, insert, prepend, append, replace).
func cmdWSFrame(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "WS::frame eom | drop | orig_masked | type | mask | insert type payload ?mask? | prepend payload | append payload | replace payload"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	op := args[1].String()
	valid := wsAnyFrame
	switch op {
	case "insert", "prepend", "append", "replace":
		valid = wsFrameEvents
	case "drop":
		// In WS_*_DATA too, once the rule has read the payload [M].
		valid = append(wsFrameEvents[:2:2], wsDataEvents...)
	}
	_, ws, err := wsOf(in, "WS::frame", valid...)
	if err != nil {
		return tcl.Empty, err
	}
	f := ws.Frame
	h := f.Header()
	one := func(v tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		return v, nil
	}
	edit := func(fn func([]byte) error) (tcl.Value, error) {
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		if err := fn([]byte(args[2].String())); err != nil {
			return tcl.Empty, tcl.Errorf("WS::frame %s: %v", op, err)
		}
		return tcl.Empty, nil
	}
	switch op {
	case "eom":
		return one(tcl.Bool(h.Fin))
	case "type":
		return one(tcl.Int(int64(h.Opcode)))
	case "orig_masked":
		return one(tcl.Bool(h.Masked))
	case "mask":
		return one(tcl.Int(int64(wsframe.KeyNumber(h.Key))))
	case "drop":
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		f.Drop()
		return tcl.Empty, nil
	case "insert":
		if len(args) != 4 && len(args) != 5 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		typ, err := args[2].Int64()
		if err != nil || (typ != wsframe.OpText && typ != wsframe.OpBinary) {
			return tcl.Empty, tcl.Errorf("WS::frame insert: expected a frame type of 1 (text) or 2 (binary) but got %q", args[2].String())
		}
		var key [4]byte
		masked := len(args) == 5
		if masked {
			m, err := args[4].Int64()
			if err != nil || m < 0 || m > 0xFFFFFFFF {
				return tcl.Empty, tcl.Errorf("WS::frame insert: expected a mask from 0 to 4294967295 but got %q", args[4].String())
			}
			key = wsframe.KeyOf(uint32(m))
		}
		f.Insert(uint8(typ), []byte(args[3].String()), key, masked)
		return tcl.Empty, nil
	case "prepend":
		return edit(f.Prepend)
	case "append":
		return edit(f.Append)
	case "replace":
		return edit(f.Replace)
	}
	return tcl.Empty, tcl.Errorf("WS::frame: unknown option %q: expected eom, drop, orig_masked, type, mask, insert, prepend, append or replace", op)
}

// cmdWSMessage is `WS::message drop`: the frame and the rest of its
// message go.
func cmdWSMessage(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || args[1].String() != "drop" {
		return tcl.Empty, tcl.WrongArgs("WS::message drop")
	}
	_, ws, err := wsOf(in, "WS::message", wsFrameEvents...)
	if err != nil {
		return tcl.Empty, err
	}
	ws.Frame.DropMessage()
	return tcl.Empty, nil
}

// cmdWSDisconnect is `WS::disconnect CODE ?REASON?`: a close frame to
// both ends once the frame is done, then the connection closes.
func cmdWSDisconnect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("WS::disconnect code ?reason?")
	}
	code, err := args[1].Int64()
	if err != nil || code < 1000 || code > 4999 {
		return tcl.Empty, tcl.Errorf("WS::disconnect: expected a close code from 1000 to 4999 but got %q", args[1].String())
	}
	_, ws, err := wsOf(in, "WS::disconnect", wsDoneEvents...)
	if err != nil {
		return tcl.Empty, err
	}
	reason := ""
	if len(args) == 3 {
		reason = args[2].String()
	}
	ws.Frame.Disconnect(uint16(code), reason)
	return tcl.Empty, nil
}

// cmdWSEnabled is `WS::enabled ?BOOLEAN?`: whether the upgraded
// connection is framed; false, in WS_REQUEST or WS_RESPONSE, leaves it a
// plain tunnel.
func cmdWSEnabled(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	switch len(args) {
	case 1:
		_, ws, err := wsOf(in, "WS::enabled")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bool(!ws.Off), nil
	case 2:
		on, err := args[1].Truth()
		if err != nil {
			return tcl.Empty, tcl.Errorf("WS::enabled: expected a boolean but got %q", args[1].String())
		}
		_, ws, err := wsOf(in, "WS::enabled", wsHandshake...)
		if err != nil {
			return tcl.Empty, err
		}
		ws.Off = !on
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs("WS::enabled ?boolean?")
}

// cmdWSMasking is `WS::masking preserve|remask`, in place of the
// profile's masking.
func cmdWSMasking(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("WS::masking preserve|remask")
	}
	var m wsframe.Masking
	switch args[1].String() {
	case "preserve":
		m = wsframe.Preserve
	case "remask":
		m = wsframe.Remask
	default:
		return tcl.Empty, tcl.Errorf("WS::masking: expected preserve or remask but got %q", args[1].String())
	}
	_, ws, err := wsOf(in, "WS::masking", wsHandshake...)
	if err != nil {
		return tcl.Empty, err
	}
	ws.Masking, ws.MaskingSet = m, true
	return tcl.Empty, nil
}

// wsGUID is RFC 6455's key suffix for Sec-WebSocket-Accept.
const wsGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

// cmdWSHeaders is WS::request and WS::response: the handshake's
// WebSocket fields (protocol, extension, version, key; the response's
// valid: a 101 whose Sec-WebSocket-Accept answers the request's key).
func cmdWSHeaders(name string, response bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		use := name + " protocol | extension | version | key"
		if response {
			use += " | valid"
		}
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(use)
		}
		valid := WSRequest
		if response {
			valid = WSResponse
		}
		s, _, err := wsOf(in, name, valid)
		if err != nil {
			return tcl.Empty, err
		}
		hc, ok := s.conn.(HTTPConn)
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no http profile", name)
		}
		h := hc.HTTPRequest()
		if response {
			h = hc.HTTPResponse()
		}
		if h == nil {
			return tcl.Empty, nil
		}
		field := ""
		switch args[1].String() {
		case "protocol":
			field = "sec-websocket-protocol"
		case "extension":
			field = "sec-websocket-extensions"
		case "version":
			field = "sec-websocket-version"
		case "key":
			field = "sec-websocket-key"
			if response {
				field = "sec-websocket-accept"
			}
		case "valid":
			if !response {
				return tcl.Empty, tcl.WrongArgs(use)
			}
			req := hc.HTTPRequest()
			if req == nil || h.Status() != 101 {
				return tcl.Bool(false), nil
			}
			key, _ := req.Header("sec-websocket-key")
			accept, _ := h.Header("sec-websocket-accept")
			sum := sha1.Sum([]byte(strings.TrimSpace(string(key)) + wsGUID))
			return tcl.Bool(len(key) > 0 && strings.TrimSpace(string(accept)) == base64.StdEncoding.EncodeToString(sum[:])), nil
		default:
			return tcl.Empty, tcl.WrongArgs(use)
		}
		v, _ := h.Header(field)
		return tcl.Str(string(v)), nil
	}
}
