package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/rules/tcl"
)

// IPFIX is what the IPFIX:: commands reach: the running configuration's
// information elements, the system's templates, and the log publishers
// whose ipfix destinations take records.
type IPFIX interface {
	// Elements are IANA's elements and the sys ipfix element ones.
	Elements() *ipfix.Elements
	// Templates are the templates rules made, shared by every rule.
	Templates() *ipfix.Templates
	// OpenDestination returns the handle of a sys log-config publisher
	// (bare names are in /Common) that has an ipfix destination.
	OpenDestination(publisher string) (string, error)
	// Send gives r to the handle's publisher: false when no destination
	// queued it. An error is a handle OpenDestination did not make.
	Send(handle string, r *ipfix.Record) (bool, error)
}

// registerIPFIX adds IPFIX::destination, IPFIX::template and IPFIX::msg
// (valid in every event, as F5 documents them).
func registerIPFIX(t *tcl.Commands) {
	t.Register("IPFIX::destination", cmdIPFIXDestination).Compile = ipfixHook
	t.Register("IPFIX::template", cmdIPFIXTemplate).Compile = ipfixHook
	t.Register("IPFIX::msg", cmdIPFIXMsg).Compile = ipfixHook
}

// ipfixHook gives a rule naming an IPFIX:: command its counters (show
// sys ipfix irules).
func ipfixHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok && r.ipfix == nil {
		r.ipfix = &ipfixCounters{}
	}
	return nil
}

// Handles. A template's handle names its id, so a static variable holding
// it stays good across connections; a message's names its slot in the
// connection's state, and ends with the connection.
const (
	ipfixTemplatePrefix = "ipfix_template_"
	ipfixMsgPrefix      = "ipfix_msg_"
	// ipfixMaxMsgs bounds the messages one connection holds at once.
	ipfixMaxMsgs = 256
)

// ipfixMsgHandles are the messages' handles, made once.
var ipfixMsgHandles = func() []tcl.Value {
	hs := make([]tcl.Value, ipfixMaxMsgs)
	for i := range hs {
		hs[i] = tcl.Str(ipfixMsgPrefix + strconv.Itoa(i))
	}
	return hs
}()

// ipfixState is a connection's messages. Its records are kept when the
// connection ends (the state is pooled), so filling a message allocates
// only the first time a slot holds that much.
type ipfixState struct {
	msgs []ipfixMsg
}

type ipfixMsg struct {
	rec  ipfix.Record
	live bool
}

// reset ends every message, keeping their buffers.
func (st *ipfixState) reset() {
	for i := range st.msgs {
		st.msgs[i].live = false
	}
}

func ipfixEnv(in *tcl.Interp, cmd string) (*ConnState, IPFIX, error) {
	s := sessionOf(in)
	if s == nil || s.prog.env.IPFIX == nil {
		return nil, nil, tcl.Errorf("%s: IPFIX is not available here", cmd)
	}
	return s, s.prog.env.IPFIX, nil
}

func cmdIPFIXDestination(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "IPFIX::destination open -publisher LOG_PUBLISHER | close IPFIX_DESTINATION | send IPFIX_DESTINATION IPFIX_MESSAGE"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, x, err := ipfixEnv(in, "IPFIX::destination")
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "open":
		if len(args) != 4 || args[2].String() != "-publisher" {
			return tcl.Empty, tcl.WrongArgs("IPFIX::destination open -publisher LOG_PUBLISHER")
		}
		h, err := x.OpenDestination(args[3].String())
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Str(h), nil
	case "close":
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("IPFIX::destination close IPFIX_DESTINATION")
		}
		// The destination is the publisher's, shared by every rule that
		// opened it; closing a handle ends nothing the others use.
		return tcl.Empty, nil
	case "send":
		if len(args) != 4 {
			return tcl.Empty, tcl.WrongArgs("IPFIX::destination send IPFIX_DESTINATION IPFIX_MESSAGE")
		}
		m, err := s.ipfixMsg(args[3])
		if err != nil {
			return tcl.Empty, err
		}
		sent, err := x.Send(args[2].String(), &m.rec)
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		if c := s.ipfixCount(); c != nil {
			if sent {
				c.sent.Add(1)
			} else {
				c.dropped.Add(1)
			}
		}
		// [M] 1 when a destination queued the record, 0 when it was
		// dropped (the queue was full, or no collector runs).
		return tcl.Bool(sent), nil
	}
	return tcl.Empty, tcl.Errorf("IPFIX::destination: bad option %q: must be open, close or send", args[1].String())
}

func cmdIPFIXTemplate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "IPFIX::template create TEMPLATE_STRING | delete IPFIX_TEMPLATE"
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, x, err := ipfixEnv(in, "IPFIX::template")
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "create":
		t, err := x.Templates().Create(x.Elements(), args[2].String())
		if err != nil {
			return tcl.Empty, tclErr(err)
		}
		if c := s.ipfixCount(); c != nil {
			c.templates.Add(1)
		}
		return tcl.Str(ipfixTemplatePrefix + strconv.Itoa(int(t.ID))), nil
	case "delete":
		t, err := ipfixTemplate(x, args[2], "IPFIX::template delete")
		if err != nil {
			return tcl.Empty, err
		}
		x.Templates().Delete(t.ID)
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("IPFIX::template: bad option %q: must be create or delete", args[1].String())
}

// ipfixTemplate finds the template a handle names.
func ipfixTemplate(x IPFIX, h tcl.Value, cmd string) (*ipfix.Template, error) {
	s := h.String()
	if rest, ok := strings.CutPrefix(s, ipfixTemplatePrefix); ok {
		if id, err := strconv.ParseUint(rest, 10, 16); err == nil {
			if t, ok := x.Templates().Get(uint16(id)); ok {
				return t, nil
			}
			return nil, tcl.Errorf("%s: template %s was deleted", cmd, s)
		}
	}
	return nil, tcl.Errorf("%s: invalid IPFIX template %q (use the value IPFIX::template create returned)", cmd, s)
}

// ipfixMsg finds the connection's live message a handle names.
func (s *ConnState) ipfixMsg(h tcl.Value) (*ipfixMsg, error) {
	str := h.String()
	if rest, ok := strings.CutPrefix(str, ipfixMsgPrefix); ok && s.ipfix != nil {
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < len(s.ipfix.msgs) && s.ipfix.msgs[i].live {
			return &s.ipfix.msgs[i], nil
		}
	}
	return nil, tcl.Errorf("invalid IPFIX message %q (use the value IPFIX::msg create returned on this connection)", str)
}

func cmdIPFIXMsg(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "IPFIX::msg create IPFIX_TEMPLATE | set IPFIX_MESSAGE IPFIX_FIELDTYPE ?-pos IPFIX_POS? IPFIX_FIELDVALUE | delete IPFIX_MESSAGE"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, x, err := ipfixEnv(in, "IPFIX::msg")
	if err != nil {
		return tcl.Empty, err
	}
	switch args[1].String() {
	case "create":
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("IPFIX::msg create IPFIX_TEMPLATE")
		}
		t, err := ipfixTemplate(x, args[2], "IPFIX::msg create")
		if err != nil {
			return tcl.Empty, err
		}
		if s.ipfix == nil {
			s.ipfix = &ipfixState{}
		}
		st := s.ipfix
		i := 0
		for i < len(st.msgs) && st.msgs[i].live {
			i++
		}
		if i == len(st.msgs) {
			if i == ipfixMaxMsgs {
				return tcl.Empty, tcl.Errorf("IPFIX::msg create: %d messages are open on this connection; delete some (IPFIX::msg delete)", ipfixMaxMsgs)
			}
			st.msgs = append(st.msgs, ipfixMsg{})
		}
		m := &st.msgs[i]
		m.rec.Reset(t)
		m.live = true
		if c := s.ipfixCount(); c != nil {
			c.created.Add(1)
		}
		return ipfixMsgHandles[i], nil
	case "set":
		var field, value tcl.Value
		pos := 0
		switch len(args) {
		case 5:
			field, value = args[3], args[4]
		case 7:
			if args[4].String() != "-pos" {
				return tcl.Empty, tcl.WrongArgs("IPFIX::msg set IPFIX_MESSAGE IPFIX_FIELDTYPE ?-pos IPFIX_POS? IPFIX_FIELDVALUE")
			}
			p, err := args[5].Int64()
			if err != nil || p < 0 {
				return tcl.Empty, tcl.Errorf("IPFIX::msg set: -pos %q: must be a position from 0", args[5].String())
			}
			field, value, pos = args[3], args[6], int(p)
		default:
			return tcl.Empty, tcl.WrongArgs("IPFIX::msg set IPFIX_MESSAGE IPFIX_FIELDTYPE ?-pos IPFIX_POS? IPFIX_FIELDVALUE")
		}
		m, err := s.ipfixMsg(args[2])
		if err != nil {
			return tcl.Empty, err
		}
		if err := m.rec.Set(field.String(), pos, value.String()); err != nil {
			return tcl.Empty, tclErr(err)
		}
		return tcl.Empty, nil
	case "delete":
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("IPFIX::msg delete IPFIX_MESSAGE")
		}
		m, err := s.ipfixMsg(args[2])
		if err != nil {
			return tcl.Empty, err
		}
		m.live = false
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.Errorf("IPFIX::msg: bad option %q: must be create, set or delete", args[1].String())
}
