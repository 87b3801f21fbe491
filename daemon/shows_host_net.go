package daemon

import (
	"fmt"
	"io"
	"strconv"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/hoststat"
	"github.com/openltm/openltm/objects"
)

// interfaceStatus is BIG-IP's word for an interface's state: up, down
// (brought up, no link), disabled (not brought up).
func interfaceStatus(i hoststat.Interface) string {
	switch {
	case !i.Up:
		return "disabled"
	case !i.Running:
		return "down"
	}
	return "up"
}

// interfaceMedia is the Media column. [M] BIG-IP names the medium
// (10000T-FD, 100TX-FD); the host tells only the speed and duplex, so
// openltm prints 10000-FD. "none" where the driver does not know (a
// virtual interface, loopback, a link that is down), as BIG-IP prints
// for an interface without a link.
func interfaceMedia(i hoststat.Interface) string {
	if i.SpeedMbps <= 0 {
		return "none"
	}
	d := "HD"
	if i.FullDuplex {
		d = "FD"
	}
	return strconv.Itoa(i.SpeedMbps) + "-" + d
}

// showInterfaces answers show net interface [NAME...] [raw]
// [all-properties]: the host's interfaces in BIG-IP's Net::Interface
// table, counters from /proc/net/dev. [M] all-properties adds the
// multicast, the drops and errors by direction, collisions, MTU and MAC
// columns, then a Net::Interface Addresses table of each interface's
// addresses.
func showInterfaces(w io.Writer, s *Session, o hostOpts) error {
	ifs, err := hoststat.ReadInterfaces()
	if err != nil {
		return objects.Invalid("show net interface: %v", err)
	}
	counters := map[string]hoststat.Counters{}
	if cs, err := hoststat.ReadNetDev(); err == nil {
		for _, c := range cs {
			counters[c.Name] = c
		}
	}
	if n := missingName(o.names, func(n string) bool {
		for _, i := range ifs {
			if i.Name == n {
				return true
			}
		}
		return false
	}); n != "" {
		return objects.NotFound(s.e.schema.Kind("net interface"), n)
	}
	num := func(v uint64) string {
		if o.raw {
			return strconv.FormatUint(v, 10)
		}
		return render.Scale(v)
	}
	two := func(a, b string) hostColumn { return hostColumn{head: []string{a, b}, right: true} }
	cols := []hostColumn{{head: []string{"Name"}}, {head: []string{"Status"}, right: true},
		two("Bits", "In"), two("Bits", "Out"), two("Pkts", "In"), two("Pkts", "Out")}
	if o.all {
		cols = append(cols, two("Mcast", "In"), two("Drops", "In"), two("Drops", "Out"), two("Errs", "In"), two("Errs", "Out"),
			hostColumn{head: []string{"Collisions"}, right: true}, hostColumn{head: []string{"Media"}, right: true},
			hostColumn{head: []string{"MTU"}, right: true}, hostColumn{head: []string{"MAC Address"}, right: true})
	} else {
		cols = append(cols, hostColumn{head: []string{"Drops"}, right: true}, hostColumn{head: []string{"Errs"}, right: true},
			hostColumn{head: []string{"Media"}, right: true})
	}
	t := &hostTable{cols: cols}
	addrs := &hostTable{cols: []hostColumn{{head: []string{"Name"}}, {head: []string{"Address"}}, {head: []string{"Status"}}}}
	for _, i := range ifs {
		if !nameMatches(o.names, i.Name) {
			continue
		}
		c := counters[i.Name]
		row := []string{i.Name, interfaceStatus(i), num(c.RxBytes * 8), num(c.TxBytes * 8), num(c.RxPackets), num(c.TxPackets)}
		if o.all {
			mac := i.MAC
			if mac == "" {
				mac = "none"
			}
			row = append(row, num(c.RxMulticast), num(c.RxDrop), num(c.TxDrop), num(c.RxErrs), num(c.TxErrs), num(c.TxCollisions),
				interfaceMedia(i), strconv.Itoa(i.MTU), mac)
			for _, a := range i.Addrs {
				addrs.add(i.Name, a.String(), interfaceStatus(i))
			}
		} else {
			row = append(row, num(c.RxDrop+c.TxDrop), num(c.RxErrs+c.TxErrs), interfaceMedia(i))
		}
		t.add(row...)
	}
	if err := t.writeTitled(w, "Net::Interface"); err != nil {
		return err
	}
	if !o.all {
		return nil
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return err
	}
	return addrs.writeTitled(w, "Net::Interface Addresses")
}

// routeName is a route's name and destination as BIG-IP prints them:
// "default" for a default route, a link-local prefix with its
// interface (fe80::%vlan4094/64).
func routeName(r hoststat.Route) string {
	d := r.Destination
	switch {
	case d.Bits() == 0:
		return "default"
	case d.Addr().Is6() && d.Addr().IsLinkLocalUnicast():
		return fmt.Sprintf("%s%%%s/%d", d.Addr(), r.Interface, d.Bits())
	}
	return d.String()
}

// routeRow is one route's Net::Routes row. [M] /proc/net/route does not
// say who made a route: a route on a link prints Origin "connected" as
// BIG-IP prints its own, a route through a gateway "kernel" (openltm
// does not manage routes; the host's are the ones its traffic follows).
func routeRow(r hoststat.Route) []string {
	name := routeName(r)
	switch {
	case r.Reject:
		return []string{name, name, "reject", "none", "kernel"}
	case r.Gateway.IsValid():
		return []string{name, name, "gw", r.Gateway.String(), "kernel"}
	}
	return []string{name, name, "interface", r.Interface, "connected"}
}

// showRoutes answers show net route [NAME...]: the kernel's routing
// table, IPv4 then IPv6, in BIG-IP's Net::Routes table.
func showRoutes(w io.Writer, s *Session, o hostOpts) error {
	routes, err := hoststat.ReadRoutes()
	if err != nil {
		return objects.Invalid("show net route: %v", err)
	}
	return writeRoutes(w, s, routes, o.names)
}

func writeRoutes(w io.Writer, s *Session, routes []hoststat.Route, names []string) error {
	if n := missingName(names, func(n string) bool {
		for _, r := range routes {
			if routeName(r) == n {
				return true
			}
		}
		return false
	}); n != "" {
		return objects.NotFound(s.e.schema.Kind("net route"), n)
	}
	t := &hostTable{cols: []hostColumn{{head: []string{"Name"}}, {head: []string{"Destination"}}, {head: []string{"Type"}},
		{head: []string{"NextHop"}}, {head: []string{"Origin"}}}}
	for _, r := range routes {
		if nameMatches(names, routeName(r)) {
			t.add(routeRow(r)...)
		}
	}
	return t.writeTitled(w, "Net::Routes")
}
