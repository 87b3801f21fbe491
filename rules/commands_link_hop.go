package rules

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// LINK::lasthop and LINK::nexthop ?id|name|type?: the link-layer hop of
// the connection's peer on the event's side (lasthop) and on the other
// side (nexthop), as F5 shows them (client side: the client's hop, then
// the member's; server side the other way round). A proxy on sockets
// never sees its peers' frames, so the hop is what the host would send
// to: the interface the connection uses, and the neighbour-table entry
// of the peer on it, or of the route's gateway for a peer behind a
// router (the hop its packets come through when routing is symmetric
// [M]). On the loopback interface the hop is its all-zero address, type
// LOOPBACK; on another interface type VLAN (openltm's VLANs are the
// host's interfaces) and name the interface's [M]. nexthop on the client
// side before the server connection is F5's documented broadcast
// address ff:ff:ff:ff:ff:ff (type and name: UNKNOWN and "" [M]). IPv6
// peers off the loopback, and a peer with no neighbour entry, are a Tcl
// error.

// linkHop is one side's hop: the interface and the peer on it.
type linkHop struct {
	iface *net.Interface
	peer  netip.Addr
}

func cmdLinkHop(name string, next bool) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		what := "id"
		if len(args) == 2 {
			what = args[1].String()
		}
		if len(args) > 2 || what != "id" && what != "name" && what != "type" {
			return tcl.Empty, tcl.WrongArgs(name + " ?id|name|type?")
		}
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		server := s.side == ServerSide
		if next {
			server = !server
		}
		var hop linkHop
		if server {
			local, peer := c.Addr(EndServerLocal), c.Addr(EndServer)
			if !local.IsValid() || !peer.IsValid() {
				// No server connection yet.
				switch what {
				case "type":
					return tcl.Str("UNKNOWN"), nil
				case "name":
					return tcl.Empty, nil
				}
				return tcl.Str("ff:ff:ff:ff:ff:ff"), nil
			}
			hop, err = hopByAddr(local.Addr(), peer.Addr())
		} else {
			hop, err = clientHop(c)
		}
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		loop := hop.iface.Flags&net.FlagLoopback != 0
		switch what {
		case "type":
			if loop {
				return tcl.Str("LOOPBACK"), nil
			}
			return tcl.Str("VLAN"), nil
		case "name":
			return tcl.Str(hop.iface.Name), nil
		}
		if loop {
			return tcl.Str("00:00:00:00:00:00"), nil
		}
		mac, err := neighbourMAC(hop.iface.Name, hop.peer)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Str(mac), nil
	}
}

// clientHop is the client's side: the interface the connection arrived
// on when the system told (ArrivalConn), else the one holding the
// virtual's address.
func clientHop(c Conn) (linkHop, error) {
	peer := c.Addr(EndClient).Addr().Unmap()
	if ac, ok := c.(ArrivalConn); ok {
		if idx := ac.ArrivalIf(); idx > 0 {
			ifc, err := net.InterfaceByIndex(idx)
			if err == nil {
				return linkHop{ifc, peer}, nil
			}
		}
	}
	return hopByAddr(c.Addr(EndVirtual).Addr(), peer)
}

// hopByAddr finds the interface holding local (any loopback address:
// the loopback interface).
func hopByAddr(local, peer netip.Addr) (linkHop, error) {
	local, peer = local.Unmap(), peer.Unmap()
	ifs, err := net.Interfaces()
	if err != nil {
		return linkHop{}, err
	}
	for i := range ifs {
		ifc := &ifs[i]
		if local.IsLoopback() && ifc.Flags&net.FlagLoopback != 0 {
			return linkHop{ifc, peer}, nil
		}
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok {
				if ip, ok := netip.AddrFromSlice(n.IP); ok && ip.Unmap() == local {
					return linkHop{ifc, peer}, nil
				}
			}
		}
	}
	return linkHop{}, fmt.Errorf("no interface holds %s", local)
}

// neighbourMAC is the neighbour-table address of peer on dev, or of the
// gateway of dev's route to peer (IPv4: /proc/net/arp, /proc/net/route).
func neighbourMAC(dev string, peer netip.Addr) (string, error) {
	if !peer.Is4() {
		return "", errors.New("the neighbour table of IPv6 peers is not read")
	}
	if mac, ok := arpEntry(dev, peer); ok {
		return mac, nil
	}
	if gw, ok := routeGateway(dev, peer); ok {
		if mac, ok := arpEntry(dev, gw); ok {
			return mac, nil
		}
	}
	return "", fmt.Errorf("no neighbour entry for %s on %s", peer, dev)
}

// arpEntry looks a complete entry up in /proc/net/arp.
func arpEntry(dev string, a netip.Addr) (string, bool) {
	f, err := os.Open("/proc/net/arp")
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		// IP address, HW type, Flags, HW address, Mask, Device
		if len(fl) < 6 || fl[0] != a.String() || fl[5] != dev || fl[2] == "0x0" {
			continue
		}
		return fl[3], true
	}
	return "", false
}

// routeGateway is the gateway of the most specific route to a on dev in
// /proc/net/route (addresses in the kernel's byte order).
func routeGateway(dev string, a netip.Addr) (netip.Addr, bool) {
	f, err := os.Open("/proc/net/route")
	if err != nil {
		return netip.Addr{}, false
	}
	defer f.Close()
	a4 := a.As4()
	target := binary.LittleEndian.Uint32(a4[:])
	var best netip.Addr
	bestBits := -1
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fl := strings.Fields(sc.Text())
		// Iface, Destination, Gateway, Flags, RefCnt, Use, Metric, Mask
		if len(fl) < 8 || fl[0] != dev {
			continue
		}
		dst, ok1 := hexLE(fl[1])
		gw, ok2 := hexLE(fl[2])
		mask, ok3 := hexLE(fl[7])
		if !ok1 || !ok2 || !ok3 || gw == 0 || target&mask != dst {
			continue
		}
		bits := 0
		for m := mask; m != 0; m &= m - 1 {
			bits++
		}
		if bits > bestBits {
			var b [4]byte
			binary.LittleEndian.PutUint32(b[:], gw)
			best, bestBits = netip.AddrFrom4(b), bits
		}
	}
	return best, bestBits >= 0
}

// hexLE reads one of /proc/net/route's hexadecimal words.
func hexLE(s string) (uint32, bool) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 4 {
		return 0, false
	}
	return binary.BigEndian.Uint32(b), true
}
