package daemon

import (
	"fmt"
	"net"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A virtual's VLANs and the interfaces of each VLAN.
var (
	virtualVLANs         = ltmVirtual.MustProp("vlans")
	virtualVLANsDisabled = ltmVirtual.MustProp("vlans-disabled")
	netVLAN              = schema.MustKind("net vlan")
	netVLANInterfaces    = netVLAN.MustProp("interfaces")
	netVLANTag           = netVLAN.MustProp("tag")
	// A gtm listener's, which act as a virtual's.
	listenerVLANs         = gtmListener.MustProp("vlans")
	listenerVLANsDisabled = gtmListener.MustProp("vlans-disabled")
)

// vlanTags is each net vlan's tag by the index of its interfaces, for
// LINK::vlan_id; an interface the host lacks is left out (a virtual
// naming its VLAN is refused by vlans), and one in two VLANs answers the
// first by name [M].
func vlanTags(cfg *objects.Config) map[int]int {
	out := map[int]int{}
	for _, vo := range cfg.Of(netVLAN) {
		tag, err := strconv.Atoi(netVLANTag.Effective(cfg, vo))
		if err != nil {
			continue
		}
		for _, ifn := range vlanInterfaces(netVLANInterfaces.Str(vo)) {
			if ifc, err := net.InterfaceByName(ifn); err == nil {
				if _, dup := out[ifc.Index]; !dup {
					out[ifc.Index] = tag
				}
			}
		}
	}
	return out
}

// vlans sets v's VLAN list: vlans-enabled with VLANs listens only on their
// interfaces, vlans-disabled with VLANs on every other; vlans-disabled
// with none (the default) leaves v listening everywhere at no cost. A
// VLAN's interfaces are Linux interface names, resolved to indexes now:
// one that the host does not have refuses the commit, as BIG-IP refuses
// an interface it does not have.
func (t *translator) vlans(o *objects.Object, v *dataplane.Virtual) bool {
	f, msg := vlanFilter(t.cfg, t.s, o, virtualVLANs, virtualVLANsDisabled)
	if msg != "" {
		return t.refuse("ltm virtual %s: %s", o.Name, msg)
	}
	v.VLANs = f
	return true
}

// vlanFilter is the VLAN list of o (a virtual server or a gtm listener)
// as its vlans and vlans-disabled properties say, nil for every VLAN; a
// VLAN or an interface that does not exist gives the reason to refuse
// the commit instead.
func vlanFilter(cfg *objects.Config, s *objects.Schema, o *objects.Object, list, flag *objects.Prop) (*dataplane.VLANFilter, string) {
	disabled := flag.Str(o) != "vlans-enabled"
	var names []string
	if lv := list.Get(o); lv != nil {
		names = lv.List
	}
	if disabled && len(names) == 0 {
		return nil, ""
	}
	f := &dataplane.VLANFilter{Disabled: disabled}
	var devs []string
	for _, n := range names {
		vo := cfg.Lookup(s, []string{netVLAN.Key()}, n)
		if vo == nil && !strings.HasPrefix(n, "/") {
			// A plain list (ltm snat, ltm nat) keeps the name as typed.
			vo = cfg.Get(netVLAN, objects.FullPath("/"+objects.Partition(o.Name), n))
		}
		if vo == nil {
			return nil, fmt.Sprintf("vlan %s does not exist", n)
		}
		for _, ifn := range vlanInterfaces(netVLANInterfaces.Str(vo)) {
			ifc, err := net.InterfaceByName(ifn)
			if err != nil {
				return nil, fmt.Sprintf("net vlan %s: interface %s does not exist on this system (openltm's VLAN interfaces are Linux interface names)", vo.Name, ifn)
			}
			f.Ifindex = append(f.Ifindex, ifc.Index)
			devs = append(devs, ifc.Name)
		}
	}
	if !disabled && len(devs) == 1 {
		f.Device = devs[0]
	}
	return f, ""
}

// vlanInterfaces is the interface names of a net vlan's interfaces block,
// "{ eth1 { untagged } eth2 { } }" or "{ eth1 eth2 }": the words at the
// block's first level.
func vlanInterfaces(raw string) []string {
	raw = strings.NewReplacer("{", " { ", "}", " } ").Replace(raw)
	var out []string
	depth := 0
	for _, w := range strings.Fields(raw) {
		switch w {
		case "{":
			depth++
		case "}":
			depth--
		default:
			if depth == 1 {
				out = append(out, w)
			}
		}
	}
	return out
}
