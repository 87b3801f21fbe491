package rules

import (
	"github.com/openltm/openltm/dataplane/ssefilter"
	"github.com/openltm/openltm/rules/tcl"
)

// Server-sent events: on a virtual server with an sse profile, a
// response whose Content-Type is text/event-stream is read event by
// event as it streams (dataplane/ssefilter), and SSE_RESPONSE runs for
// each event, where SSE::field reads and changes its fields:
//
//	SSE::field get NAME         the field's value (lines joined by LF), empty when absent
//	SSE::field set NAME VALUE   the field becomes VALUE (added when absent)
//	SSE::field remove NAME      the field's lines are taken out
//	SSE::field names            the event's field names [M: openltm's]
//
// F5 documents the command's get, set and remove forms and the event;
// how a changed event is framed is not documented [M: LF line ends, one
// line per field].

// RunSSE runs SSE_RESPONSE over one event of a response; SSE::field reads
// and changes it there. Nothing runs when the rules do not handle the
// event.
func (s *ConnState) RunSSE(e *ssefilter.Event) error {
	if len(s.prog.handlers[SSEResponse]) == 0 {
		return nil
	}
	s.sse = e
	err := s.Run(SSEResponse)
	s.sse = nil
	return err
}

func registerSSE(t *tcl.Commands) { t.Register("SSE::field", cmdSSEField) }

const sseFieldUsage = "SSE::field get NAME | set NAME VALUE | remove NAME | names"

func cmdSSEField(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, _, err := sess(in, "SSE::field")
	if err != nil {
		return tcl.Empty, err
	}
	e := s.sse
	if e == nil {
		return tcl.Empty, tcl.Errorf("SSE::field: only valid in SSE_RESPONSE (a virtual server with an sse profile)")
	}
	if len(args) < 2 {
		return tcl.Empty, tcl.Errorf("wrong # args: should be \"%s\"", sseFieldUsage)
	}
	switch op := args[1].String(); {
	case op == "get" && len(args) == 3:
		v, _ := e.Get(args[2].String())
		return tcl.Str(v), nil
	case op == "set" && len(args) == 4:
		e.Set(args[2].String(), args[3].String())
		return tcl.Empty, nil
	case op == "remove" && len(args) == 3:
		e.Remove(args[2].String())
		return tcl.Empty, nil
	case op == "names" && len(args) == 2:
		names := e.Names()
		l := make([]tcl.Value, len(names))
		for i, n := range names {
			l[i] = tcl.Str(n)
		}
		return tcl.List(l...), nil
	}
	return tcl.Empty, tcl.Errorf("wrong # args or bad option: should be \"%s\"", sseFieldUsage)
}
