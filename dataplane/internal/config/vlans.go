package config

import "slices"

// VLANFilter is a virtual's vlans-enabled or vlans-disabled list, as the
// Linux interfaces its VLANs name: BIG-IP matches a virtual only to
// traffic arriving on the VLANs it is enabled on, and openltm's VLANs
// are the host's interfaces.
type VLANFilter struct {
	// Ifindex is the interfaces' indexes, resolved at commit.
	Ifindex []int
	// Disabled: the virtual takes traffic arriving on every interface but
	// these (vlans-disabled); else only on these (vlans-enabled).
	Disabled bool
	// Device is the one interface's name when the virtual is enabled on
	// exactly one: the listener is bound to it (SO_BINDTODEVICE), so the
	// kernel itself refuses the others' SYNs (each connection is still
	// checked, should the binding have failed).
	Device string
}

// Admits reports whether a connection that arrived on interface ifindex
// enters the virtual; an unknown arrival (0) enters a vlans-disabled one
// only.
func (f *VLANFilter) Admits(ifindex int) bool {
	return slices.Contains(f.Ifindex, ifindex) != f.Disabled
}

// Equal reports whether f and g are the same list (nil: none), so that a
// commit that keeps a virtual's VLANs leaves its sockets alone.
func (f *VLANFilter) Equal(g *VLANFilter) bool {
	if f == nil || g == nil {
		return f == g
	}
	return f.Disabled == g.Disabled && f.Device == g.Device && slices.Equal(f.Ifindex, g.Ifindex)
}
