//go:build !linux

package sflow

import (
	"errors"
	"sync/atomic"
)

// PacketSampler samples a VLAN's frames; only Linux's packet sockets
// can, elsewhere StartPacketSampler fails.
type PacketSampler struct {
	// Samples counts the frames sampled.
	Samples atomic.Uint64
}

// StartPacketSampler fails: packet sampling needs Linux's packet
// sockets.
func StartPacketSampler(a *Agent, id, rate uint32, ifaces []string) (*PacketSampler, error) {
	return nil, errors.New("sflow: VLAN packet sampling needs Linux")
}

// Close does nothing.
func (s *PacketSampler) Close() {}
