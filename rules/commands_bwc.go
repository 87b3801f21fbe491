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

func registerBWC(t *tcl.Commands) {
	t.Register("BWC::policy", cmdBWCPolicy)
	t.Register("BWC::rate", cmdBWCRate)
	t.Register("BWC::pps", cmdBWCPPS)
	registerUnsupported(t, bwcUnsupported)
}

// bwcUnsupported are the BWC:: commands whose effect openltm's token
// buckets cannot give, with what is missing: a rule using one is kept
// with a warning saying so (registerUnsupported), rather than run as if
// the traffic were treated as asked.
var bwcUnsupported = map[string]string{
	"BWC::priority": "priority groups (a policy's categories and net bwc priority-group) are kept in the configuration but not enforced",
	"BWC::color":    "traffic colors (color policers) are not kept",
	"BWC::mark":     "the policy's packet marking (ip-tos, link-qos) is kept in the configuration but not applied",
	"BWC::measure":  "measurement (the policy's measure and log-publisher) is kept in the configuration but not run; show net bwc policy counts every policy",
	"BWC::debug":    "there is no bandwidth controller debug log; show net bwc policy counts every policy",
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
