package control

import (
	"fmt"
	"net"
	"os"
	"os/user"
	"strconv"
)

// Peer is who is on the other end of a control connection, as the kernel
// reports it. The user name is what the daemon records as the author of
// each change, so it comes from the credentials, never from the client.
type Peer struct {
	PID  int32
	UID  uint32
	GID  uint32
	User string
}

// AllowSameUserOrRoot is the default policy: the daemon's own user and root
// may talk to it, nobody else. The socket file is 0600 too; this check is
// what still holds when the socket is reached through a wider directory or
// a deliberately loosened mode.
func AllowSameUserOrRoot(p Peer) error {
	own := uint32(os.Getuid())
	if p.UID == own || p.UID == 0 {
		return nil
	}
	return fmt.Errorf("permission denied: user %s (uid %d) may not use this ltmd (it runs as uid %d)", p.User, p.UID, own)
}

// peerOf reads the connection's credentials from the kernel.
func peerOf(c net.Conn) (Peer, error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return Peer{}, fmt.Errorf("peer credentials need a unix socket, not %T", c)
	}
	p, err := peerCred(uc)
	if err != nil {
		return Peer{}, err
	}
	p.User = userName(p.UID)
	return p, nil
}

// userName resolves a uid to a login name, falling back to the number so a
// user missing from the password database is still recorded.
func userName(uid uint32) string {
	id := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(id); err == nil && u.Username != "" {
		return u.Username
	}
	return id
}
