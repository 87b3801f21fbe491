package rules

import (
	"strconv"
	"sync"

	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/rules/tcl"
)

// FIXState is the message FIX_HEADER and FIX_MESSAGE run over. The host
// binds a parsed message with BeginFIX, runs the events, and unbinds it
// with EndFIX, under the lock its events run under.
type FIXState struct {
	msg *fix.Message
	// server: msg is the member's (response-parsing), so the events run
	// on the server side.
	server bool
}

// BeginFIX binds the client's message m to the FIX:: commands of the
// events about to run.
func (s *ConnState) BeginFIX(m *fix.Message) {
	if s.fix == nil {
		s.fix = &FIXState{}
	}
	s.fix.msg, s.fix.server = m, false
}

// BeginFIXServer binds the member's message m (response-parsing): the
// events about to run are on the server side, as SERVER_DATA is.
func (s *ConnState) BeginFIXServer(m *fix.Message) {
	s.BeginFIX(m)
	s.fix.server = true
}

// fixSide is the side FIX_HEADER and FIX_MESSAGE run on: the server's
// over the member's message.
func (s *ConnState) fixSide(ev Event) Side {
	if s.fix != nil && s.fix.server && (ev == FIXHeader || ev == FIXMessage) {
		return ServerSide
	}
	return ev.side()
}

// EndFIX forgets the message.
func (s *ConnState) EndFIX() {
	if s.fix != nil {
		s.fix.msg, s.fix.server = nil, false
	}
}

// fixMaps is `FIX::tag map set`'s sender to tag map table: one per
// program, for every connection of the virtual servers using it, as
// BIG-IP keeps it past the event that set it (usually RULE_INIT).
type fixMaps struct {
	mu sync.RWMutex
	m  map[string]map[int]int
}

// FIXTagMap is the tag map a rule gave sender with `FIX::tag map set`,
// which overrides the profile's sender-tag-class; false: none.
func (p *Program) FIXTagMap(sender string) (map[int]int, bool) {
	if p == nil {
		return nil, false
	}
	p.fixMaps.mu.RLock()
	defer p.fixMaps.mu.RUnlock()
	m, ok := p.fixMaps.m[sender]
	return m, ok
}

func registerFIX(t *tcl.Commands) {
	t.Register("FIX::tag", cmdFIXTag)
}

// cmdFIXTag is `FIX::tag get TAG`, `FIX::tag map set SENDER DATA_GROUP`
// and `FIX::tag map delete`. map set and delete return 0 on success and
// 1 otherwise (a data group that does not exist or is not a tag map), as
// BIG-IP documents; get is valid where a message is at hand.
func cmdFIXTag(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "FIX::tag get TAG | map set SENDER DATA_GROUP | map delete"
	a := args[1:]
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch a[0].String() {
	case "get":
		if len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("FIX::tag get TAG")
		}
		tag, err := strconv.Atoi(a[1].String())
		if err != nil || tag <= 0 {
			return tcl.Empty, tcl.Errorf("FIX::tag get: tag %q is not a positive number", a[1].String())
		}
		s, _, err := sess(in, "FIX::tag")
		if err != nil {
			return tcl.Empty, err
		}
		if s.fix == nil || s.fix.msg == nil {
			return tcl.Empty, tcl.Errorf("FIX::tag get: no FIX message in %s (valid in FIX_HEADER and FIX_MESSAGE)", s.event)
		}
		v, _ := s.fix.msg.Get(tag)
		return tcl.Str(string(v)), nil
	case "map":
		s := sessionOf(in)
		if s == nil || s.prog == nil {
			return tcl.Empty, tcl.Errorf("FIX::tag map: command is not valid in this context")
		}
		fm := &s.prog.fixMaps
		switch {
		case len(a) == 2 && a[1].String() == "delete":
			fm.mu.Lock()
			fm.m = nil
			fm.mu.Unlock()
			return tcl.Int(0), nil
		case len(a) == 4 && a[1].String() == "set":
			var dg *DataGroup
			if look := s.prog.env.DataGroup; look != nil {
				dg, _ = look(a[3].String())
			}
			if dg == nil || dg.Type == DGAddress {
				return tcl.Int(1), nil
			}
			recs := make([][2]string, len(dg.Records))
			for i, r := range dg.Records {
				recs[i] = [2]string{r.Key, r.Value}
			}
			tags, err := fix.TagMap(recs)
			if err != nil {
				return tcl.Int(1), nil
			}
			fm.mu.Lock()
			if fm.m == nil {
				fm.m = make(map[string]map[int]int)
			}
			fm.m[a[2].String()] = tags
			fm.mu.Unlock()
			return tcl.Int(0), nil
		}
		return tcl.Empty, tcl.WrongArgs("FIX::tag map set SENDER DATA_GROUP | map delete")
	}
	return tcl.Empty, tcl.Errorf("bad option %q: must be get or map", a[0].String())
}
