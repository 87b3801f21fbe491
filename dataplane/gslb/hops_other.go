//go:build !linux

package gslb

import "net"

// recvTTL: the reply's TTL is read on Linux only; elsewhere a probe
// reports no hop count.
func recvTTL(*net.UDPConn, bool) bool { return false }

func ttlOf([]byte) int { return -1 }
