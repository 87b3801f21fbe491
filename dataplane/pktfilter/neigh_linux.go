package pktfilter

import (
	"encoding/binary"
	"net"
	"net/netip"
	"syscall"
)

// Neighbour is the MAC address the kernel's neighbour table (ARP for
// IPv4, NDP for IPv6: `ip neigh`) has for a, nil when it has none that
// is usable (incomplete, failed), as for a client on the loopback
// interface, which has no link layer. It dumps the table over rtnetlink, a system call per
// new connection, and is asked only while net packet-filter-trusted
// names MAC addresses.
func Neighbour(a netip.Addr) net.HardwareAddr {
	a = a.Unmap()
	if !a.IsValid() {
		return nil
	}
	fam := syscall.AF_INET
	if a.Is6() {
		fam = syscall.AF_INET6
	}
	b, err := syscall.NetlinkRIB(syscall.RTM_GETNEIGH, fam)
	if err != nil {
		return nil
	}
	msgs, err := syscall.ParseNetlinkMessage(b)
	if err != nil {
		return nil
	}
	for _, m := range msgs {
		if m.Header.Type != syscall.RTM_NEWNEIGH {
			continue
		}
		if mac := neighMAC(m.Data, a); mac != nil {
			return mac
		}
	}
	return nil
}

// Neighbour states (linux/neighbour.h) whose address is not usable.
const (
	nudIncomplete = 0x01
	nudFailed     = 0x20
	ndaDst        = 1
	ndaLLAddr     = 2
	sizeofNdMsg   = 12
)

// neighMAC reads one RTM_NEWNEIGH message's body (struct ndmsg and its
// attributes): the link-layer address when its destination is a and its
// state usable, else nil.
func neighMAC(d []byte, a netip.Addr) net.HardwareAddr {
	if len(d) < sizeofNdMsg {
		return nil
	}
	state := binary.NativeEndian.Uint16(d[8:10])
	if state&(nudIncomplete|nudFailed) != 0 {
		return nil
	}
	var dst netip.Addr
	var mac net.HardwareAddr
	for rest := d[sizeofNdMsg:]; len(rest) >= 4; {
		l := int(binary.NativeEndian.Uint16(rest[0:2]))
		typ := binary.NativeEndian.Uint16(rest[2:4])
		if l < 4 || l > len(rest) {
			return nil
		}
		v := rest[4:l]
		switch typ {
		case ndaDst:
			dst, _ = netip.AddrFromSlice(v)
		case ndaLLAddr:
			mac = net.HardwareAddr(v)
		}
		l = (l + 3) &^ 3 // RTA_ALIGN
		if l > len(rest) {
			break
		}
		rest = rest[l:]
	}
	if dst.Unmap() != a || len(mac) != 6 {
		return nil
	}
	return append(net.HardwareAddr(nil), mac...)
}
