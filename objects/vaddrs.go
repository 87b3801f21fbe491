package objects

import (
	"net/netip"
	"strings"
)

// CompleteVirtualAddresses keeps the ltm virtual-address objects in step
// with the virtual servers, as BIG-IP does: the first virtual server on an
// address creates the address's object (named for the address, in the
// virtual's folder), and a change that takes away the last virtual server
// of an address deletes its object unless its auto-delete is false. An
// address object created by hand with no virtual server stays. Why: tmsh
// users list, show and modify the virtual addresses BIG-IP made for them
// (a traffic group, arp, a connection limit), and expect a saved
// configuration to hold them. Wildcard destinations make none. (Deleting
// an address object that virtual servers still use is refused by
// CheckDelete; a configuration loaded without one gets it back here.)
func CompleteVirtualAddresses(s *Schema, old, cfg *Config) {
	vk, ak := s.Kind("ltm virtual"), s.Kind("ltm virtual-address")
	if vk == nil || ak == nil {
		return
	}
	// One pass over the objects, in no order (what is made or deleted
	// does not depend on it): a commit of a big configuration pays this
	// every time.
	var vas []*Object
	now := map[string]string{}
	for _, o := range cfg.objs {
		switch o.Kind {
		case vk:
			if key, name, ok := VirtualServerAddress(o); ok {
				now[key] = name
			}
		case ak:
			vas = append(vas, o)
		}
	}
	have := map[string]*Object{} // partition + address -> object
	for _, a := range vas {
		if a.Str("address") == "" {
			// Created by name alone: the name is the address, and BIG-IP
			// lists it as the address too.
			short := AddressOf(a)
			if _, err := netip.ParseAddr(strings.SplitN(short, "%", 2)[0]); err == nil {
				a = a.Clone()
				if a.Props == nil {
					a.Props = map[string]*Value{}
				}
				a.Props["address"] = &Value{Str: short}
				cfg.Put(a)
			}
		}
		have[AddressKey(a)] = a
	}
	for key, name := range now {
		if have[key] != nil || cfg.Get(ak, name) != nil {
			continue
		}
		if CheckName(ak, name) != nil {
			continue
		}
		addr := name[strings.LastIndexByte(name, '/')+1:]
		mask := "255.255.255.255"
		if strings.Contains(addr, ":") {
			mask = "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
		}
		// What BIG-IP writes for an address it made (bigip.conf).
		o := &Object{Kind: ak, Name: name, Props: map[string]*Value{
			"address": {Str: addr}, "arp": {Str: "enabled"}, "icmp-echo": {Str: "enabled"},
			"mask": {Str: mask}, "traffic-group": {Str: DefaultTrafficGroup},
		}}
		// [M] An address made in a sys folder (an application's
		// folder, as iApps and AS3 make them) inherits the folder's
		// traffic group (CompleteTrafficGroups writes it); one in a
		// partition's top folder has traffic-group-1.
		if folder := name[:strings.LastIndexByte(name, '/')]; strings.Count(folder, "/") > 1 && cfg.Get(s.Kind("sys folder"), folder) != nil {
			o.Props["inherited-traffic-group"] = &Value{Str: "true"}
		}
		cfg.Put(o)
	}
	if old == nil {
		return
	}
	var before map[string]string // read only when an address lost its use
	for key, a := range have {
		if _, used := now[key]; used {
			continue
		}
		if before == nil {
			before = virtualAddressesUsed(vk, old)
		}
		if _, was := before[key]; !was || a.Str("auto-delete") == "false" {
			continue
		}
		cfg.Delete(a)
	}
}

// virtualOn is the first virtual server (by name) on the address whose
// AddressKey is key, or nil.
func virtualOn(s *Schema, cfg *Config, key string) *Object {
	vk := s.Kind("ltm virtual")
	if vk == nil {
		return nil
	}
	for _, v := range cfg.Of(vk) {
		if k, _, ok := VirtualServerAddress(v); ok && k == key {
			return v
		}
	}
	return nil
}

// virtualAddressesUsed maps each virtual server address key to the name
// its virtual-address object takes.
func virtualAddressesUsed(vk *Kind, cfg *Config) map[string]string {
	used := map[string]string{}
	for _, v := range cfg.objs {
		if v.Kind != vk {
			continue
		}
		if key, name, ok := VirtualServerAddress(v); ok {
			used[key] = name
		}
	}
	return used
}

// VirtualServerAddress is a virtual server's address key (as AddressKey
// gives an address object's: equal keys are one address) and the name
// its address object takes when BIG-IP creates it; ok is false for a
// wildcard or unreadable destination.
func VirtualServerAddress(v *Object) (key, name string, ok bool) {
	d, err := ParseDest(v.Str("destination"))
	if err != nil || d.Any {
		return "", "", false
	}
	folder := d.Folder
	if folder == "" {
		folder = "/" + Partition(v.Name)
	}
	name = folder + "/" + d.host()
	return Partition(name) + " " + d.host(), name, true
}

// AddressOf is the address a virtual-address object stands for: its
// address property, else its name, which BIG-IP makes the address.
func AddressOf(a *Object) string {
	if addr := a.Str("address"); addr != "" {
		return addr
	}
	return a.Name[strings.LastIndexByte(a.Name, '/')+1:]
}

// AddressKey is a virtual-address object's partition and address, as
// VirtualServerAddress keys a virtual server's.
func AddressKey(a *Object) string {
	addr := AddressOf(a)
	if ip, err := netip.ParseAddr(strings.SplitN(addr, "%", 2)[0]); err == nil {
		// The same address written another way (::0:1 for ::1).
		rd := ""
		if i := strings.IndexByte(addr, '%'); i >= 0 {
			rd = addr[i:]
		}
		addr = ip.String() + rd
	}
	return Partition(a.Name) + " " + addr
}
