//go:build !linux

package sklookup

import "errors"

// Steer is not available off Linux.
type Steer struct{}

// Open always fails off Linux: sk_lookup is a Linux BPF program type.
func Open() (*Steer, error) {
	return nil, errors.New("steering every port of an address needs Linux (BPF sk_lookup)")
}

// Sync does nothing off Linux.
func (s *Steer) Sync(wild []Wildcard, specific []Specific) error { return nil }

// Close does nothing off Linux.
func (s *Steer) Close() error { return nil }

// Pass does nothing off Linux.
func (s *Steer) Pass(sp Specific) error { return nil }

// Unpass does nothing off Linux.
func (s *Steer) Unpass(sp Specific) {}

// PassedCount is 0 off Linux.
func (s *Steer) PassedCount() int { return 0 }
