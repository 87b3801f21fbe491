package config

// VirtualAddress is an ltm virtual-address as its virtual servers obey
// it: BIG-IP takes every virtual server on a disabled address out of
// service, and caps the client connections of all of them together at
// the address's connection-limit. Virtuals on one address share one
// VirtualAddress (by Name) so that the dataplane counts them together.
type VirtualAddress struct {
	// Name is the virtual-address object's full path (/Common/10.0.0.1).
	Name string
	// Enabled is false for `enabled no`: new connections to its virtual
	// servers are reset, existing ones go on.
	Enabled bool
	// ConnectionLimit caps the concurrent client connections of all the
	// address's virtual servers together; 0 is unlimited.
	ConnectionLimit int
}

// Acts reports whether the address changes anything for its virtual
// servers; one that does not is left out of the configuration (nil), so
// that their connections pay nothing for it.
func (a *VirtualAddress) Acts() bool {
	return a != nil && (!a.Enabled || a.ConnectionLimit > 0)
}
