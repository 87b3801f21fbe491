package dataplane

import (
	"slices"

	"github.com/openltm/openltm/dataplane/internal/state"
)

// BIG-IP's wording for a virtual server its virtual address holds back
// [M]: the virtual server's own reasons with "virtual address".
const (
	reasonVAddrLimit    = "The virtual address has reached its connection limit"
	reasonVAddrDisabled = "its virtual address is disabled"
)

// vaddrOf is the runtime of the virtual address vc obeys, shared by the
// virtuals on it (next holds the ones of the commit being built) and
// kept from the running configuration, so that its count survives the
// commit; nil when the address does not act.
func (p *Plane) vaddrOf(vc *Virtual, next map[string]*state.VAddr) *state.VAddr {
	a := vc.Address
	if !a.Acts() {
		return nil
	}
	if r := next[a.Name]; r != nil {
		return r
	}
	r := p.vaddrs[a.Name]
	if r == nil {
		r = &state.VAddr{Name: a.Name}
	}
	next[a.Name] = r
	return r
}

// VirtualAddressCount is what the dataplane counts of a virtual address
// that acts: its virtual servers' client connections together, which its
// connection-limit caps, and the connections that limit reset.
type VirtualAddressCount struct {
	Current         int64
	ConnectionLimit int
	LimitReset      uint64
}

// AtLimit reports whether the address takes no new connection for now.
func (c VirtualAddressCount) AtLimit() bool {
	return c.ConnectionLimit > 0 && c.Current >= int64(c.ConnectionLimit)
}

// VirtualAddressCounts are the counts of the virtual addresses that act,
// by name, for show ltm virtual-address (an address that does not act has
// none: its traffic is its virtual servers').
func (p *Plane) VirtualAddressCounts() map[string]VirtualAddressCount {
	p.mu.Lock()
	limits := make(map[string]int, len(p.vaddrs))
	for _, v := range p.virtuals {
		if a := v.Snap.Load().Cfg.Address; a.Acts() {
			limits[a.Name] = a.ConnectionLimit
		}
	}
	rs := make([]*state.VAddr, 0, len(p.vaddrs))
	for _, r := range p.vaddrs {
		rs = append(rs, r)
	}
	p.mu.Unlock()
	out := make(map[string]VirtualAddressCount, len(rs))
	for _, r := range rs {
		out[r.Name] = VirtualAddressCount{Current: r.Stats.Cur.Load(), ConnectionLimit: limits[r.Name], LimitReset: r.LimitReset.Load()}
	}
	return out
}

// addressStatus is what the virtual's address makes of its status: an
// address at its connection-limit makes it unavailable, as its own limit
// does; a disabled address leaves it disabled-by-parent (BIG-IP's
// enabledState) with its availability kept, as a disabled virtual's is,
// the reason saying why [M].
func addressStatus(s *state.VirtualSnap, st *Status) {
	if s.Addr == nil {
		return
	}
	if s.AtAddressLimit() && st.Availability != Unavailable {
		st.Availability, st.Reason = Unavailable, reasonVAddrLimit
	}
	if s.AddressDisabled() && st.State == "enabled" {
		st.State = "disabled-by-parent"
		st.Reason += ", " + reasonVAddrDisabled
	}
}

// ResetVirtualAddressCounts zeroes the connections the named virtual
// addresses' connection-limit refused (all of them when names is empty),
// for reset-stats ltm virtual-address; their current connections stay.
func (p *Plane) ResetVirtualAddressCounts(names []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.vaddrs {
		if len(names) == 0 || slices.Contains(names, r.Name) {
			r.LimitReset.Store(0)
		}
	}
}
