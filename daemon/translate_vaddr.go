package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

var vaddrConnLimit = ltmVirtualAddr.MustProp("connection-limit")

// virtualAddress gives v the ltm virtual-address its destination is on,
// when that address acts on it: enabled no takes every virtual server on
// the address out of service, connection-limit caps their client
// connections together (BIG-IP's virtual address). An address that does
// neither is left out, so that its virtuals' connections pay nothing for
// it.
func (t *translator) virtualAddress(o *objects.Object, v *dataplane.Virtual) {
	key, name, ok := objects.VirtualServerAddress(o)
	if !ok {
		return
	}
	a := t.cfg.Get(ltmVirtualAddr, name)
	if a == nil || objects.AddressKey(a) != key {
		// An address object named otherwise (created by hand under
		// another name): found by its address, once per translation.
		if t.vaddrs == nil {
			t.vaddrs = map[string]*objects.Object{}
			for _, x := range t.cfg.Of(ltmVirtualAddr) {
				t.vaddrs[objects.AddressKey(x)] = x
			}
		}
		if a = t.vaddrs[key]; a == nil {
			return
		}
	}
	va := &dataplane.VirtualAddress{
		Name:            a.Name,
		Enabled:         vaddrEnabled.Effective(t.cfg, a) != "no",
		ConnectionLimit: atoi(vaddrConnLimit.Effective(t.cfg, a)),
	}
	if va.Acts() {
		v.Address = va
	}
}
