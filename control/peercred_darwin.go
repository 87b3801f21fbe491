package control

import (
	"net"

	"golang.org/x/sys/unix"
)

// peerCred asks the kernel who opened the other end (LOCAL_PEERCRED).
func peerCred(c *net.UnixConn) (Peer, error) {
	raw, err := c.SyscallConn()
	if err != nil {
		return Peer{}, err
	}
	var cred *unix.Xucred
	var credErr error
	if err := raw.Control(func(fd uintptr) {
		cred, credErr = unix.GetsockoptXucred(int(fd), unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
	}); err != nil {
		return Peer{}, err
	}
	if credErr != nil {
		return Peer{}, credErr
	}
	p := Peer{UID: cred.Uid}
	if cred.Ngroups > 0 {
		p.GID = cred.Groups[0]
	}
	return p, nil
}
