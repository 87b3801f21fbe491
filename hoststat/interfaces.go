package hoststat

import (
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
)

// Interface is one of the host's network interfaces as show net
// interface lists it: its state, MTU, addresses and link.
type Interface struct {
	Name string
	// Up is the administrative state (the interface was brought up);
	// Running that the link carries traffic too (the kernel's
	// IFF_RUNNING, operstate up).
	Up, Running bool
	Loopback    bool
	MTU         int
	MAC         string // "" for an interface without one (loopback, tunnels)
	Addrs       []netip.Prefix
	// SpeedMbps is the link's speed, and FullDuplex its duplex, from
	// /sys/class/net; SpeedMbps is 0 where the driver does not know
	// (virtual interfaces, a link that is down).
	SpeedMbps  int
	FullDuplex bool
}

// sysClassNet is where the link speed and duplex are read.
var sysClassNet = "/sys/class/net"

// ParseSpeed reads /sys/class/net/IF/speed: megabits per second, or -1
// (or nothing, or an error reading it) where the driver does not know.
func ParseSpeed(b []byte) int {
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

// ReadInterfaces lists the host's interfaces now, in the kernel's order.
func ReadInterfaces() ([]Interface, error) {
	ifs, err := net.Interfaces()
	if err != nil {
		return nil, err
	}
	out := make([]Interface, 0, len(ifs))
	for _, i := range ifs {
		it := Interface{Name: i.Name, MTU: i.MTU, MAC: i.HardwareAddr.String(),
			Up: i.Flags&net.FlagUp != 0, Running: i.Flags&net.FlagRunning != 0, Loopback: i.Flags&net.FlagLoopback != 0}
		if addrs, err := i.Addrs(); err == nil {
			for _, a := range addrs {
				if n, ok := a.(*net.IPNet); ok {
					if ip, ok := netip.AddrFromSlice(n.IP); ok {
						ones, _ := n.Mask.Size()
						it.Addrs = append(it.Addrs, netip.PrefixFrom(ip.Unmap(), ones))
					}
				}
			}
		}
		if b, err := os.ReadFile(sysClassNet + "/" + i.Name + "/speed"); err == nil {
			it.SpeedMbps = ParseSpeed(b)
		}
		if b, err := os.ReadFile(sysClassNet + "/" + i.Name + "/duplex"); err == nil {
			it.FullDuplex = strings.TrimSpace(string(b)) == "full"
		}
		out = append(out, it)
	}
	return out, nil
}
