package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/sipmsg"
	"github.com/openltm/openltm/rules/tcl"
)

// The SDP:: commands read and rewrite the session description a SIP
// message carries (its body, when its Content-Type is application/sdp),
// wherever the SIP:: commands have the message: the sip profile's
// SIP_ events over TCP and UDP, and message routing's SIP_ and MR_
// events. A message without one reads as empty (SDP::media count 0).
// A rewrite changes the body and its Content-Length, in the events in
// which the message may still change.

func registerSDP(t *tcl.Commands) {
	t.Register("SDP::field", cmdSDPField)
	t.Register("SDP::media", cmdSDPMedia)
	t.Register("SDP::session_id", cmdSDPSessionID)
}

// sdpOf is the message at hand and its description (nil: none).
func sdpOf(in *tcl.Interp, cmd string, edit bool) (*SIPState, []byte, error) {
	var valid []Event
	if edit {
		valid = sipEditEvents
	}
	st, m, err := sipOf(in, cmd, valid...)
	if err != nil {
		return nil, nil, err
	}
	return st, m.SDP(), nil
}

// sdpIndex reads an index argument (0 or more).
func sdpIndex(cmd string, v tcl.Value) (int, error) {
	n, err := v.Int64()
	if err != nil || n < 0 || n > 1<<20 {
		return 0, tcl.Errorf("%s: expected an index (0 or more) but got %q", cmd, v.String())
	}
	return int(n), nil
}

// sdpSet replaces the message's description with body.
func sdpSet(st *SIPState, body []byte) {
	st.set(sipmsg.SetBody(st.Msg, body))
}

// sdpValue checks a value a rewrite puts on one line.
func sdpValue(cmd string, v tcl.Value) ([]byte, error) {
	s := v.String()
	if strings.ContainsAny(s, "\r\n") {
		return nil, tcl.Errorf("%s: the new value may not hold a line break", cmd)
	}
	return []byte(s), nil
}

// cmdSDPField is `SDP::field NAME ?INDEX ?VALUE??`: the value of the
// description's INDEX-th (0 by default) line of type NAME (a letter: v,
// o, s, c, m, a, ...), counting the session's and every medium's lines,
// empty when there is none; with VALUE the line gets it [M: a line the
// description lacks is not added; setting it is an error].
func cmdSDPField(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd, usage = "SDP::field", "SDP::field name ?index ?value??"
	if len(args) < 2 || len(args) > 4 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	name := args[1].String()
	if len(name) != 1 || !(name[0] >= 'a' && name[0] <= 'z' || name[0] >= 'A' && name[0] <= 'Z') {
		return tcl.Empty, tcl.Errorf("%s: %q is not an SDP field name (one letter: v, o, s, c, t, m, a, ...)", cmd, name)
	}
	n := 0
	if len(args) >= 3 {
		var err error
		if n, err = sdpIndex(cmd, args[2]); err != nil {
			return tcl.Empty, err
		}
	}
	st, body, err := sdpOf(in, cmd, len(args) == 4)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 4 {
		v, _ := sipmsg.SDPField(body, name[0], n)
		return tcl.Str(string(v)), nil
	}
	v, err := sdpValue(cmd, args[3])
	if err != nil {
		return tcl.Empty, err
	}
	out, ok := sipmsg.SetSDPField(body, name[0], n, v)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: the message's session description has no %s field %d", cmd, name, n)
	}
	sdpSet(st, out)
	return tcl.Empty, nil
}

// cmdSDPMedia is SDP::media: `count` (or no argument) the number of
// media; INDEX a medium's m= line; `type|transport ?INDEX?` its type
// (audio, video, ...) or transport (RTP/AVP, ...); `attr ?INDEX
// ?ATTR??` its ATTR-th a= line; `port ?INDEX ?PORT??` its port, or the
// port rewritten; `conn ?INDEX ?VALUE??` its connection (its c= line,
// else the session's), or its own c= line rewritten (added when it has
// none). INDEX and ATTR are 0 when left out [M: BIG-IP documents the
// forms; the defaults are openltm's].
func cmdSDPMedia(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "SDP::media"
	const usage = "SDP::media ?count|index? | type|transport ?index? | attr ?index ?attr?? | port ?index ?port?? | conn ?index ?value??"
	if len(args) == 1 || len(args) == 2 && args[1].String() == "count" {
		_, body, err := sdpOf(in, cmd, false)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(sipmsg.SDPMediaCount(body))), nil
	}
	sub := args[1].String()
	idx := []int{0, 0}
	var set tcl.Value
	hasSet := false
	max := 3 // sub and one index
	switch sub {
	case "attr", "port", "conn":
		max = 4
	case "type", "transport":
	default:
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		n, err := sdpIndex(cmd, args[1])
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: expected count, an index, type, transport, attr, port or conn but got %q", cmd, sub)
		}
		_, body, err := sdpOf(in, cmd, false)
		if err != nil {
			return tcl.Empty, err
		}
		md, _ := sipmsg.SDPMediaAt(body, n)
		return tcl.Str(string(md.Line)), nil
	}
	if len(args) > max {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	for i, a := range args[2:] {
		if i == 1 && sub != "attr" {
			set, hasSet = a, true
			break
		}
		n, err := sdpIndex(cmd, a)
		if err != nil {
			return tcl.Empty, err
		}
		idx[i] = n
	}
	st, body, err := sdpOf(in, cmd, hasSet)
	if err != nil {
		return tcl.Empty, err
	}
	md, ok := sipmsg.SDPMediaAt(body, idx[0])
	if !hasSet {
		if !ok {
			return tcl.Empty, nil
		}
		var v []byte
		switch sub {
		case "type":
			v = md.Type()
		case "transport":
			v = md.Transport()
		case "attr":
			v, _ = md.Attr(body, idx[1])
		case "port":
			v = md.Port()
		case "conn":
			v, _ = md.Conn(body)
		}
		return tcl.Str(string(v)), nil
	}
	if !ok {
		return tcl.Empty, tcl.Errorf("%s %s: the message's session description has no medium %d", cmd, sub, idx[0])
	}
	var out []byte
	if sub == "port" {
		p, err := strconv.ParseUint(set.String(), 10, 16)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s port: expected a port (0 to 65535) but got %q", cmd, set.String())
		}
		out, _ = sipmsg.SetSDPMediaPort(body, idx[0], uint16(p))
	} else {
		v, err := sdpValue(cmd+" conn", set)
		if err != nil {
			return tcl.Empty, err
		}
		out, _ = sipmsg.SetSDPMediaConn(body, idx[0], v)
	}
	sdpSet(st, out)
	return tcl.Empty, nil
}

// cmdSDPSessionID is SDP::session_id: the session id of the
// description's origin (the o= line's second word), empty when there is
// none.
func cmdSDPSessionID(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("SDP::session_id")
	}
	_, body, err := sdpOf(in, "SDP::session_id", false)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(string(sipmsg.SDPSessionID(body))), nil
}
