package rules

import "github.com/openltm/openltm/rules/tcl"

// ArrivalConn is implemented by a Conn that can say which interface its
// client's connection came in on, found by type assertion: LINK::vlan_id
// maps it to the VLAN (openltm's VLANs are the host's interfaces, each
// net vlan naming its own). Linux tells it only for a listener that
// asked before the client came (Program.ReadsLink).
type ArrivalConn interface {
	// ArrivalIf is the index of the interface the client's connection
	// arrived on; 0 when the kernel does not tell.
	ArrivalIf() int
}

// registerLink adds LINK::vlan_id. LINK::lasthop, LINK::nexthop and
// LINK::qos are in commands_f5only.go: Linux gives an accepted TCP
// connection neither the MAC addresses of its packets nor their 802.1p
// priority, so they answer what F5 documents where it can be told and
// are a Tcl error elsewhere.
func registerLink(t *tcl.Commands) {
	t.Register("LINK::vlan_id", cmdLinkVLANID).Compile = linkHook
}

// linkHook marks a rule that reads the arrival VLAN, so that its
// virtual's listener keeps each connection's arrival interface.
func linkHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.readsLink = true
	}
	return nil
}

// cmdLinkVLANID is LINK::vlan_id: the tag of the VLAN the client's
// connection came in on (rules choose a pool or log per VLAN where one
// virtual listens on several), 0 when its interface is in no net vlan
// [M]. A connection that cannot tell (a UDP datagram's) is a Tcl error.
func cmdLinkVLANID(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("LINK::vlan_id")
	}
	s, c, err := sess(in, "LINK::vlan_id")
	if err != nil {
		return tcl.Empty, err
	}
	ac, ok := c.(ArrivalConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("LINK::vlan_id: this connection cannot tell which VLAN it came in on")
	}
	idx := ac.ArrivalIf()
	if idx == 0 {
		return tcl.Empty, tcl.Errorf("LINK::vlan_id: the system did not say which interface this connection came in on")
	}
	if f := s.prog.env.VLANTag; f != nil {
		if tag, ok := f(idx); ok {
			return tcl.Int(int64(tag)), nil
		}
	}
	return tcl.Int(0), nil
}
