//go:build !linux && !darwin

package control

import (
	"errors"
	"net"
)

// peerCred is unavailable here; the server refuses peers it cannot identify.
func peerCred(*net.UnixConn) (Peer, error) {
	return Peer{}, errors.New("peer credentials are not supported on this system")
}
