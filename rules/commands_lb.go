package rules

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// LB:: commands that read or steer how the connection's server side is
// made: LB::prime and LB::connect (connect now), LB::snat (the source
// translation in force), LB::persist (the persistence record load
// balancing would follow), LB::enable_decisionlog, and translate.

// LBConnector is implemented by a Conn whose server connection a rule
// may open before the client sends anything, found by type assertion:
// LB::prime and LB::connect, so that a server that speaks first (SMTP,
// FTP, a banner) is reached while the rule still collects the client's
// data, or so that a slow connect overlaps the client's think time.
type LBConnector interface {
	// LBConnect asks for the server connection to be opened as soon as
	// the event ends (load balancing, LB_SELECTED and SERVER_CONNECTED
	// as for any connection); an error when it cannot be (no server
	// side of its own, or it exists already).
	LBConnect() error
}

// SNATReader is implemented by a Conn that can say which source
// translation its server connection uses, found by type assertion:
// LB::snat, so that a rule can log or branch on it.
type SNATReader interface {
	// SNATDecision is the translation as the snat and snatpool commands
	// write it: "none", "automap", an address, or "snatpool NAME".
	SNATDecision() string
}

// Translator is implemented by a Conn whose destination translation a
// rule may turn off for itself alone, found by type assertion: the
// translate command, the per-connection form of the virtual's
// translate-address and translate-port (a transparent virtual that
// forwards some clients to the address they asked for).
type Translator interface {
	// Translation is whether the address and the port are translated to
	// the member's now.
	Translation() (addr, port bool)
	// SetTranslation sets both for this connection's next server
	// connection; an error after it is made.
	SetTranslation(addr, port bool) error
}

// LBPersister is implemented by a Conn that can look its persistence up
// before load balancing, found by type assertion: LB::persist.
type LBPersister interface {
	// LBPersist is the connection's persistence key ("" when it does
	// not persist) and the member its record names (ok false when there
	// is no record, or the member may not take the connection).
	LBPersist() (key, pool string, member netip.AddrPort, ok bool, err error)
}

// DecisionLogger is implemented by a Conn that can write its load
// balancing decision to the log, found by type assertion:
// LB::enable_decisionlog, to see why a client went where it went.
type DecisionLogger interface {
	// EnableDecisionLog makes the connection log its next decisions.
	EnableDecisionLog() error
}

func registerLBMore(t *tcl.Commands) {
	t.Register("LB::prime", cmdLBConnect("LB::prime"))
	t.Register("LB::connect", cmdLBConnect("LB::connect"))
	t.Register("LB::snat", cmdLBSnat)
	t.Register("LB::persist", cmdLBPersist)
	t.Register("LB::enable_decisionlog", cmdLBDecisionLog)
	t.Register("translate", cmdTranslate)
	t.Register("traffic_group", cmdTrafficGroup)
}

// cmdLBConnect is LB::prime and LB::connect: the server connection is
// opened when the event ends, before any client data. F5 documents
// neither with arguments; both are taken to mean the same [M].
func cmdLBConnect(name string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		switch s.event {
		case ClientAccepted, ClientData:
		default:
			return tcl.Empty, tcl.Errorf("%s: only valid in CLIENT_ACCEPTED and CLIENT_DATA, not %s", name, s.event)
		}
		if s.afters != nil && s.afters.current != nil {
			// A timer's script runs beside the connection's own
			// progress, which may be connecting already.
			return tcl.Empty, tcl.Errorf("%s: not valid in a script after scheduled", name)
		}
		lc, ok := c.(LBConnector)
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: this virtual server's connections have no server connection of their own to open", name)
		}
		if err := lc.LBConnect(); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Empty, nil
	}
}

// cmdLBSnat is LB::snat: the source translation of the connection's
// server side, as the snat and snatpool commands name it.
func cmdLBSnat(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("LB::snat")
	}
	_, c, err := sess(in, "LB::snat")
	if err != nil {
		return tcl.Empty, err
	}
	sr, ok := c.(SNATReader)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::snat: this virtual server's connections have no source translation to read")
	}
	return tcl.Str(sr.SNATDecision()), nil
}

// cmdLBPersist is LB::persist ?key?: the persistence decision load
// balancing would take now, without making a record. Bare, it is the
// command that selects the record's member (`pool P member A PORT`,
// which `eval` carries out, as F5's page describes); empty without a
// record [M]. With `key`, the persistence key ("" when the connection
// does not persist). `cookie` needs an HTTP cookie persistence the
// virtuals that read LB::persist here do not have: refused.
func cmdLBPersist(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "LB::persist ?key?"
	if len(args) > 2 || len(args) == 2 && args[1].String() != "key" {
		if len(args) == 2 && args[1].String() == "cookie" {
			return tcl.Empty, tcl.Errorf("LB::persist cookie: this connection has no cookie persistence")
		}
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	_, c, err := sess(in, "LB::persist")
	if err != nil {
		return tcl.Empty, err
	}
	lp, ok := c.(LBPersister)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::persist: this virtual server's connections cannot look their persistence up")
	}
	key, pool, m, found, err := lp.LBPersist()
	if err != nil {
		return tcl.Empty, tcl.Errorf("LB::persist: %v", err)
	}
	if len(args) == 2 {
		return tcl.Str(key), nil
	}
	if !found {
		return tcl.Empty, nil
	}
	return tcl.Str(tcl.FormatList("pool", pool, "member", m.Addr().Unmap().String(), strconv.Itoa(int(m.Port())))), nil
}

// cmdLBDecisionLog is LB::enable_decisionlog: the connection's load
// balancing decisions are written to the log.
func cmdLBDecisionLog(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("LB::enable_decisionlog")
	}
	_, c, err := sess(in, "LB::enable_decisionlog")
	if err != nil {
		return tcl.Empty, err
	}
	dl, ok := c.(DecisionLogger)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::enable_decisionlog: this virtual server's connections do not log their decisions")
	}
	return tcl.Empty, tclErr(dl.EnableDecisionLog())
}

// cmdTranslate is translate address|port|service ?enable|disable?:
// reads (1 or 0 [M]) or sets the connection's destination translation.
// service is the port's other name, as the virtual's translate-port is
// "Service Translation" in BIG-IP's GUI [M].
func cmdTranslate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "translate address|port|service ?enable|disable?"
	if len(args) < 2 || len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	what := args[1].String()
	switch what {
	case "address", "port", "service":
	default:
		return tcl.Empty, tcl.Errorf("translate: bad option %q: must be address, port or service", what)
	}
	on := false
	if len(args) == 3 {
		switch args[2].String() {
		case "enable":
			on = true
		case "disable":
		default:
			return tcl.Empty, tcl.Errorf("translate %s: bad value %q: must be enable or disable", what, args[2].String())
		}
	}
	_, c, err := sess(in, "translate")
	if err != nil {
		return tcl.Empty, err
	}
	tr, ok := c.(Translator)
	if !ok {
		return tcl.Empty, tcl.Errorf("translate: this virtual server's connections have no destination translation to change")
	}
	addr, port := tr.Translation()
	if len(args) == 2 {
		if what == "address" {
			return tcl.Bool(addr), nil
		}
		return tcl.Bool(port), nil
	}
	if what == "address" {
		addr = on
	} else {
		port = on
	}
	if err := tr.SetTranslation(addr, port); err != nil {
		return tcl.Empty, tcl.Errorf("translate %s: %v", what, err)
	}
	return tcl.Empty, nil
}

// cmdTrafficGroup is traffic_group: the traffic group of the virtual
// address the connection reached (Env.TrafficGroup), or, outside a
// connection (RULE_INIT), of the device itself,
// traffic-group-local-only [M].
func cmdTrafficGroup(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("traffic_group")
	}
	virtual := ""
	if s := sessionOf(in); s != nil && s.conn != nil {
		if li, ok := s.conn.(LBInfo); ok {
			virtual = li.VirtualName()
		}
	}
	var env *Env
	if s := sessionOf(in); s != nil && s.prog != nil {
		env = s.prog.env
	}
	if virtual == "" {
		return tcl.Str(LocalOnlyTrafficGroup), nil
	}
	if env == nil || env.TrafficGroup == nil {
		return tcl.Str(DefaultTrafficGroup), nil
	}
	return tcl.Str(env.TrafficGroup(virtual)), nil
}

// The traffic groups BIG-IP starts with: the one a new virtual address
// floats in, and the one that never leaves its device.
const (
	DefaultTrafficGroup   = "/Common/traffic-group-1"
	LocalOnlyTrafficGroup = "/Common/traffic-group-local-only"
)
