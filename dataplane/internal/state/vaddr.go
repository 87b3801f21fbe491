package state

import "sync/atomic"

// VAddr is a virtual address's runtime, shared by its virtual servers'
// snapshots and kept across commits by name: the client connections its
// virtual servers hold together, which its connection-limit caps. It
// exists only for an address that acts (config.VirtualAddress.Acts);
// connections of other addresses are not counted here (a virtual
// address's traffic in shows is its virtual servers').
type VAddr struct {
	Name  string
	Stats Counters
	// LimitReset counts the connections its connection-limit refused.
	LimitReset atomic.Uint64
}

// enterAddress counts a connection the virtual admitted on its address
// too; past the address's connection-limit it takes back the virtual's
// count and refuses the connection.
func (vs *Virtual) enterAddress(snap *VirtualSnap) bool {
	if snap.Addr.Stats.TryOpen(snap.Cfg.Address.ConnectionLimit) {
		return true
	}
	snap.Addr.LimitReset.Add(1)
	vs.Stats.Close()
	vs.Stats.Tot.Add(^uint64(0))
	return false
}

// Leave counts the end of a connection Admit admitted: on the virtual,
// and on addr, the snapshot's Addr at admission (nil for an address that
// did not act then), which the flow keeps so that a commit meanwhile
// does not unbalance the counts.
func (vs *Virtual) Leave(addr *VAddr) {
	vs.Stats.Close()
	if addr != nil {
		addr.Stats.Close()
	}
}

// AtAddressLimit reports whether the virtual's address has reached its
// connection-limit.
func (s *VirtualSnap) AtAddressLimit() bool {
	a := s.Cfg.Address
	return s.Addr != nil && a.ConnectionLimit > 0 && s.Addr.Stats.Cur.Load() >= int64(a.ConnectionLimit)
}

// AddressDisabled reports whether the virtual's address is disabled
// (enabled no), which takes the virtual out of service.
func (s *VirtualSnap) AddressDisabled() bool {
	return s.Addr != nil && !s.Cfg.Address.Enabled
}
