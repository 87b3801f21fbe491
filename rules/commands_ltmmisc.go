package rules

import (
	"errors"
	"math"
	"net/netip"
	"slices"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// The remaining commands of F5's iRules list without a namespace (and
// HA::status): clone, cpu, HA::status and llookup act; nexthop, lasthop,
// tcpdump, check, pem_dtos and radius_authenticate are kept with a
// warning that says why (ltmMiscUnsupported).

// Cloner is implemented by a Conn whose traffic a rule may copy to a
// clone pool, found by type assertion: the clone command, the rule's form
// of a virtual's clone-pools (an intrusion detection system that should
// see some clients only).
type Cloner interface {
	// Clone copies the connection's client bytes from now on to a member
	// of pool (member, when valid, that one whatever its monitor says):
	// as the client sent them for ClientSide, as the member gets them
	// for ServerSide. ev is the event the command runs in: a Conn that
	// cannot start a copy there returns ErrCloneEvent, having counted
	// the copy as dropped. An error when the pool or member does not
	// exist.
	Clone(pool string, member netip.AddrPort, side Side, ev Event) error
}

// ErrCloneEvent is a Cloner's answer to a clone in an event it cannot
// copy from: the clone is skipped, not the connection reset, as the
// commit that attached the rule warned (CloneEvents).
var ErrCloneEvent = errors.New("clone: not in this event")

// ltmMiscUnsupported are the commands of this group openltm does not
// act on, each with its reason (registerUnsupported).
var ltmMiscUnsupported = map[string]string{
	// https://clouddocs.f5.com/api/irules/nexthop.html
	"nexthop": "a proxy on the host's sockets never chooses the VLAN or MAC address its packets to the member leave by: the host's routing table and neighbour cache do; LINK::nexthop reads the hop",
	// https://clouddocs.f5.com/api/irules/lasthop.html
	"lasthop": "a proxy on the host's sockets never chooses the VLAN or MAC address its packets to the client leave by: the host's routing table and neighbour cache do; LINK::lasthop reads the hop",
	// https://clouddocs.f5.com/api/irules/tcpdump.html
	"tcpdump": "F5 documents neither its arguments nor what it captures; run tcpdump on the host",
	// https://clouddocs.f5.com/api/irules/check.html
	"check": "F5 documents only that it sets the iRule validation level; openltm validates every rule fully when it is saved",
	// https://clouddocs.f5.com/api/irules/pem_dtos.html
	"pem_dtos": "it queries BIG-IP PEM's device type and OS database, which openltm does not have",
	// https://clouddocs.f5.com/api/irules/radius_authenticate.html
	"radius_authenticate": "F5 documents neither its arguments nor the form of its result; AUTH::start with a radius auth profile authenticates against a RADIUS server",
}

func registerLTMMisc(t *tcl.Commands) {
	registerUnsupported(t, ltmMiscUnsupported)
	t.Register("clone", cmdClone).Compile = cloneHook
	t.Register("cpu", cmdCPU).Compile = cpuHook
	t.Register("HA::status", cmdHAStatus).Compile = haStatusHook
	t.Register("llookup", cmdLLookup)
}

// ---- clone ----
// https://clouddocs.f5.com/api/irules/clone.html:
// clone pool <pool_name> [member <addr> [<port>]] | clone nexthop <vlan>.

const cloneUsage = "clone pool pool_name ?member addr ?port??"

// cloneHook checks clone's literal words when the rule is saved, records
// its pool for the configuration check and the event it is written in
// (CloneEvents: the daemon warns of one the virtual cannot clone from),
// refuses it in RULE_INIT (no connection to copy [M]) and records
// `clone nexthop VLAN` (CloneNexthop: the daemon warns that it is
// skipped, no layer 2). F5 lists no event restriction
// (https://clouddocs.f5.com/api/irules/clone.html).
func cloneHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	n := c.NumWords()
	kind, lit := c.Literal(1)
	if n < 2 {
		return c.Errorf(0, "wrong # args: should be %q", cloneUsage)
	}
	if lit {
		switch kind {
		case "pool":
			if n != 3 && n != 5 && n != 6 {
				return c.Errorf(0, "wrong # args: should be %q", cloneUsage)
			}
			if n > 3 {
				if w, wl := c.Literal(3); wl && w != "member" {
					return c.Errorf(3, "clone: bad option %q: must be member", w)
				}
				if a, al := c.Literal(4); al && n == 5 {
					if _, err := netip.ParseAddrPort(a); err != nil {
						if _, err := netip.ParseAddr(a); err != nil {
							return c.Errorf(4, "clone: invalid address %q: want an IP address, ADDR PORT or ADDR:PORT", a)
						}
					}
				}
			}
			r.clones = true
			if err := refHook("pool", 2)(c); err != nil {
				return err
			}
		case "nexthop":
			if n != 3 {
				return c.Errorf(0, "wrong # args: should be \"clone nexthop vlan_name\"")
			}
			r.cloneNexthop = true
			return nil
		default:
			return c.Errorf(1, "clone: bad option %q: must be pool or nexthop", kind)
		}
	} else {
		// A kind computed at run time may be pool: the paths that
		// prepare for a clone (Program.Clones) and the commit's
		// warnings take it as one.
		r.clones = true
	}
	if !r.inWhen {
		return nil
	}
	if r.inEvent == RuleInit {
		return c.Errorf(0, "clone: command is not valid in the current event (%s): it needs a connection", r.inEvent)
	}
	if !slices.Contains(r.cloneEvents, r.inEvent) {
		r.cloneEvents = append(r.cloneEvents, r.inEvent)
	}
	return nil
}

// cmdClone is clone pool NAME ?member ADDR ?PORT??: from now on the
// connection's client bytes are copied to a member of the pool, chosen
// by the pool's load balancing, or to the member named. The side is the
// context's: clientside copies the bytes as the client sent them,
// `serverside { clone pool P }` as the member gets them, as a virtual's
// clone-pools context does. Where the connection cannot be cloned (its
// kind of virtual, or the event, as the commit warned) the clone is
// skipped and the connection goes on.
func cmdClone(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 3 {
		return tcl.Empty, tcl.WrongArgs(cloneUsage)
	}
	switch args[1].String() {
	case "pool":
	case "nexthop":
		// A proxy on the host's sockets copies no frames to a VLAN: the
		// commit warned (CloneNexthop); the connection goes on.
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("clone nexthop vlan_name")
		}
		return tcl.Empty, nil
	default:
		return tcl.Empty, tcl.Errorf("clone: bad option %q: must be pool or nexthop", args[1].String())
	}
	var member netip.AddrPort
	switch len(args) {
	case 3:
	case 5, 6:
		if args[3].String() != "member" {
			return tcl.Empty, tcl.Errorf("clone: bad option %q: must be member", args[3].String())
		}
		ap, err := parseHostPort(args[4:])
		if err != nil {
			return tcl.Empty, err
		}
		member = ap
	default:
		return tcl.Empty, tcl.WrongArgs(cloneUsage)
	}
	s, c, err := sess(in, "clone")
	if err != nil {
		return tcl.Empty, err
	}
	if s.afters != nil && s.afters.current != nil {
		return tcl.Empty, tcl.Errorf("clone: not valid in a script after scheduled")
	}
	cl, ok := c.(Cloner)
	if !ok {
		// A kind of virtual openltm does not clone from a rule: the
		// commit that attached the rule warned; the connection goes on.
		return tcl.Empty, nil
	}
	if err := cl.Clone(args[2].String(), member, s.side, s.event); err != nil && !errors.Is(err, ErrCloneEvent) {
		return tcl.Empty, tcl.Errorf("clone: %v", err)
	}
	return tcl.Empty, nil
}

// Clones reports whether the rule has a clone pool command, so that the
// daemon warns of one on a virtual server whose connections openltm
// cannot clone from a rule.
func (r *Rule) Clones() bool { return r.clones }

// CloneNexthop reports whether the rule has a clone nexthop command,
// which openltm skips (no layer 2: a proxy on the host's sockets copies
// no frames to a VLAN), so that the daemon warns of it at commit.
func (r *Rule) CloneNexthop() bool { return r.cloneNexthop }

// CloneEvents are the events the rule's clone pool commands are written
// in (not those in procs), in order, so that the daemon warns at commit
// of a clone the virtual's kind skips there.
func (r *Rule) CloneEvents() []Event { return r.cloneEvents }

// ---- cpu usage ----
// https://clouddocs.f5.com/api/irules/cpu.html: cpu usage 5secs|1min|5mins,
// the average TMM load over the interval (exponentially weighted).

// cpuWindows are the intervals cpu usage takes, F5's words.
var cpuWindows = map[string]time.Duration{"5secs": 5 * time.Second, "1min": time.Minute, "5mins": 5 * time.Minute}

const cpuUsage = "cpu usage 5secs|1min|5mins"

// cpuHook checks cpu's literal words when the rule is saved.
func cpuHook(c *tcl.Compiler) error {
	if c.NumWords() != 3 {
		return c.Errorf(0, "wrong # args: should be %q", cpuUsage)
	}
	if w, ok := c.Literal(1); ok && w != "usage" {
		return c.Errorf(1, "cpu: bad option %q: must be usage", w)
	}
	if w, ok := c.Literal(2); ok {
		if _, known := cpuWindows[w]; !known {
			return c.Errorf(2, "cpu usage: bad interval %q: must be 5secs, 1min or 5mins", w)
		}
	}
	return nil
}

// cmdCPU is cpu usage INTERVAL: ltmd's processor load over the interval,
// an integer percent of all the host's processors (Env.CPUUsage). ltmd
// is openltm's TMM: it carries the traffic, and its own load is what a
// rule shedding work when busy wants, not the host's [M: the percent is
// rounded to an integer, as F5's example compares it with one].
func cmdCPU(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 || args[1].String() != "usage" {
		return tcl.Empty, tcl.WrongArgs(cpuUsage)
	}
	w, ok := cpuWindows[args[2].String()]
	if !ok {
		return tcl.Empty, tcl.Errorf("cpu usage: bad interval %q: must be 5secs, 1min or 5mins", args[2].String())
	}
	s := sessionOf(in)
	if s == nil || s.prog == nil || s.prog.env.CPUUsage == nil {
		return tcl.Empty, tcl.Errorf("cpu usage: the processor load is not measured here")
	}
	return tcl.Int(int64(math.Round(s.prog.env.CPUUsage(w)))), nil
}

// ---- HA::status ----
// https://clouddocs.f5.com/api/irules/HA__status.html: HA::status
// active|standby, whether the device is active (standby) for the
// traffic group of the virtual address the connection reached.

const haUsage = "HA::status active|standby"

// haStatusHook checks the word and refuses HA::status in RULE_INIT,
// which runs on no virtual address (F5 excludes it there).
func haStatusHook(c *tcl.Compiler) error {
	if c.NumWords() != 2 {
		return c.Errorf(0, "wrong # args: should be %q", haUsage)
	}
	if w, ok := c.Literal(1); ok && w != "active" && w != "standby" {
		return c.Errorf(1, "HA::status: bad option %q: must be active or standby", w)
	}
	if r, ok := c.Context().(*Rule); ok && r.inWhen && r.inEvent == RuleInit {
		return c.Errorf(0, "HA::status: command is not valid in the current event (%s)", r.inEvent)
	}
	return nil
}

// cmdHAStatus answers 1 when the device is in the state asked for the
// connection's traffic group, else 0 [M: F5 says "true or false";
// openltm answers Tcl's canonical booleans, as its other tests do]. The
// answer is Env.HAStatus's for the connection's virtual; nil (a device
// in no sync-failover group) is active.
func cmdHAStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs(haUsage)
	}
	want := args[1].String()
	if want != "active" && want != "standby" {
		return tcl.Empty, tcl.Errorf("HA::status: bad option %q: must be active or standby", want)
	}
	s, c, err := sess(in, "HA::status")
	if err != nil {
		return tcl.Empty, err
	}
	virtual := ""
	if li, ok := c.(LBInfo); ok {
		virtual = li.VirtualName()
	}
	active := true
	if s.prog != nil && s.prog.env.HAStatus != nil {
		active = s.prog.env.HAStatus(virtual)
	}
	return tcl.Bool(active == (want == "active")), nil
}

// ---- llookup ----
// https://clouddocs.f5.com/api/irules/llookup.html: llookup MMAP KEY, the
// values of KEY in a multimap (a list of {key value} pairs, such as
// ASM::violation details gives), in order.

// cmdLLookup answers the list of the values paired with KEY; an empty
// list when there are none or MMAP is no list of pairs, as F5 says.
func cmdLLookup(_ *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("llookup mmap key")
	}
	pairs, err := tcl.AsList(args[1])
	if err != nil {
		return tcl.Empty, nil
	}
	key := args[2].String()
	var out []tcl.Value
	for _, p := range pairs {
		kv, err := tcl.AsList(p)
		if err != nil || len(kv) != 2 {
			return tcl.Empty, nil
		}
		if kv[0].String() == key {
			out = append(out, kv[1])
		}
	}
	if len(out) == 0 {
		return tcl.Empty, nil
	}
	return tcl.List(out...), nil
}
