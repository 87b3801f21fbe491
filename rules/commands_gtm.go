package rules

import (
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// GTMConn is implemented by a Conn answering a GSLB query (a wide IP's
// or a gtm listener's rules), found by type assertion as DNSConn is: a
// Conn without it makes the GTM-only commands (wideip, pools, nodes_up,
// ttl, qos_score, qos_weight, member_priority, matchregion, whoami,
// whereami) Tcl errors, as they are outside BIG-IP DNS. The methods
// read the GSLB's state as the query sees it; an error (a command
// valid only in a wide IP's events, a pool that does not exist) becomes
// a Tcl error.
type GTMConn interface {
	// WideIPName is the full path of the wide IP being resolved.
	WideIPName() (string, error)
	// WideIPPools are the full paths of the wide IP's pools, in the
	// order its pools list gives them.
	WideIPPools() ([]string, error)
	// NodesUp is how many members of a gtm pool are available.
	NodesUp(pool string) (int, error)
	// PoolMembers lists a gtm pool's virtual servers' addresses,
	// whatever their state (members).
	PoolMembers(pool string) ([]netip.AddrPort, error)
	// VirtualUp says whether the gtm virtual server at addr (any port
	// when addr's port is 0) is available.
	VirtualUp(addr netip.AddrPort) (bool, error)
	// AnswerTTL is the TTL the wide IP's answer goes with; SetAnswerTTL
	// changes it for this query.
	AnswerTTL() (uint32, error)
	SetAnswerTTL(ttl uint32) error
	// QoSScore is the quality-of-service score of the member load
	// balancing chose (LB_SELECTED).
	QoSScore() (float64, error)
	// QoSWeights are a gtm pool's quality-of-service coefficients, by
	// the names tmsh gives them without their qos- prefix.
	QoSWeights(pool string) ([]QoSWeight, error)
	// SetMemberPriority orders a gtm pool's member for this query:
	// members of higher priority come first.
	SetMemberPriority(pool string, member netip.AddrPort, priority int) error
	// MatchRegion says whether addr is in a gtm region.
	MatchRegion(addr netip.Addr, region string) (bool, error)
	// Self is the gtm server that is this device and its data center
	// (full paths; "" when no gtm server is this device).
	Self() (server, datacenter string)
}

// QoSWeight is one quality-of-service coefficient of a gtm pool.
type QoSWeight struct {
	Name   string
	Weight int
}

// gtmCommands are the commands only BIG-IP DNS's rules have: they act
// on a query's GSLB resolution.
var gtmCommands = []string{"wideip", "pools", "nodes_up", "ttl", "qos_score", "qos_weight", "member_priority", "matchregion", "whoami", "whereami"}

func registerGTM(t *tcl.Commands) {
	t.Register("wideip", cmdWideIP)
	t.Register("pools", cmdPools)
	t.Register("nodes_up", cmdNodesUp)
	t.Register("ttl", cmdTTL)
	t.Register("qos_score", cmdQoSScore)
	t.Register("qos_weight", cmdQoSWeight)
	t.Register("member_priority", cmdMemberPriority)
	t.Register("matchregion", cmdMatchRegion)
	t.Register("whoami", cmdWhoami)
	t.Register("whereami", cmdWhereami)
	for _, n := range gtmCommands {
		t.Lookup(n).Compile = gtmHook(n)
	}
}

// gtmEvents are the events a GTM-only command may be written in: a
// query's (a wide IP's or listener's). BIG-IP's validator refuses the
// commands elsewhere; a rule naming them in, say, HTTP_REQUEST is
// refused when it is saved, with the line and column.
var gtmEvents = []Event{DNSRequest, DNSResponse, LBSelected, LBFailed}

// gtmHook refuses a GTM-only command in a when block of an event no
// query runs (RULE_INIT, HTTP_REQUEST...). Procs are checked when run.
func gtmHook(name string) func(c *tcl.Compiler) error {
	return func(c *tcl.Compiler) error {
		r, ok := c.Context().(*Rule)
		if !ok || !r.inWhen {
			return nil
		}
		for _, ev := range gtmEvents {
			if r.inEvent == ev {
				return nil
			}
		}
		return c.Errorf(0, "%s: command is not valid in the current event (%s): valid in a query's events (DNS_REQUEST, DNS_RESPONSE, LB_SELECTED, LB_FAILED)", name, r.inEvent)
	}
}

// gtmConn returns the query's GSLB side, refusing GTM-only commands on
// connections that have none (an LTM virtual server's).
func gtmConn(in *tcl.Interp, cmd string) (GTMConn, error) {
	_, c, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	gc, ok := c.(GTMConn)
	if !ok {
		return nil, tcl.Errorf("%s: command is not valid in this context (not a gtm rule's query)", cmd)
	}
	return gc, nil
}

// cmdWideIP is `wideip name`: the wide IP being resolved.
func cmdWideIP(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 || args[1].String() != "name" {
		return tcl.Empty, tcl.WrongArgs("wideip name")
	}
	gc, err := gtmConn(in, "wideip")
	if err != nil {
		return tcl.Empty, err
	}
	name, err := gc.WideIPName()
	if err != nil {
		return tcl.Empty, tcl.Errorf("wideip: %v", err)
	}
	return tcl.Str(name), nil
}

// cmdPools is `pools ?-list?`: how many pools the wide IP has, or with
// -list their names, as members and active_members count or list a
// pool's members [M].
func cmdPools(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	list := len(args) == 2 && args[1].String() == "-list"
	if len(args) > 2 || (len(args) == 2 && !list) {
		return tcl.Empty, tcl.WrongArgs("pools ?-list?")
	}
	gc, err := gtmConn(in, "pools")
	if err != nil {
		return tcl.Empty, err
	}
	ps, err := gc.WideIPPools()
	if err != nil {
		return tcl.Empty, tcl.Errorf("pools: %v", err)
	}
	if !list {
		return tcl.Int(int64(len(ps))), nil
	}
	out := make([]tcl.Value, len(ps))
	for i, p := range ps {
		out[i] = tcl.Str(p)
	}
	return tcl.List(out...), nil
}

// cmdNodesUp is `nodes_up POOL` (how many of a gtm pool's members are
// available) or `nodes_up ADDR PORT` / `nodes_up ADDR:PORT` (1 when the
// gtm virtual server there is available, else 0).
func cmdNodesUp(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "nodes_up pool | nodes_up addr port"
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	gc, err := gtmConn(in, "nodes_up")
	if err != nil {
		return tcl.Empty, err
	}
	if ap, ok := parseVSAddr(args[1:]); ok {
		up, err := gc.VirtualUp(ap)
		if err != nil {
			return tcl.Empty, tcl.Errorf("nodes_up: %v", err)
		}
		return tcl.Bool(up), nil
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.Errorf("nodes_up: %q %q is not an address and port", args[1].String(), args[2].String())
	}
	n, err := gc.NodesUp(args[1].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("nodes_up: %v", err)
	}
	return tcl.Int(int64(n)), nil
}

// parseVSAddr reads a virtual server's address as rules write it: ADDR
// PORT, ADDR:PORT, or ADDR alone (any port).
func parseVSAddr(a []tcl.Value) (netip.AddrPort, bool) {
	switch len(a) {
	case 1:
		if ap, err := netip.ParseAddrPort(a[0].String()); err == nil {
			return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), true
		}
		if ad, err := netip.ParseAddr(a[0].String()); err == nil {
			return netip.AddrPortFrom(ad.Unmap(), 0), true
		}
	case 2:
		ad, err := netip.ParseAddr(a[0].String())
		if err != nil {
			return netip.AddrPort{}, false
		}
		p, err := strconv.ParseUint(a[1].String(), 10, 16)
		if err != nil {
			return netip.AddrPort{}, false
		}
		return netip.AddrPortFrom(ad.Unmap(), uint16(p)), true
	}
	return netip.AddrPort{}, false
}

// cmdTTL is `ttl ?SECONDS?`: the TTL of the wide IP's answer, or set it
// for this query (0 to 2147483647, RFC 2181's range).
func cmdTTL(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("ttl ?seconds?")
	}
	gc, err := gtmConn(in, "ttl")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		n, err := strconv.ParseInt(args[1].String(), 10, 64)
		if err != nil || n < 0 || n > 1<<31-1 {
			return tcl.Empty, tcl.Errorf("ttl: %q is not a TTL (0 to 2147483647 seconds)", args[1].String())
		}
		if err := gc.SetAnswerTTL(uint32(n)); err != nil {
			return tcl.Empty, tcl.Errorf("ttl: %v", err)
		}
		return tcl.Empty, nil
	}
	n, err := gc.AnswerTTL()
	if err != nil {
		return tcl.Empty, tcl.Errorf("ttl: %v", err)
	}
	return tcl.Int(int64(n)), nil
}

// cmdQoSScore is `qos_score`: the quality-of-service score of the
// member load balancing chose.
func cmdQoSScore(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("qos_score")
	}
	gc, err := gtmConn(in, "qos_score")
	if err != nil {
		return tcl.Empty, err
	}
	sc, err := gc.QoSScore()
	if err != nil {
		return tcl.Empty, tcl.Errorf("qos_score: %v", err)
	}
	return tcl.Double(sc), nil
}

// cmdQoSWeight is `qos_weight POOL ?COEFFICIENT?`: a gtm pool's
// quality-of-service coefficients as a name and value list, or one of
// them (rtt, hit-ratio, hops, packet-rate, kilobytes-second,
// vs-capacity, vs-score, topology, lcs; a qos- prefix is accepted).
func cmdQoSWeight(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("qos_weight pool ?coefficient?")
	}
	gc, err := gtmConn(in, "qos_weight")
	if err != nil {
		return tcl.Empty, err
	}
	ws, err := gc.QoSWeights(args[1].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("qos_weight: %v", err)
	}
	if len(args) == 3 {
		want := strings.TrimPrefix(args[2].String(), "qos-")
		names := make([]string, len(ws))
		for i, w := range ws {
			if w.Name == want {
				return tcl.Int(int64(w.Weight)), nil
			}
			names[i] = w.Name
		}
		return tcl.Empty, tcl.Errorf("qos_weight: unknown coefficient %q: must be %s", args[2].String(), strings.Join(names, ", "))
	}
	out := make([]tcl.Value, 0, 2*len(ws))
	for _, w := range ws {
		out = append(out, tcl.Str(w.Name), tcl.Int(int64(w.Weight)))
	}
	return tcl.List(out...), nil
}

// cmdMemberPriority is `member_priority POOL member ADDR PORT PRIORITY`
// (or ADDR:PORT): the member comes before those of lower priority when
// this query load balances the pool. Members a rule gave no priority
// have 0; equal priorities keep member-order.
func cmdMemberPriority(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "member_priority pool member addr port priority"
	if (len(args) != 5 && len(args) != 6) || args[2].String() != "member" {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	ap, ok := parseVSAddr(args[3 : len(args)-1])
	if !ok {
		return tcl.Empty, tcl.Errorf("member_priority: %q is not a virtual server's address and port", tclJoin(args[3:len(args)-1]))
	}
	prio, err := strconv.Atoi(args[len(args)-1].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("member_priority: %q is not an integer priority", args[len(args)-1].String())
	}
	gc, err := gtmConn(in, "member_priority")
	if err != nil {
		return tcl.Empty, err
	}
	if err := gc.SetMemberPriority(args[1].String(), ap, prio); err != nil {
		return tcl.Empty, tcl.Errorf("member_priority: %v", err)
	}
	return tcl.Empty, nil
}

func tclJoin(vs []tcl.Value) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = v.String()
	}
	return strings.Join(s, " ")
}

// cmdMatchRegion is `matchregion ldns|ADDR REGION`: whether the query's
// LDNS (its source address) or an address is in a gtm region.
func cmdMatchRegion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("matchregion ldns|addr region")
	}
	_, c, err := sess(in, "matchregion")
	if err != nil {
		return tcl.Empty, err
	}
	gc, ok := c.(GTMConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("matchregion: command is not valid in this context (not a gtm rule's query)")
	}
	var a netip.Addr
	if w := args[1].String(); w == "ldns" {
		a = c.Addr(EndClient).Addr()
	} else {
		if a, err = netip.ParseAddr(w); err != nil {
			return tcl.Empty, tcl.Errorf("matchregion: %q is not an IP address or ldns", w)
		}
	}
	hit, err := gc.MatchRegion(a.Unmap(), args[2].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("matchregion: %v", err)
	}
	return tcl.Bool(hit), nil
}

// cmdWhoami is `whoami`: the gtm server that is this device ("" when
// none is).
func cmdWhoami(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("whoami")
	}
	gc, err := gtmConn(in, "whoami")
	if err != nil {
		return tcl.Empty, err
	}
	server, _ := gc.Self()
	return tcl.Str(server), nil
}

// cmdWhereami is `whereami`: the data center of the gtm server that is
// this device ("" when none is).
func cmdWhereami(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("whereami")
	}
	gc, err := gtmConn(in, "whereami")
	if err != nil {
		return tcl.Empty, err
	}
	_, dc := gc.Self()
	return tcl.Str(dc), nil
}
