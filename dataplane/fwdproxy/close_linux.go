package fwdproxy

import (
	"net"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// Linux's TCP_FIN_WAIT1 and TCP_CLOSE_WAIT (tcpi_state).
const (
	tcpFinWait1  = 4
	tcpCloseWait = 8
)

// sockState reads c's TCP_INFO; open is false once c is closed.
func sockState(c net.Conn) (st sockInfo, open bool) {
	err := rawsock.Control(c, func(fd int) error {
		ti, err := unix.GetsockoptTCPInfo(fd, unix.IPPROTO_TCP, unix.TCP_INFO)
		if err != nil {
			return err
		}
		st.zeroWindow = ti.Snd_wnd == 0 && ti.Notsent_bytes > 0
		st.finWait1 = ti.State == tcpFinWait1
		st.closeWait = ti.State == tcpCloseWait
		return nil
	})
	return st, err == nil
}
