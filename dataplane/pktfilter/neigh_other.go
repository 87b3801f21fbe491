//go:build !linux

package pktfilter

import (
	"net"
	"net/netip"
)

// Neighbour is nil: only Linux's neighbour table is read.
func Neighbour(netip.Addr) net.HardwareAddr { return nil }
