package rules

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/gtpmsg"
	"github.com/openltm/openltm/rules/tcl"
)

// GTPState is the message a GTP_ event runs over, the messages the rule
// made (GTP::new, GTP::parse, GTP::clone) and what it asked of them. The
// host binds the message with BeginGTP, runs the event, and reads the
// outcome with EndGTP, under the lock its events run under.
type GTPState struct {
	cur    *gtpmsg.Message
	raw    []byte
	edited bool
	// made are the rule's messages by handle; they live for the event
	// [M].
	made map[string]*gtpmsg.Message
	seq  int
	out  GTPOutcome
}

// GTPOutcome is what a GTP_ event did.
type GTPOutcome struct {
	// Raw is the message as the rule left it (the one bound when it did
	// not change it); Edited says it changed.
	Raw    []byte
	Edited bool
	// Discard: GTP::discard (and no GTP::forward after it); the message
	// goes no further.
	Discard bool
	// Respond are messages for the sender of the message (GTP::respond).
	Respond [][]byte
	// Forward are messages for the side the message was going to, after
	// it (GTP::forward with a message).
	Forward [][]byte
	// Clones are copies for other destinations (GTP::clone with an
	// address and port).
	Clones []GTPClone
}

// GTPClone is one copy of a message for a destination of the rule's.
type GTPClone struct {
	To  netip.AddrPort
	Msg []byte
}

// BeginGTP binds raw (a whole message the host checked) to the GTP::
// commands of the event about to run; an error is a message the codec
// refuses.
func (s *ConnState) BeginGTP(raw []byte) error {
	if s.gtp == nil {
		s.gtp = &GTPState{}
	}
	st := s.gtp
	m, err := gtpmsg.Parse(raw)
	if err != nil {
		return err
	}
	st.cur, st.raw, st.edited, st.out = m, raw[:m.Size], false, GTPOutcome{}
	clear(st.made)
	return nil
}

// EndGTP is what the event did; the state forgets the messages.
func (s *ConnState) EndGTP() GTPOutcome {
	st := s.gtp
	if st == nil {
		return GTPOutcome{}
	}
	out := st.out
	out.Raw, out.Edited = st.raw, st.edited
	if st.edited && st.cur != nil {
		out.Raw = st.cur.Append(nil)
	}
	st.cur, st.raw, st.out = nil, nil, GTPOutcome{}
	clear(st.made)
	return out
}

// registerGTP adds the GTP:: commands. They read the message of the
// running GTP_ event (or, with -message, one the rule made) and build
// messages: a message the rule makes is a handle (GTP::new, GTP::parse,
// GTP::clone) valid until the event ends [M: BIG-IP's message objects'
// lifetime is not documented]. IEs are named by a path, type or
// type:instance (instance for GTPv2), with -index n for the n-th of
// them [M]; values of IMSI, MSISDN, APN, Recovery and Cause read and
// write as digits, a dotted name and integers, others as their raw
// octets [M].
func registerGTP(t *tcl.Commands) {
	t.Register("GTP::header", cmdGTPHeader)
	t.Register("GTP::ie", cmdGTPIE)
	t.Register("GTP::length", gtpReader("GTP::length", func(m *gtpmsg.Message) tcl.Value { return tcl.Int(int64(len(m.Append(nil)))) }))
	t.Register("GTP::payload", gtpReader("GTP::payload", func(m *gtpmsg.Message) tcl.Value {
		b := m.Append(nil)
		return tcl.Bytes(b[m.HeaderLen:])
	}))
	t.Register("GTP::message", gtpReader("GTP::message", func(m *gtpmsg.Message) tcl.Value { return tcl.Bytes(m.Append(nil)) }))
	t.Register("GTP::new", cmdGTPNew)
	t.Register("GTP::parse", cmdGTPParse)
	t.Register("GTP::clone", cmdGTPClone)
	t.Register("GTP::discard", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("GTP::discard")
		}
		st, err := gtpState(in, "GTP::discard", true)
		if err != nil {
			return tcl.Empty, err
		}
		st.out.Discard = true
		return tcl.Empty, nil
	})
	t.Register("GTP::forward", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		st, err := gtpState(in, "GTP::forward", true)
		if err != nil {
			return tcl.Empty, err
		}
		switch len(args) {
		case 1: // the message goes on after all (undoes GTP::discard) [M]
			st.out.Discard = false
		case 2:
			m, err := st.handle("GTP::forward", args[1].String())
			if err != nil {
				return tcl.Empty, err
			}
			st.out.Forward = append(st.out.Forward, m.Append(nil))
		default:
			return tcl.Empty, tcl.WrongArgs("GTP::forward ?message?")
		}
		return tcl.Empty, nil
	})
	t.Register("GTP::respond", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("GTP::respond message")
		}
		st, err := gtpState(in, "GTP::respond", true)
		if err != nil {
			return tcl.Empty, err
		}
		m, err := st.handle("GTP::respond", args[1].String())
		if err != nil {
			return tcl.Empty, err
		}
		st.out.Respond = append(st.out.Respond, m.Append(nil))
		return tcl.Empty, nil
	})
	t.Register("GTP::tunnel", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		// [M] the path the message came over: the client's address and
		// port and the virtual's, and the message's TEID.
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("GTP::tunnel")
		}
		st, err := gtpState(in, "GTP::tunnel", true)
		if err != nil {
			return tcl.Empty, err
		}
		_, c, _ := sess(in, "GTP::tunnel")
		cl, vs := c.Addr(EndClient), c.Addr(EndVirtual)
		return tcl.List(tcl.Str(cl.Addr().String()), tcl.Int(int64(cl.Port())), tcl.Str(vs.Addr().String()), tcl.Int(int64(vs.Port())), tcl.Int(int64(st.cur.TEID))), nil
	})
}

// gtpState is the state of the running GTP_ event; with needMsg, an
// error names cmd outside one.
func gtpState(in *tcl.Interp, cmd string, needMsg bool) (*GTPState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.gtp == nil || needMsg && s.gtp.cur == nil {
		return nil, tcl.Errorf("%s: no GTP message in %s (valid in the GTP_ events of a virtual server with a gtp profile)", cmd, s.event)
	}
	return s.gtp, nil
}

// handle is the rule's message h.
func (st *GTPState) handle(cmd, h string) (*gtpmsg.Message, error) {
	if m := st.made[h]; m != nil {
		return m, nil
	}
	return nil, tcl.Errorf("%s: %q is not a GTP message of this event (made by GTP::new, GTP::parse or GTP::clone)", cmd, h)
}

// add keeps m under a new handle.
func (st *GTPState) add(m *gtpmsg.Message) tcl.Value {
	if st.made == nil {
		st.made = map[string]*gtpmsg.Message{}
	}
	st.seq++
	h := "gtp_msg_" + strconv.Itoa(st.seq)
	st.made[h] = m
	return tcl.Str(h)
}

// target takes a leading `-message h` off args: the message a command
// acts on (the event's without it) and whether it is the event's.
func gtpTarget(in *tcl.Interp, cmd string, args []tcl.Value) (*GTPState, *gtpmsg.Message, []tcl.Value, bool, error) {
	var h string
	rest := make([]tcl.Value, 0, len(args))
	for i := 0; i < len(args); i++ {
		if args[i].String() == "-message" && i+1 < len(args) {
			h = args[i+1].String()
			i++
			continue
		}
		rest = append(rest, args[i])
	}
	st, err := gtpState(in, cmd, h == "")
	if err != nil {
		return nil, nil, nil, false, err
	}
	if h == "" {
		return st, st.cur, rest, true, nil
	}
	m, err := st.handle(cmd, h)
	return st, m, rest, false, err
}

func gtpReader(cmd string, get func(*gtpmsg.Message) tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, m, rest, _, err := gtpTarget(in, cmd, args[1:])
		if err != nil {
			return tcl.Empty, err
		}
		if len(rest) != 0 {
			return tcl.Empty, tcl.WrongArgs(cmd + " ?-message message?")
		}
		return get(m), nil
	}
}

const gtpHeaderUsage = "GTP::header ?-message message? version|prime|type|length|teid|seq|npdu|next|piggyback|flags ?value?"

// cmdGTPHeader reads a header field, or sets it with a value (length
// and flags follow the fields; they cannot be set).
func cmdGTPHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, m, rest, isCur, err := gtpTarget(in, "GTP::header", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	if len(rest) != 1 && len(rest) != 2 {
		return tcl.Empty, tcl.WrongArgs(gtpHeaderUsage)
	}
	f := rest[0].String()
	if len(rest) == 1 {
		switch f {
		case "version":
			return tcl.Int(int64(m.Version)), nil
		case "prime":
			return tcl.Bool(m.Prime), nil
		case "type":
			return tcl.Int(int64(m.Type)), nil
		case "length":
			return tcl.Int(int64(len(m.Append(nil)) - fixedLen(m))), nil
		case "teid":
			return tcl.Int(int64(m.TEID)), nil
		case "seq":
			return tcl.Int(int64(m.Seq)), nil
		case "npdu":
			return tcl.Int(int64(m.NPDU)), nil
		case "next":
			return tcl.Int(int64(m.NextExt)), nil
		case "piggyback":
			return tcl.Bool(m.Piggyback), nil
		case "flags":
			return tcl.Int(int64(m.Append(nil)[0])), nil
		}
		return tcl.Empty, tcl.Errorf("GTP::header: unknown field %q (%s)", f, gtpHeaderUsage)
	}
	n, err := rest[1].Int64()
	if err != nil || n < 0 || n > 0xffffffff {
		return tcl.Empty, tcl.Errorf("GTP::header: %s value %q is not a number", f, rest[1].String())
	}
	switch f {
	case "type":
		if n > 255 {
			return tcl.Empty, tcl.Errorf("GTP::header: type %d is not 0 to 255", n)
		}
		m.Type = uint8(n)
	case "teid":
		m.TEID, m.HasTEID = uint32(n), true
	case "seq":
		lim := int64(0xffffff)
		if m.Version < 2 || m.Prime {
			lim = 0xffff
		}
		if n > lim {
			return tcl.Empty, tcl.Errorf("GTP::header: seq %d is larger than %d", n, lim)
		}
		m.Seq, m.HasSeq = uint32(n), true
	case "npdu":
		if n > 255 {
			return tcl.Empty, tcl.Errorf("GTP::header: npdu %d is not 0 to 255", n)
		}
		m.NPDU = uint8(n)
	default:
		return tcl.Empty, tcl.Errorf("GTP::header: %s cannot be set (type, teid, seq and npdu can)", f)
	}
	if isCur {
		st.edited = true
	}
	return tcl.Empty, nil
}

// fixedLen is the part of m's header its length field does not count.
func fixedLen(m *gtpmsg.Message) int {
	switch {
	case m.Prime:
		return 6
	case m.Version == 1:
		return 8
	}
	return 4
}

const gtpIEUsage = "GTP::ie ?-message message? count ?-type type? | get value|exists path ?-index n? | get list | insert path value | set path value ?-index n? | remove path ?-index n?"

// cmdGTPIE reads and edits IEs.
func cmdGTPIE(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, m, rest, isCur, err := gtpTarget(in, "GTP::ie", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	idx := 0
	words := make([]string, 0, len(rest))
	typ := -1
	for i := 0; i < len(rest); i++ {
		w := rest[i].String()
		if (w == "-index" || w == "-type") && i+1 < len(rest) {
			n, err := strconv.Atoi(rest[i+1].String())
			if err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("GTP::ie: %s %q is not a number", w, rest[i+1].String())
			}
			if w == "-index" {
				idx = n
			} else {
				typ = n
			}
			i++
			continue
		}
		words = append(words, w)
	}
	if len(words) == 0 {
		return tcl.Empty, tcl.WrongArgs(gtpIEUsage)
	}
	if m.Version == 1 && !m.Prime && m.Type == gtpmsg.GPDU && words[0] != "count" && !(words[0] == "get" && len(words) > 1 && words[1] != "value") {
		return tcl.Empty, tcl.Errorf("GTP::ie: a G-PDU carries a user's packet, not IEs")
	}
	edited := func() {
		if isCur {
			st.edited = true
		}
	}
	switch words[0] {
	case "count":
		if len(words) == 2 {
			t, _, err := gtpPath(words[1])
			if err != nil {
				return tcl.Empty, err
			}
			typ = int(t)
		} else if len(words) != 1 {
			return tcl.Empty, tcl.WrongArgs(gtpIEUsage)
		}
		return tcl.Int(int64(m.Count(typ))), nil
	case "get":
		if len(words) == 2 && words[1] == "list" {
			l := make([]tcl.Value, 0, len(m.IEs))
			for _, ie := range m.IEs {
				l = append(l, tcl.Str(fmt.Sprintf("%d:%d", ie.Type, ie.Instance)))
			}
			return tcl.List(l...), nil
		}
		if len(words) != 3 || words[1] != "value" && words[1] != "exists" {
			return tcl.Empty, tcl.WrongArgs(gtpIEUsage)
		}
		t, inst, err := gtpPath(words[2])
		if err != nil {
			return tcl.Empty, err
		}
		ie, ok := m.Find(t, inst, idx)
		if words[1] == "exists" {
			return tcl.Bool(ok), nil
		}
		if !ok {
			return tcl.Empty, nil // [M] an absent IE reads as empty
		}
		return gtpValue(m, ie), nil
	case "insert", "set":
		if words[0] == "set" && len(words) == 4 && words[1] == "value" {
			words = words[1:]
		}
		if len(words) != 3 {
			return tcl.Empty, tcl.WrongArgs(gtpIEUsage)
		}
		t, inst, err := gtpPath(words[1])
		if err != nil {
			return tcl.Empty, err
		}
		if (m.Version < 2 || m.Prime) && !gtpmsg.KnownTV(t) {
			return tcl.Empty, tcl.Errorf("GTP::ie: GTPv1 TV IE type %d has no known length", t)
		}
		v, err := gtpEncode(m, t, words[2])
		if err != nil {
			return tcl.Empty, err
		}
		ie := gtpmsg.IE{Type: t, Instance: inst, Value: v}
		if words[0] == "set" {
			if i := nthIE(m, t, inst, idx); i >= 0 {
				m.IEs[i] = ie
				edited()
				return tcl.Empty, nil
			}
		}
		// Inserted in type order, after those of its type, as TS 29.060
		// asks of GTPv1 (and does no harm to GTPv2) [M].
		at := len(m.IEs)
		for i, x := range m.IEs {
			if x.Type > t {
				at = i
				break
			}
		}
		m.IEs = append(m.IEs[:at:at], append([]gtpmsg.IE{ie}, m.IEs[at:]...)...)
		edited()
		return tcl.Empty, nil
	case "remove":
		if len(words) != 2 {
			return tcl.Empty, tcl.WrongArgs(gtpIEUsage)
		}
		t, inst, err := gtpPath(words[1])
		if err != nil {
			return tcl.Empty, err
		}
		if i := nthIE(m, t, inst, idx); i >= 0 {
			m.IEs = append(m.IEs[:i:i], m.IEs[i+1:]...)
			edited()
			return tcl.Int(1), nil
		}
		return tcl.Int(0), nil
	}
	return tcl.Empty, tcl.Errorf("GTP::ie: unknown subcommand %q (%s)", words[0], gtpIEUsage)
}

// nthIE is the position of the n-th IE of t and inst, -1 for none.
func nthIE(m *gtpmsg.Message, t, inst uint8, n int) int {
	for i, ie := range m.IEs {
		if ie.Type == t && ie.Instance == inst {
			if n == 0 {
				return i
			}
			n--
		}
	}
	return -1
}

// gtpPath reads an IE path: type or type:instance.
func gtpPath(p string) (uint8, uint8, error) {
	ts, is, has := strings.Cut(p, ":")
	t, err := strconv.ParseUint(ts, 10, 8)
	if err != nil {
		return 0, 0, tcl.Errorf("GTP::ie: %q is not an IE path (type or type:instance, type 0 to 255)", p)
	}
	var i uint64
	if has {
		if i, err = strconv.ParseUint(is, 10, 4); err != nil {
			return 0, 0, tcl.Errorf("GTP::ie: %q is not an IE path (instance 0 to 15)", p)
		}
	}
	return uint8(t), uint8(i), nil
}

// ieKind is how a known IE's value reads.
type ieKind uint8

const (
	ieRaw ieKind = iota
	ieTBCD
	ieMSISDN1 // v1 MSISDN: an address-type octet, then TBCD
	ieAPN
	ieInt8
)

func gtpKind(m *gtpmsg.Message, t uint8) ieKind {
	if m.Version == 2 && !m.Prime {
		switch t {
		case gtpmsg.IEv2IMSI, gtpmsg.IEv2MSISDN:
			return ieTBCD
		case gtpmsg.IEv2APN:
			return ieAPN
		case gtpmsg.IEv2Recovery, gtpmsg.IEv2Cause:
			return ieInt8
		}
		return ieRaw
	}
	switch t {
	case gtpmsg.IEv1IMSI:
		return ieTBCD
	case gtpmsg.IEv1MSISDN:
		return ieMSISDN1
	case gtpmsg.IEv1APN:
		return ieAPN
	case gtpmsg.IEv1Recovery, gtpmsg.IEv1Cause:
		return ieInt8
	}
	return ieRaw
}

func gtpValue(m *gtpmsg.Message, ie gtpmsg.IE) tcl.Value {
	switch gtpKind(m, ie.Type) {
	case ieTBCD:
		return tcl.Str(gtpmsg.TBCD(ie.Value))
	case ieMSISDN1:
		if len(ie.Value) > 0 {
			return tcl.Str(gtpmsg.TBCD(ie.Value[1:]))
		}
		return tcl.Empty
	case ieAPN:
		return tcl.Str(gtpmsg.APN(ie.Value))
	case ieInt8:
		if len(ie.Value) > 0 {
			return tcl.Int(int64(ie.Value[0]))
		}
	}
	return tcl.Bytes(ie.Value)
}

func gtpEncode(m *gtpmsg.Message, t uint8, s string) ([]byte, error) {
	switch k := gtpKind(m, t); k {
	case ieTBCD, ieMSISDN1:
		b, ok := gtpmsg.EncodeTBCD(s)
		if !ok {
			return nil, tcl.Errorf("GTP::ie: %q is not digits (IE %d)", s, t)
		}
		if k == ieMSISDN1 {
			b = append([]byte{0x91}, b...) // international, E.164
		}
		return b, nil
	case ieAPN:
		return gtpmsg.EncodeAPN(s), nil
	case ieInt8:
		n, err := strconv.ParseUint(s, 10, 8)
		if err != nil {
			return nil, tcl.Errorf("GTP::ie: %q is not 0 to 255 (IE %d)", s, t)
		}
		return []byte{byte(n)}, nil
	}
	return []byte(s), nil
}

// cmdGTPNew is GTP::new version type: a message with no IEs.
func cmdGTPNew(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("GTP::new version type")
	}
	v, err1 := args[1].Int64()
	t, err2 := args[2].Int64()
	if err1 != nil || v < 1 || v > 2 {
		return tcl.Empty, tcl.Errorf("GTP::new: version %q is not 1 or 2", args[1].String())
	}
	if err2 != nil || t < 0 || t > 255 {
		return tcl.Empty, tcl.Errorf("GTP::new: type %q is not 0 to 255", args[2].String())
	}
	st, err := gtpState(in, "GTP::new", false)
	if err != nil {
		return tcl.Empty, err
	}
	return st.add(&gtpmsg.Message{Header: gtpmsg.Header{Version: uint8(v), Type: uint8(t), HasSeq: v == 1}}), nil
}

// cmdGTPParse is GTP::parse bytes: the message they hold, an error for
// a malformed one.
func cmdGTPParse(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("GTP::parse bytes")
	}
	st, err := gtpState(in, "GTP::parse", false)
	if err != nil {
		return tcl.Empty, err
	}
	b := append([]byte(nil), tcl.BytesOf(args[1])...)
	m, err := gtpmsg.Parse(b)
	if err != nil {
		return tcl.Empty, tcl.Errorf("GTP::parse: %v", err)
	}
	return st.add(m), nil
}

// cmdGTPClone is GTP::clone ?-message m? ?addr port?: a copy of the
// message as a new handle, or, given a destination, a copy sent there
// from the virtual server's address [M].
func cmdGTPClone(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, m, rest, _, err := gtpTarget(in, "GTP::clone", args[1:])
	if err != nil {
		return tcl.Empty, err
	}
	b := m.Append(nil)
	switch len(rest) {
	case 0:
		c, _ := gtpmsg.Parse(b)
		return st.add(c), nil
	case 2:
		a, err := netip.ParseAddr(rest[0].String())
		p, perr := strconv.ParseUint(rest[1].String(), 10, 16)
		if err != nil || perr != nil || p == 0 {
			return tcl.Empty, tcl.Errorf("GTP::clone: %s %s is not an address and port", rest[0].String(), rest[1].String())
		}
		st.out.Clones = append(st.out.Clones, GTPClone{To: netip.AddrPortFrom(a, uint16(p)), Msg: b})
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs("GTP::clone ?-message message? ?addr port?")
}
