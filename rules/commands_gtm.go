package rules

import (
	"math"
	"net/netip"
	"slices"
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
	// QoSScore is the quality-of-service score of a gtm pool's member
	// (pool.Name "": the member load balancing picked) as the pool's
	// quality-of-service method computes it, with this query's weights
	// and, for this computation only, the weights given.
	QoSScore(pool QoSPool, member netip.AddrPort, with []QoSWeight) (float64, error)
	// QoSWeight is a factor's weight in a gtm pool (pool.Name "": the
	// query's own) for this query; SetQoSWeights changes weights for this
	// query's computations (in every pool of the query when pool.Name is
	// ""); ResetQoSWeight puts one back to the pool's configured qos-*
	// coefficient and returns it.
	QoSWeight(pool QoSPool, f QoSFactor) (int64, error)
	SetQoSWeights(pool QoSPool, ws []QoSWeight) error
	ResetQoSWeight(pool QoSPool, f QoSFactor) (int64, error)
	// SetMemberPriority orders a gtm pool's member for this query:
	// members of higher priority come first.
	SetMemberPriority(pool string, member netip.AddrPort, priority int) error
	// MatchRegion says whether addr is in a gtm region.
	MatchRegion(addr netip.Addr, region string) (bool, error)
	// Self is the gtm server that is this device and its data center
	// (full paths; "" when no gtm server is this device).
	Self() (server, datacenter string)
}

// QoSFactor is one of the quality-of-service factors qos_score and
// qos_weight name, by F5's names; each is weighed by one of a gtm pool's
// qos-* settings.
type QoSFactor uint8

// The factors, in the order F5 lists them.
const (
	QoSBps          QoSFactor = iota // bps: qos-kilobytes-second
	QoSHitRatio                      // hit_ratio: qos-hit-ratio
	QoSHops                          // hops: qos-hops
	QoSLinkCapacity                  // link_capacity: qos-lcs
	QoSPacketRate                    // packet_rate: qos-packet-rate
	QoSRTT                           // rtt: qos-rtt
	QoSTopology                      // topology: qos-topology
	QoSVSCapacity                    // vs_capacity: qos-vs-capacity
	QoSVSScore                       // vs_score: qos-vs-score
	NumQoSFactors
)

var qosFactorNames = [NumQoSFactors]string{"bps", "hit_ratio", "hops", "link_capacity", "packet_rate", "rtt", "topology", "vs_capacity", "vs_score"}

func (f QoSFactor) String() string {
	if f < NumQoSFactors {
		return qosFactorNames[f]
	}
	return "QoSFactor(" + strconv.Itoa(int(f)) + ")"
}

// parseQoSFactor reads a factor's name, or a prefix of only one name
// [M]: F5's own example writes `qos_weight set link 50 packet 120`.
func parseQoSFactor(cmd, s string) (QoSFactor, error) {
	found, n := QoSFactor(0), 0
	for i, name := range qosFactorNames {
		if name == s {
			return QoSFactor(i), nil
		}
		if s != "" && strings.HasPrefix(name, s) {
			found, n = QoSFactor(i), n+1
		}
	}
	switch {
	case n == 1:
		return found, nil
	case n > 1:
		var amb []string
		for _, name := range qosFactorNames {
			if strings.HasPrefix(name, s) {
				amb = append(amb, name)
			}
		}
		return 0, tcl.Errorf("%s: ambiguous factor %q: %s", cmd, s, strings.Join(amb, ", "))
	}
	return 0, tcl.Errorf("%s: unknown factor %q: must be %s", cmd, s, strings.Join(qosFactorNames[:], ", "))
}

// QoSPool names the gtm pool qos_score and qos_weight act on: Type is
// the record type a rule wrote (`pool a NAME`; "": the wide IP's), Name
// "" the query's own pool.
type QoSPool struct {
	Type, Name string
}

// QoSWeight is the weight a rule gives a factor.
type QoSWeight struct {
	Factor QoSFactor
	Weight uint32
}

// QoSFixedBits is how many of a score's bits are its fraction:
// qos_score computes in 16.16 fixed point [M: F5 documents fixed-point
// mathematics without its format]. `-aslong` returns the raw value (the
// score times 65536, rounded, as a 64-bit unsigned integer), `-integer`
// its integer part, and by default the list {INTEGER FRACTION}, the
// fraction in millionths of the 16-bit fraction (0.5 is 500000, 0.1 is
// 100006, truncated).
const QoSFixedBits = 16

// qosFixed is a score as a 16.16 fixed-point value.
func qosFixed(score float64) uint64 {
	if !(score > 0) {
		return 0
	}
	if score >= 1<<(64-QoSFixedBits) {
		return math.MaxUint64
	}
	return uint64(math.Round(score * (1 << QoSFixedBits)))
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

// GTMPersistConn is a gtm rule's query whose wide IP LDNS persistence
// the GTM form of persist reads and turns on or off.
type GTMPersistConn interface {
	// WideIPPersist says the query uses the wide IP's persistence.
	WideIPPersist() (bool, error)
	// SetWideIPPersist turns it on or off for this query and returns
	// what it was.
	SetWideIPPersist(on bool) (prev bool, err error)
}

// gtmPersist is the GTM form of persist: `persist` returns whether the
// query uses the wide IP's persistence (1 or 0), `persist enable` and
// `persist disable` turn it on or off for this query and return what it
// was (F5's GTM persist).
func gtmPersist(gc GTMPersistConn, args []tcl.Value) (tcl.Value, error) {
	b := func(on bool) tcl.Value {
		if on {
			return tcl.Str("1")
		}
		return tcl.Str("0")
	}
	switch {
	case len(args) == 1:
		on, err := gc.WideIPPersist()
		if err != nil {
			return tcl.Empty, tcl.Errorf("persist: %v", err)
		}
		return b(on), nil
	case len(args) == 2 && (args[1].String() == "enable" || args[1].String() == "disable"):
		prev, err := gc.SetWideIPPersist(args[1].String() == "enable")
		if err != nil {
			return tcl.Empty, tcl.Errorf("persist %s: %v", args[1].String(), err)
		}
		return b(prev), nil
	}
	return tcl.Empty, tcl.WrongArgs("persist ?enable|disable?")
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

// gtmPoolTypes are the record types `pool TYPE NAME` may name.
var gtmPoolTypes = []string{"a", "aaaa", "cname", "mx", "srv", "naptr", "svcb", "https"}

// qosPoolArg reads `pool ?TYPE? NAME` at args[i] (args[i] is "pool"):
// TYPE is taken when a name follows it (one that is not a word in stop).
func qosPoolArg(args []tcl.Value, i int, stop ...string) (QoSPool, int, bool) {
	if i+1 >= len(args) {
		return QoSPool{}, i, false
	}
	w := strings.ToLower(args[i+1].String())
	if slices.Contains(gtmPoolTypes, w) && i+2 < len(args) && !slices.Contains(stop, args[i+2].String()) {
		return QoSPool{Type: w, Name: args[i+2].String()}, i + 3, true
	}
	return QoSPool{Name: args[i+1].String()}, i + 2, true
}

// qosPairs reads factor and value pairs (values unsigned 32-bit
// integers); an error changes nothing.
func qosPairs(cmd string, args []tcl.Value) ([]QoSWeight, error) {
	ws := make([]QoSWeight, 0, len(args)/2)
	for i := 0; i+1 < len(args); i += 2 {
		f, err := parseQoSFactor(cmd, args[i].String())
		if err != nil {
			return nil, err
		}
		v, err := strconv.ParseUint(args[i+1].String(), 10, 32)
		if err != nil {
			return nil, tcl.Errorf("%s: %s %q is not a weight (an unsigned integer up to 4294967295)", cmd, f, args[i+1].String())
		}
		ws = append(ws, QoSWeight{f, uint32(v)})
	}
	return ws, nil
}

// cmdQoSScore is `qos_score ?-aslong|-integer? ?pool ?TYPE? NAME member
// ADDR PORT? ?FACTOR VALUE ...?`: the quality-of-service score of the
// member load balancing picked, or of the pool's member named, with the
// query's weights, those given replacing them for this computation
// only. The score is 16.16 fixed point (QoSFixedBits): the list
// {INTEGER FRACTION} by default, the raw value with -aslong, the integer
// part with -integer. A member may be `ADDR PORT` or `ADDR:PORT`.
func cmdQoSScore(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "qos_score ?-aslong|-integer? ?pool ?type? name member addr port? ?factor value ...?"
	i, form := 1, ""
	if i < len(args) && (args[i].String() == "-aslong" || args[i].String() == "-integer") {
		form = args[i].String()
		i++
	}
	var pool QoSPool
	var member netip.AddrPort
	if i < len(args) && args[i].String() == "pool" {
		var ok bool
		if pool, i, ok = qosPoolArg(args, i, "member"); !ok {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		if i >= len(args) || args[i].String() != "member" {
			return tcl.Empty, tcl.Errorf("qos_score: pool %s needs a member: pool NAME member ADDR PORT", pool.Name)
		}
		i++
		switch {
		case i+1 < len(args):
			if ap, ok := parseVSAddr(args[i : i+2]); ok {
				member, i = ap, i+2
				break
			}
			fallthrough
		case i < len(args):
			ap, ok := parseVSAddr(args[i : i+1])
			if !ok || ap.Port() == 0 {
				return tcl.Empty, tcl.Errorf("qos_score: %q is not a pool member's address and port", args[i].String())
			}
			member, i = ap, i+1
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	if (len(args)-i)%2 != 0 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	with, err := qosPairs("qos_score", args[i:])
	if err != nil {
		return tcl.Empty, err
	}
	gc, err := gtmConn(in, "qos_score")
	if err != nil {
		return tcl.Empty, err
	}
	sc, err := gc.QoSScore(pool, member, with)
	if err != nil {
		return tcl.Empty, tcl.Errorf("qos_score: %v", err)
	}
	raw := qosFixed(sc)
	whole := raw >> QoSFixedBits
	switch form {
	case "-aslong":
		return tcl.Str(strconv.FormatUint(raw, 10)), nil
	case "-integer":
		return tcl.Str(strconv.FormatUint(whole, 10)), nil
	}
	frac := (raw & (1<<QoSFixedBits - 1)) * 1_000_000 >> QoSFixedBits
	return tcl.List(tcl.Str(strconv.FormatUint(whole, 10)), tcl.Int(int64(frac))), nil
}

// cmdQoSWeight is `qos_weight ?pool ?TYPE? NAME? get|reset FACTOR ...`
// and `qos_weight ?pool ?TYPE? NAME? set FACTOR VALUE ...`: the
// quality-of-service weights this query computes with. get returns each
// factor's weight (a list when more than one is named); set changes
// them for this query (in the pool named, else in every pool it load
// balances) and returns nothing; reset puts them back to the pool's
// qos-* settings and returns the new weights. Without a pool, get and
// reset report the pool load balancing picked, else the wide IP's first.
func cmdQoSWeight(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "qos_weight ?pool ?type? name? get|reset factor ?factor ...? | qos_weight ?pool ?type? name? set factor value ?factor value ...?"
	i := 1
	var pool QoSPool
	if i < len(args) && args[i].String() == "pool" {
		var ok bool
		if pool, i, ok = qosPoolArg(args, i, "get", "set", "reset"); !ok {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	if i+1 >= len(args) {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	op, rest := args[i].String(), args[i+1:]
	switch op {
	case "set":
		if len(rest)%2 != 0 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		ws, err := qosPairs("qos_weight", rest)
		if err != nil {
			return tcl.Empty, err
		}
		gc, err := gtmConn(in, "qos_weight")
		if err != nil {
			return tcl.Empty, err
		}
		if err := gc.SetQoSWeights(pool, ws); err != nil {
			return tcl.Empty, tcl.Errorf("qos_weight: %v", err)
		}
		return tcl.Empty, nil
	case "get", "reset":
	default:
		return tcl.Empty, tcl.Errorf("qos_weight: unknown option %q: must be get, set or reset", op)
	}
	fs := make([]QoSFactor, len(rest))
	for k, a := range rest {
		f, err := parseQoSFactor("qos_weight", a.String())
		if err != nil {
			return tcl.Empty, err
		}
		fs[k] = f
	}
	gc, err := gtmConn(in, "qos_weight")
	if err != nil {
		return tcl.Empty, err
	}
	out := make([]tcl.Value, len(fs))
	for k, f := range fs {
		var w int64
		if op == "get" {
			w, err = gc.QoSWeight(pool, f)
		} else {
			w, err = gc.ResetQoSWeight(pool, f)
		}
		if err != nil {
			return tcl.Empty, tcl.Errorf("qos_weight: %v", err)
		}
		out[k] = tcl.Int(w)
	}
	if len(out) == 1 {
		return out[0], nil
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
