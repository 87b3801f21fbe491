package rules

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules/tcl"
)

// MR::message's v14+ subcommands (F5's MR::message page): clone,
// clone_count, clone_id, clone_id_request, existing_connections_only,
// new_connection_only, outgoing_connection_instance_seed, pick_host,
// priority and snat. cmdMRMessage hands them here.

// maxClones bounds the clones one MR::message clone makes, a guard
// against a rule that loops [M: F5 warns of loops and names no bound].
const maxClones = 64

// mrMessageV14 runs subcommand sub of MR::message over m; ok false when
// sub is none of these.
func mrMessageV14(s *ConnState, st *MRState, m *mrf.Message, sub string, a []tcl.Value) (v tcl.Value, ok bool, err error) {
	const cmd = "MR::message"
	flag := func(p *bool) (tcl.Value, bool, error) {
		if len(a) > 1 {
			return tcl.Empty, true, tcl.WrongArgs(cmd + " " + sub + " ?BOOLEAN?")
		}
		if len(a) == 1 {
			b, err := boolArg(cmd+" "+sub, a[0])
			if err != nil {
				return tcl.Empty, true, err
			}
			*p = b
		}
		return tcl.Bool(*p), true, nil
	}
	switch sub {
	case "clone":
		if s.event != MRIngress {
			return tcl.Empty, true, tcl.Errorf("%s clone: not valid in %s (valid in MR_INGRESS)", cmd, s.event)
		}
		if m.CloneID != "" {
			// [M: F5 leaves loops to the rule; a clone that clones again
			// would loop without end, so a clone's clone is refused, as
			// a made message's create is.]
			return tcl.Empty, true, tcl.Errorf("%s clone: the message is a clone (%s) and cannot make another", cmd, m.CloneID)
		}
		var ids []string
		switch {
		case len(a) == 2 && a[0].String() == "-count":
			n, err := strconv.Atoi(a[1].String())
			if err != nil || n < 1 {
				return tcl.Empty, true, tcl.Errorf("%s clone: -count %q is not a count", cmd, a[1].String())
			}
			if n > maxClones {
				return tcl.Empty, true, tcl.Errorf("%s clone: -count %d is past %d", cmd, n, maxClones)
			}
			for i := range n {
				ids = append(ids, strconv.Itoa(m.CloneCount+i+1)) // F5: clone_count before, plus one, ...
			}
		case len(a) >= 1 && len(a) <= maxClones:
			for _, x := range a {
				ids = append(ids, x.String())
			}
		default:
			return tcl.Empty, true, tcl.WrongArgs(cmd + " clone CLONE_ID ?CLONE_ID ...? | " + cmd + " clone -count CLONE_COUNT")
		}
		if m.Originator() == nil {
			return tcl.Empty, true, tcl.Errorf("%s clone: the message has no connection to be routed from", cmd)
		}
		if m.CloneCount == 0 {
			m.CloneCount = 1 // the original counts
		}
		for _, id := range ids {
			m.CloneCount++
			st.made = append(st.made, m.Clone(id))
		}
		for _, c := range st.made[len(st.made)-len(ids):] {
			c.CloneCount = m.CloneCount
		}
		return tcl.Int(int64(m.CloneCount)), true, nil
	case "clone_count":
		return tcl.Int(int64(m.CloneCount)), true, nil
	case "clone_id":
		return tcl.Str(m.CloneID), true, nil
	case "clone_id_request":
		if m.Answer {
			return tcl.Str(m.CloneOfRequest), true, nil
		}
		return tcl.Str(m.CloneID), true, nil
	case "existing_connections_only":
		return flag(&m.ExistingOnly)
	case "new_connection_only":
		// Read as false. openltm opens a new connection only where the
		// peer's connection-mode has none, so asking for one per message
		// is the rule's error rather than a setting that does nothing.
		if len(a) > 1 {
			return tcl.Empty, true, tcl.WrongArgs(cmd + " new_connection_only ?BOOLEAN?")
		}
		if len(a) == 1 {
			b, err := boolArg(cmd+" new_connection_only", a[0])
			if err != nil {
				return tcl.Empty, true, err
			}
			if b {
				return tcl.Empty, true, tcl.Errorf("%s new_connection_only: openltm sends a message over the peer's connections as its connection-mode keeps them, not over a new one of its own", cmd)
			}
		}
		return tcl.Bool(false), true, nil
	case "outgoing_connection_instance_seed":
		if len(a) > 1 {
			return tcl.Empty, true, tcl.WrongArgs(cmd + " outgoing_connection_instance_seed ?SEED?")
		}
		if len(a) == 1 {
			n, err := strconv.ParseUint(a[0].String(), 10, 31)
			if err != nil {
				return tcl.Empty, true, tcl.Errorf("%s outgoing_connection_instance_seed: %q is not a nonnegative integer", cmd, a[0].String())
			}
			// The seed picks one of a peer's number-connections (the
			// instance, modulo their number), as MR::connection_instance.
			m.Instance = int(n)
		}
		if m.Instance < 0 {
			return tcl.Int(0), true, nil
		}
		return tcl.Int(int64(m.Instance)), true, nil
	case "priority":
		// Read as 0. openltm queues no message by priority, so setting
		// another is the rule's error rather than a setting that does
		// nothing.
		if len(a) > 1 {
			return tcl.Empty, true, tcl.WrongArgs(cmd + " priority ?PRIORITY?")
		}
		if len(a) == 1 {
			n, err := strconv.Atoi(a[0].String())
			if err != nil || n < 0 {
				return tcl.Empty, true, tcl.Errorf("%s priority: %q is not a nonnegative integer", cmd, a[0].String())
			}
			if n != 0 {
				return tcl.Empty, true, tcl.Errorf("%s priority: openltm does not order messages by priority", cmd)
			}
		}
		return tcl.Int(0), true, nil
	case "snat":
		v, err := mrSNAT(m, a)
		return v, true, err
	case "pick_host":
		v, err := mrPickHost(st, a)
		return v, true, err
	}
	return tcl.Empty, false, nil
}

// mrSNAT is MR::message snat ?none | automap | address ADDR?: the source
// of a peer connection the message opens (an open one it reuses keeps
// its own) [M: F5 documents the words, not the read-back; openltm
// answers the setting as written].
func mrSNAT(m *mrf.Message, a []tcl.Value) (tcl.Value, error) {
	const usage = "MR::message snat ?none | automap | address ADDR?"
	read := func() tcl.Value {
		switch {
		case m.SNATAutomap:
			return tcl.Str("automap")
		case m.SNAT.IsValid():
			return tcl.List(tcl.Str("address"), tcl.Str(m.SNAT.String()))
		}
		return tcl.Str("none")
	}
	switch {
	case len(a) == 0:
		return read(), nil
	case len(a) == 1 && a[0].String() == "none":
		m.SNAT, m.SNATAutomap = netip.Addr{}, false
	case len(a) == 1 && a[0].String() == "automap":
		m.SNAT, m.SNATAutomap = netip.Addr{}, true
	case len(a) == 2 && a[0].String() == "address":
		s := a[1].String()
		if ap, err := netip.ParseAddrPort(s); err == nil {
			s = ap.Addr().String() // a port is let go: the host chooses it [M]
		}
		ip, err := netip.ParseAddr(s)
		if err != nil {
			return tcl.Empty, tcl.Errorf("MR::message snat: %q is not an address", a[1].String())
		}
		m.SNAT, m.SNATAutomap = ip.Unmap(), false
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	return read(), nil
}

// mrPickHost is MR::message pick_host peer NAME ?carp KEY? | pool POOL
// ?config C? ?carp KEY?: the host (address:port) a new connection to
// the peer's pool, or the pool, would go to now, by the pool's
// balancing method [M: the carp key is accepted and the pool's own
// method chooses].
func mrPickHost(st *MRState, a []tcl.Value) (tcl.Value, error) {
	const usage = "MR::message pick_host peer NAME ?carp KEY? | MR::message pick_host pool POOL ?config NAME? ?carp KEY?"
	if len(a) < 2 || len(a)%2 != 0 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if st.router == nil {
		return tcl.Empty, tcl.Errorf("MR::message pick_host: no router on this connection")
	}
	pool := ""
	switch a[0].String() {
	case "peer":
		p := st.router.Peer(a[1].String())
		if p == nil {
			return tcl.Empty, tcl.Errorf("MR::message pick_host: no peer %q", a[1].String())
		}
		if p.Host.IsValid() {
			return tcl.Str(p.Host.String()), nil
		}
		pool = p.Pool
	case "pool":
		pool = a[1].String()
	default:
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	for rest := a[2:]; len(rest) >= 2; rest = rest[2:] {
		if w := rest[0].String(); w != "carp" && w != "config" {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	h, ok := st.router.PickHost(pool)
	if !ok {
		return tcl.Empty, nil
	}
	return tcl.Str(h.String()), nil
}
