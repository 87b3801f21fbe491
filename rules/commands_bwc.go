package rules

import (
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// BWCConn is implemented by a Conn whose flow a bandwidth controller can
// shape (the L4 proxy's flows), found by type assertion: BWC::policy,
// BWC::rate and BWC::pps go through it. Without it they are Tcl errors.
type BWCConn interface {
	// BWCAttach puts the flow under the policy named (relative to
	// /Common, or a full path); instance is a dynamic policy's session,
	// empty for a static one.
	BWCAttach(policy, instance string) error
	// BWCDetach takes the flow out of the policy named, if it is under it.
	BWCDetach(policy string) error
	// BWCRate sets the rate of the flow's dynamic instance, in bits per
	// second; BWCPPS its packets per second.
	BWCRate(bps uint64) error
	BWCPPS(pps uint64) error
}

// BWCClassConn is implemented by a BWCConn whose flow a rule can also
// classify within its policy: BWC::color, BWC::priority and BWC::mark
// go through it. Without it they are Tcl errors.
type BWCClassConn interface {
	// BWCColor puts the flow, under the policy named, in its category
	// named (BWC::color set).
	BWCColor(policy, category string) error
	// BWCPriority gives the flow its priority level in its policy, 0
	// (served last) to 7 (served first).
	BWCPriority(level int) error
	// BWCMark marks the flow under the policy named: tos the IP ToS
	// byte, qos the link priority; -1 is pass-through, -2 leaves that
	// one as it is.
	BWCMark(policy string, tos, qos int) error
}

// BWCGroupConn is implemented by a BWCClassConn whose policy may have a
// priority group: BWC::priority takes a level's name through it.
type BWCGroupConn interface {
	// BWCPriorityName gives the flow the level of that name in its
	// policy's priority group.
	BWCPriorityName(name string) error
}

// BWCMeasureConn is implemented by a BWCConn whose flow's policy a rule
// can measure (BWC::measure).
type BWCMeasureConn interface {
	// BWCMeasure is the flow's own measurement (session false), or a
	// session's of its policy (session true; name "" for the flow's own
	// instance).
	BWCMeasure(session bool, name string) (BWCMeasurement, error)
}

// BWCMeasurement is one measurement BWC::measure controls and reads.
type BWCMeasurement interface {
	Start()
	Stop()
	SetID(id string)
	// Bytes is what passed while it was on; Rate the bits per second of
	// the last whole second.
	Bytes() uint64
	Rate() uint64
}

func registerBWC(t *tcl.Commands) {
	t.Register("BWC::policy", cmdBWCPolicy).Compile = bwcPolicyHook
	t.Register("BWC::rate", cmdBWCRate)
	t.Register("BWC::pps", cmdBWCPPS)
	t.Register("BWC::color", cmdBWCColor)
	t.Register("BWC::priority", cmdBWCPriority)
	t.Register("BWC::mark", cmdBWCMark)
	t.Register("BWC::measure", cmdBWCMeasure)
	t.Register("BWC::debug", cmdBWCDebug)
}

// BWCDebugConn is implemented by a BWCConn whose flow's policy instance
// BWC::debug can describe. Without it BWC::debug is a Tcl error.
type BWCDebugConn interface {
	// BWCDebug describes the flow's policy instance in one line: its
	// policy, session, category, level, rates and counters; an error
	// when the flow is under no policy.
	BWCDebug() (string, error)
}

// cmdBWCDebug is F5's BWC::debug start|stop: the troubleshooting of the
// flow's policy instance. Each call logs a line (local0.info) with the
// instance's state: its policy, session, category, priority level, rate
// and the policy's counters [M: F5's debug logs go to the bwc trace
// under db variables openltm does not have, in a form F5 does not
// document; a word after start or stop, as F5's example writes
// "BWC::debug start session", is taken and ignored].
func cmdBWCDebug(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::debug (start|stop) ?session?"
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	op := args[1].String()
	if op != "start" && op != "stop" {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, c, err := sess(in, "BWC::debug")
	if err != nil {
		return tcl.Empty, err
	}
	dc, ok := c.(BWCDebugConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("BWC::debug: this connection cannot be shaped by a bandwidth controller")
	}
	line, err := dc.BWCDebug()
	if err != nil {
		return tcl.Empty, tcl.Errorf("BWC::debug: %v", err)
	}
	s.prog.env.log("local0.info", s.logLine("BWC::debug "+op+": "+line, false))
	return tcl.Empty, nil
}

// cmdBWCMeasure is F5's BWC::measure (start|stop | identifier ID |
// get rate|bytes) (flow | session ?SESSION?): a measurement of the
// flow's own bytes, or of a session of its policy (the flow's own
// instance, or the one named, of a dynamic policy; the whole policy for
// a static one). identifier names it in the lines the policy's
// log-publisher gets each log-period; get reads the bits per second of
// the last whole second (rate) or the bytes since it started [M: F5
// gives no unit for rate; openltm's is bits per second, as the policy's
// rates are].
func cmdBWCMeasure(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::measure ((start|stop) | identifier id_str | get (rate|bytes)) (flow | session ?session_str?)"
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	op, rest := args[1].String(), args[2:]
	var arg string
	switch op {
	case "start", "stop":
	case "identifier", "get":
		arg, rest = rest[0].String(), rest[1:]
		if op == "get" && arg != "rate" && arg != "bytes" {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if len(rest) == 0 || len(rest) > 2 || rest[0].String() == "flow" && len(rest) != 1 ||
		rest[0].String() != "flow" && rest[0].String() != "session" {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	session, name := rest[0].String() == "session", ""
	if len(rest) == 2 {
		name = rest[1].String()
	}
	_, c, err := sess(in, "BWC::measure")
	if err != nil {
		return tcl.Empty, err
	}
	mc, ok := c.(BWCMeasureConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("BWC::measure: this connection cannot be shaped by a bandwidth controller")
	}
	m, err := mc.BWCMeasure(session, name)
	if err != nil {
		return tcl.Empty, tcl.Errorf("BWC::measure: %v", err)
	}
	switch op {
	case "start":
		m.Start()
	case "stop":
		m.Stop()
	case "identifier":
		m.SetID(arg)
	case "get":
		if arg == "rate" {
			return tcl.Int(int64(m.Rate())), nil
		}
		return tcl.Int(int64(m.Bytes())), nil
	}
	return tcl.Empty, nil
}

// bwcPolicyHook marks a rule that attaches flows to bandwidth
// controllers: their waits block, so its virtual's connections run on
// goroutines of their own (Program.Waits), and a message-based virtual's
// clients get a connection a policy can pace (Program.AttachesBWC).
func bwcPolicyHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.waits = true
		r.attachesBWC = true
	}
	return nil
}

// bwcClassConn is the rule's connection as a BWCClassConn.
func bwcClassConn(in *tcl.Interp, cmd string) (BWCClassConn, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	bc, ok := c.(BWCClassConn)
	if !ok {
		return nil, tcl.Errorf("%s: this connection cannot be shaped by a bandwidth controller", cmd)
	}
	return bc, nil
}

// cmdBWCColor is BWC::color set POLICY CATEGORY: the flow, attached to
// the dynamic policy (BWC::policy attach first), joins the policy's
// category, whose max-cat-rate its bytes then wait on too, and whose
// ip-tos and link-qos mark it (F5's BWC::mark page shows the form).
func cmdBWCColor(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::color set policy_name category_name"
	if len(args) != 4 || args[1].String() != "set" {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	bc, err := bwcClassConn(in, "BWC::color")
	if err != nil {
		return tcl.Empty, err
	}
	if err := bc.BWCColor(args[2].String(), args[3].String()); err != nil {
		return tcl.Empty, tcl.Errorf("BWC::color: %v", err)
	}
	return tcl.Empty, nil
}

// maxBWCLevel is the highest BWC::priority level.
const maxBWCLevel = 7

// cmdBWCPriority is BWC::priority ?POLICY? LEVEL: the flow's priority
// level in its policy, 0 to 7, or the name of a level of the policy's
// priority group (traffic-priority-map). Under a priority group each busy
// level gets its weight's share of the policy's rate; without one, while
// a flow of a higher level waits for the policy's rate, those of lower
// levels let it pass first [M: F5 documents no form of the command;
// openltm numbers levels as FLOW::priority does, 7 the highest, and
// takes the policy's name, when given, as a check that the flow is
// under it].
func cmdBWCPriority(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::priority ?policy_name? level"
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s := args[len(args)-1].String()
	n, err := strconv.Atoi(s)
	named := err != nil && s != "" && strings.TrimLeft(s, "-+0123456789") != ""
	if !named && (err != nil || n < 0 || n > maxBWCLevel) {
		return tcl.Empty, tcl.Errorf("BWC::priority: %q is not a level from 0 to %d", s, maxBWCLevel)
	}
	bc, err := bwcClassConn(in, "BWC::priority")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 3 {
		if err := bc.BWCMark(args[1].String(), -2, -2); err != nil {
			return tcl.Empty, tcl.Errorf("BWC::priority: %v", err)
		}
	}
	if named {
		gc, ok := bc.(BWCGroupConn)
		if !ok {
			return tcl.Empty, tcl.Errorf("BWC::priority: %q is not a level from 0 to %d", s, maxBWCLevel)
		}
		err = gc.BWCPriorityName(s)
	} else {
		err = bc.BWCPriority(n)
	}
	if err != nil {
		return tcl.Empty, tcl.Errorf("BWC::priority: %v", err)
	}
	return tcl.Empty, nil
}

// cmdBWCMark is BWC::mark POLICY ?CATEGORY? (tos|qos) VALUE ?(tos|qos)
// VALUE?: the flow's ToS byte (0 to 255) and link priority (0 to 7), or
// passthrough, in place of its policy's and category's ip-tos and
// link-qos. A category word is accepted and the flow's own marking set
// [M: F5 marks the packets that exceed the rate; openltm marks the
// flow's sockets, so every packet of the flow carries it].
func cmdBWCMark(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::mark policy_name ?category_name? (tos|qos) value ?(tos|qos) value?"
	if len(args) < 4 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	rest := args[2:]
	if len(rest)%2 == 1 {
		rest = rest[1:] // the category
	}
	tos, qos := -2, -2
	for i := 0; i+1 < len(rest); i += 2 {
		v := rest[i+1].String()
		switch rest[i].String() {
		case "tos":
			n, err := markArg(v, 255)
			if err != nil {
				return tcl.Empty, tcl.Errorf("BWC::mark: tos %q is not 0 to 255 or passthrough", v)
			}
			tos = n
		case "qos":
			n, err := markArg(v, 7)
			if err != nil {
				return tcl.Empty, tcl.Errorf("BWC::mark: qos %q is not 0 to 7 or passthrough", v)
			}
			qos = n
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	bc, err := bwcClassConn(in, "BWC::mark")
	if err != nil {
		return tcl.Empty, err
	}
	if err := bc.BWCMark(args[1].String(), tos, qos); err != nil {
		return tcl.Empty, tcl.Errorf("BWC::mark: %v", err)
	}
	return tcl.Empty, nil
}

// markArg is a marking value up to max, or -1 for passthrough.
func markArg(s string, max int) (int, error) {
	if s == "passthrough" || s == "pass-through" {
		return -1, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 || n > max {
		return 0, strconv.ErrRange
	}
	return n, nil
}

// bwcConn is the rule's connection as a BWCConn.
func bwcConn(in *tcl.Interp, cmd string) (BWCConn, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	bc, ok := c.(BWCConn)
	if !ok {
		return nil, tcl.Errorf("%s: this connection cannot be shaped by a bandwidth controller", cmd)
	}
	return bc, nil
}

// cmdBWCPolicy is BWC::policy attach|detach POLICY ?SESSION?: a static
// policy takes no session, a dynamic one needs it (F5's page).
func cmdBWCPolicy(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "BWC::policy attach|detach policy_name ?session_id?"
	if len(args) < 3 || len(args) > 4 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	bc, err := bwcConn(in, "BWC::policy")
	if err != nil {
		return tcl.Empty, err
	}
	name, session := args[2].String(), ""
	if len(args) == 4 {
		session = args[3].String()
	}
	switch args[1].String() {
	case "attach":
		err = bc.BWCAttach(name, session)
	case "detach":
		err = bc.BWCDetach(name)
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if err != nil {
		return tcl.Empty, tcl.Errorf("BWC::policy: %v", err)
	}
	return tcl.Empty, nil
}

// cmdBWCRate is BWC::rate ?SESSION_ID? RATE: the flow's dynamic instance
// gets RATE (10mbps, 512kbps, a bare number of bps) in place of the
// policy's max-user-rate. The session word is accepted and the flow's
// own instance changed [M].
func cmdBWCRate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("BWC::rate ?session_id? rate")
	}
	s := args[len(args)-1].String()
	bps, ok := ParseBitRate(s)
	if !ok {
		return tcl.Empty, tcl.Errorf("BWC::rate: %q is not a rate (bps, kbps, mbps or gbps)", s)
	}
	bc, err := bwcConn(in, "BWC::rate")
	if err != nil {
		return tcl.Empty, err
	}
	if err := bc.BWCRate(bps); err != nil {
		return tcl.Empty, tcl.Errorf("BWC::rate: %v", err)
	}
	return tcl.Empty, nil
}

// cmdBWCPPS is BWC::pps ?SESSION_ID? PPS: the flow's dynamic instance's
// packets per second.
func cmdBWCPPS(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("BWC::pps ?session_id? pps")
	}
	s := args[len(args)-1].String()
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return tcl.Empty, tcl.Errorf("BWC::pps: %q is not a number of packets per second", s)
	}
	bc, err := bwcConn(in, "BWC::pps")
	if err != nil {
		return tcl.Empty, err
	}
	if err := bc.BWCPPS(n); err != nil {
		return tcl.Empty, tcl.Errorf("BWC::pps: %v", err)
	}
	return tcl.Empty, nil
}

// bitUnits are the rate units BIG-IP takes, in bits per second.
var bitUnits = []struct {
	suffix string
	mult   uint64
}{{"gbps", 1e9}, {"mbps", 1e6}, {"kbps", 1e3}, {"bps", 1}}

// ParseBitRate reads a rate as tmsh and the BWC:: commands take it
// (10mbps, 512kbps, 1gbps, 800bps); a bare number is bits per second.
// The configuration's checks use it too, so both read rates alike.
func ParseBitRate(s string) (uint64, bool) {
	s = strings.ToLower(strings.TrimSpace(s))
	mult := uint64(1)
	for _, u := range bitUnits {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSuffix(s, u.suffix), u.mult
			break
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > ^uint64(0)/mult {
		return 0, false
	}
	return n * mult, true
}
