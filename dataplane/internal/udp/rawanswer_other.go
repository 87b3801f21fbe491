//go:build !linux

package udp

import (
	"errors"
	"net/netip"
)

// rawAnswers is Linux's only: off Linux no virtual listens on every
// port.
type rawAnswers struct{}

func (r *rawAnswers) close() {}

func (r *rawAnswers) ok(netip.AddrPort) bool { return false }

func (r *rawAnswers) send(_, _ netip.AddrPort, _ []byte) error {
	return errors.New("raw answers need Linux")
}
