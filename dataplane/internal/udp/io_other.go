//go:build !linux

package udp

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"syscall"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// On systems without recvmmsg(2) and sendmmsg(2), datagrams are read and
// written one system call each.

// legIO is a leg's read state: the callback made once per leg so a read
// allocates nothing, and the pooled buffer held only while a datagram is
// being handled.
type legIO struct {
	readFn func(uintptr) bool
	buf    *[]byte
	n      int
	rerr   error
	from   netip.AddrPort // the sender, read on TFTP legs only
}

// flowIO and listenerIO need nothing here.
type (
	flowIO     struct{}
	listenerIO struct{}
)

func (f *flow) initIO() {}

// SetVLANs does nothing here: VLAN lists are Linux interfaces, checked
// on Linux only.
func (l *Listener) SetVLANs(*config.VLANFilter) {}

func (lg *leg) initIO() { lg.readFn = lg.read }

var bufPool = sync.Pool{New: func() any { b := make([]byte, maxDatagram); return &b }}

// serve reads the listener's datagrams until it is closed. One goroutine
// per listener reads, so the client side of a flow is never handled twice
// at once.
func (l *Listener) serve() {
	defer close(l.done)
	buf := make([]byte, maxDatagram)
	for {
		n, client, err := l.conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue // an ICMP error queued on the socket, a truncated read: go on
		}
		if vs, snap := l.dnsSnap(); snap != nil {
			snap.DNS.ServeUDP(vs, snap, l.conn, netip.AddrPortFrom(client.Addr().Unmap(), client.Port()), l.addr, buf[:n], 0)
			continue
		}
		l.datagram(client, netip.AddrPort{}, buf[:n])
	}
}

// read is the leg's read callback: one datagram into a pooled buffer, or
// false (the buffer given back) when none is queued.
func (lg *leg) read(fd uintptr) bool {
	if lg.buf == nil {
		lg.buf = bufPool.Get().(*[]byte)
	}
	var n int
	var err error
	if lg.f.tftp {
		n, lg.from, err = recvFrom(int(fd), *lg.buf) // tftp.go: the transfer's port
	} else {
		n, err = rawsock.Read(int(fd), *lg.buf)
	}
	if err == syscall.EAGAIN {
		bufPool.Put(lg.buf)
		lg.buf = nil
		return false
	}
	lg.n, lg.rerr = n, err
	return true
}

// readLoop passes the server's answers to the client until the leg is
// closed. An ICMP error from the server (port unreachable) is skipped: the
// client's next datagram may find it listening.
func (lg *leg) readLoop() {
	for {
		err := lg.rc.Read(lg.readFn)
		if err != nil || (lg.rerr != nil && lg.rerr != syscall.ECONNREFUSED) {
			if lg.buf != nil {
				bufPool.Put(lg.buf)
				lg.buf = nil
			}
			return
		}
		if lg.rerr == nil {
			lg.fromServer((*lg.buf)[:lg.n])
		}
		bufPool.Put(lg.buf)
		lg.buf = nil
	}
}

// forward sends a client datagram to its leg at once.
func (l *Listener) forward(lg *leg, b []byte) { lg.send(b) }

// send writes one datagram to the leg's server and counts it.
func (lg *leg) send(b []byte) {
	if lg.f.tftp {
		lg.tftpSend(b) // the leg is not connected (tftp.go)
		return
	}
	if _, err := lg.conn.Write(b); err != nil {
		return // a refused or full socket loses the datagram, as UDP does
	}
	lg.countOut(uint64(len(b)), 1)
}

// countOut counts n bytes in pk datagrams sent to the server.
func (lg *leg) countOut(n, pk uint64) {
	lg.rec.BytesOut.Add(n)
	lg.rec.PktsOut.Add(pk)
	if m := lg.member; m != nil {
		m.Stats.Out(int(n), pk)
		m.Node.Stats.Out(int(n), pk)
		lg.pool.Stats.Out(int(n), pk)
	}
}

// recvFrom is recvfrom(2): a datagram and its sender.
func recvFrom(fd int, b []byte) (int, netip.AddrPort, error) {
	n, sa, err := syscall.Recvfrom(fd, b, 0)
	if err != nil {
		return 0, netip.AddrPort{}, err
	}
	switch a := sa.(type) {
	case *syscall.SockaddrInet4:
		return n, netip.AddrPortFrom(netip.AddrFrom4(a.Addr), uint16(a.Port)), nil
	case *syscall.SockaddrInet6:
		return n, netip.AddrPortFrom(netip.AddrFrom16(a.Addr).Unmap(), uint16(a.Port)), nil
	}
	return n, netip.AddrPort{}, nil
}

// fromServer counts one answer and sends it to the client.
func (lg *leg) fromServer(b []byte) {
	f := lg.f
	if f.tftp && !lg.tftpFrom(lg.from) {
		return // not the member's transfer (tftp.go)
	}
	f.Touch(f.l.e.now.Load())
	lg.rec.BytesIn.Add(uint64(len(b)))
	lg.rec.PktsIn.Add(1)
	if m := lg.member; m != nil {
		m.Stats.In(len(b), 1)
		m.Node.Stats.In(len(b), 1)
		lg.pool.Stats.In(len(b), 1)
	}
	if len(b) == 0 && !f.snap.Cfg.AllowNoPayload {
		return // allow-no-payload disabled (udpopts.go)
	}
	got := b // as the member sent it
	if f.sip != nil {
		var bye bool
		if b, bye = f.sip.fromMember(lg, b); bye && f.retireLeg(lg) {
			defer f.closeLeg(lg) // terminate-on-bye, once the answer has left
		}
	}
	if f.rs != nil {
		var fwd bool
		if b, fwd = f.serverData(lg, b); !fwd {
			return
		}
		if f.snap.Cfg.SIP != nil {
			if b, fwd = f.sipFromMember(lg, b); !fwd { // sip.go
				return
			}
			if b, fwd = f.sipOut(lg, b); !fwd {
				return
			}
		}
	}
	if f.gtp {
		var fwd bool
		if b, fwd = f.gtpAnswer(lg, b); !fwd { // gtp.go
			return
		}
	}
	if f.rad != nil {
		var fwd bool
		if b, fwd = f.radiusOut(b, got); !fwd { // radius.go
			return
		}
	}
	if f.dhcp != nil {
		var fwd bool
		if b, fwd = f.dhcpOut(b); !fwd { // dhcp.go
			return
		}
	}
	if p := f.pace.Load(); p != nil {
		p.toClient.Send(f, b) // UDP::max_rate (pace.go)
		return
	}
	if fb := f.bwc.Load(); fb != nil {
		fb.toClient.Send(f, b) // bwc.go
		return
	}
	f.toClient(b)
	f.sipSent(lg, b)
}

// setOrigDst fails off Linux: a virtual on every port needs Linux's
// sk_lookup, which the plane cannot attach here.
func setOrigDst(int, bool) error {
	return errors.New("a UDP virtual on every port needs Linux")
}

// replySocket fails off Linux (setOrigDst).
func replySocket(netip.AddrPort, *state.VirtualSnap) (*net.UDPConn, syscall.RawConn, error) {
	return nil, nil, setOrigDst(0, false)
}
