package udp

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"unsafe"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/pktfilter"
	"golang.org/x/sys/unix"
)

// On Linux datagrams move in batches: a listener or a leg takes every
// datagram queued on its socket with one recvmmsg(2) (up to batchSize),
// and what one batch sends to one socket leaves with one sendmmsg(2). A
// proxy under load then makes a few system calls per batch rather than
// two per datagram; a lone datagram costs what it did one at a time.

// batchSize is how many datagrams one system call moves at most.
const batchSize = 16

// slots is one batch's memory: headers, addresses and a full-size buffer
// per datagram. Batches are pooled and held only while a batch is being
// handled, so an idle socket holds none.
type slots struct {
	hdrs  [batchSize]unix.Mmsghdr
	iovs  [batchSize]unix.Iovec
	names [batchSize]unix.RawSockaddrInet6
	// ctl is each datagram's control messages, read only by a listener
	// whose virtual has a VLAN list to check (SetVLANs: the arrival
	// interface) or listens on every port (the original destination,
	// anyport_linux.go).
	ctl [batchSize][ctlLen]byte
	buf [batchSize * maxDatagram]byte
}

var slotPool = sync.Pool{New: func() any {
	s := new(slots)
	for i := range s.hdrs {
		s.iovs[i].Base = &s.buf[i*maxDatagram]
		s.hdrs[i].Hdr.Iov = &s.iovs[i]
		s.hdrs[i].Hdr.SetIovlen(1)
	}
	return s
}}

// payload is datagram i of a batch read.
func (s *slots) payload(i int) []byte {
	return s.buf[i*maxDatagram : i*maxDatagram+int(s.hdrs[i].Len)]
}

// recv reads up to batchSize datagrams from fd (non-blocking), with
// their control messages when ctl is set.
func (s *slots) recv(fd uintptr, ctl bool) (int, unix.Errno) {
	for i := range s.hdrs {
		h := &s.hdrs[i].Hdr
		h.Name = (*byte)(unsafe.Pointer(&s.names[i]))
		h.Namelen = unix.SizeofSockaddrInet6
		h.Flags = 0
		if ctl {
			h.Control = &s.ctl[i][0]
			h.SetControllen(ctlLen)
		} else {
			h.Control, h.Controllen = nil, 0
		}
		h.Iov = &s.iovs[i]
		// The last batch may have pointed its headers at other memory (a
		// payload a rule replaced): every read goes to the batch's own.
		s.iovs[i].Base = &s.buf[i*maxDatagram]
		s.iovs[i].SetLen(maxDatagram)
	}
	n, _, e := unix.RawSyscall6(unix.SYS_RECVMMSG, fd, uintptr(unsafe.Pointer(&s.hdrs[0])), batchSize, unix.MSG_DONTWAIT, 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), 0
}

// sendmmsg sends hdrs on fd (non-blocking) and returns how many were
// sent. A full socket buffer loses what did not fit, as a full queue
// loses datagrams; a datagram the kernel refuses (an ICMP error queued on
// a connected socket, reported now) is skipped and the rest go on.
func sendmmsg(fd uintptr, hdrs []unix.Mmsghdr) int {
	pos, ok := 0, 0
	for pos < len(hdrs) {
		n, _, e := unix.RawSyscall6(unix.SYS_SENDMMSG, fd, uintptr(unsafe.Pointer(&hdrs[pos])), uintptr(len(hdrs)-pos), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			pos += int(n)
			ok += int(n)
		case unix.EINTR:
		case unix.EAGAIN:
			return ok
		default:
			pos++
		}
	}
	return ok
}

// addrOf reads a kernel socket address.
func addrOf(sa *unix.RawSockaddrInet6) netip.AddrPort {
	b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))
	port := binary.BigEndian.Uint16(b[2:4])
	if sa.Family == unix.AF_INET {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	}
	return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr).Unmap(), port)
}

// sockaddr writes a in the kernel's layout for a socket of the family of
// local, returning its length.
func sockaddr(sa *unix.RawSockaddrInet6, a, local netip.AddrPort) uint32 {
	*sa = unix.RawSockaddrInet6{}
	b := (*[unix.SizeofSockaddrInet6]byte)(unsafe.Pointer(sa))
	if local.Addr().Is4() {
		sa.Family = unix.AF_INET
		binary.BigEndian.PutUint16(b[2:4], a.Port())
		a4 := a.Addr().Unmap().As4()
		copy(b[4:8], a4[:])
		return unix.SizeofSockaddrInet4
	}
	sa.Family = unix.AF_INET6
	binary.BigEndian.PutUint16(b[2:4], a.Port())
	sa.Addr = a.Addr().As16()
	return unix.SizeofSockaddrInet6
}

// flowIO is the client's address in the kernel's layout, for sendmmsg.
type flowIO struct {
	sa    unix.RawSockaddrInet6
	salen uint32
}

func (f *flow) initIO() { f.salen = sockaddr(&f.sa, f.Client, f.Local) }

// listenerIO is the listener reader's batch state: the batch read, the
// client datagrams it queued for legs, and the headers that send them.
type listenerIO struct {
	readFn func(uintptr) bool
	b      *slots
	vl     *config.VLANFilter // the VLAN list of the batch read, nil for none
	n      int
	rerr   unix.Errno
	queued [batchSize]struct {
		lg *leg
		b  []byte
	}
	nq    int
	hdrs  [batchSize]unix.Mmsghdr
	iovs  [batchSize]unix.Iovec
	batch []unix.Mmsghdr // the headers of one leg's send
}

// serve reads the listener's datagrams, a batch at a time, until it is
// closed. One goroutine per listener reads, so the client side of a flow
// is never handled twice at once.
func (l *Listener) serve() {
	defer close(l.done)
	rc, err := l.conn.SyscallConn()
	if err != nil {
		return
	}
	l.readFn = l.readBatch
	for i := range l.hdrs {
		l.hdrs[i].Hdr.Iov = &l.iovs[i]
		l.hdrs[i].Hdr.SetIovlen(1)
	}
	for {
		if err := rc.Read(l.readFn); err != nil {
			return // closed
		}
		vl := l.vl // nil: no VLAN list, nothing checked (SetVLANs)
		if vl == nil {
			l.arrIf = 0
		}
		if vs, snap := l.dnsSnap(); l.rerr == 0 && snap != nil {
			l.answerDNS(vs, snap, vl)
		} else if l.rerr == 0 {
			for i := 0; i < l.n; i++ {
				if l.b.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0 {
					continue // larger than any UDP datagram: cannot happen
				}
				if vl != nil && !l.arrivedOn(vl, i) {
					continue
				}
				var to netip.AddrPort // where the client sent it, on every port only
				if l.any {
					if to = origDst(l.ctl(i)); !to.IsValid() {
						continue // not steered: cannot happen
					}
				}
				l.datagram(addrOf(&l.b.names[i]), to, l.b.payload(i))
			}
			l.flush()
		}
		slotPool.Put(l.b)
		l.b = nil
	}
}

// readBatch is the listener's read callback: a batch, or false (the
// batch given back) when nothing is queued.
func (l *Listener) readBatch(fd uintptr) bool {
	if l.b == nil {
		l.b = slotPool.Get().(*slots)
	}
	l.vl = l.vlans.Load()
	n, e := l.b.recv(fd, l.vl != nil || l.any)
	if e == unix.EAGAIN {
		slotPool.Put(l.b)
		l.b = nil
		return false
	}
	l.n, l.rerr = n, e
	return true
}

// forward queues a client datagram for its leg; the batch's datagrams
// leave when it has been read through (flush).
func (l *Listener) forward(lg *leg, b []byte) {
	q := &l.queued[l.nq]
	q.lg, q.b = lg, b
	l.nq++
}

// flush sends the queued datagrams, one sendmmsg per leg, in the order
// they came.
func (l *Listener) flush() {
	for i := 0; i < l.nq; i++ {
		lg := l.queued[i].lg
		if lg == nil {
			continue
		}
		k := 0
		for j := i; j < l.nq; j++ {
			if q := &l.queued[j]; q.lg == lg {
				l.iovs[k].Base = unsafe.SliceData(q.b)
				l.iovs[k].SetLen(len(q.b))
				l.hdrs[k].Hdr.Name, l.hdrs[k].Hdr.Namelen = nil, 0
				k++
				if j > i {
					q.lg = nil
				}
			}
		}
		l.batch = l.hdrs[:k]
		lg.sendBatch(l.batch)
	}
	for i := 0; i < l.nq; i++ {
		l.queued[i].lg, l.queued[i].b = nil, nil
	}
	l.nq = 0
}

// legIO is a leg's batch state: reading answers (on the leg's goroutine)
// and sending client datagrams (on the listener's reader).
type legIO struct {
	readFn   func(uintptr) bool
	b        *slots
	n        int
	rerr     unix.Errno
	writeFn  func(uintptr) bool
	out      []unix.Mmsghdr
	sent     int
	toFn     func(uintptr) bool // the answers to the client, on the listener's socket
	answers  []unix.Mmsghdr
	answered int
}

func (lg *leg) initIO() {
	lg.readFn, lg.writeFn, lg.toFn = lg.readBatch, lg.writeBatch, lg.answerBatch
}

// send writes one datagram to the leg's server at once (what the rules
// send or let through, which may come from the leg's own goroutine while
// the listener's reader sends a batch) and counts it.
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

// sendBatch sends hdrs to the leg's server and counts what left.
func (lg *leg) sendBatch(hdrs []unix.Mmsghdr) {
	lg.out, lg.sent = hdrs, 0
	lg.rc.Write(lg.writeFn)
	var n uint64
	for i := 0; i < lg.sent; i++ {
		n += hdrs[i].Hdr.Iov.Len
	}
	lg.out = nil
	if lg.sent > 0 {
		lg.countOut(n, uint64(lg.sent))
	}
}

// countOut counts n bytes in pk datagrams sent to the server.
func (lg *leg) countOut(n, pk uint64) {
	lg.rec.BytesOut.Add(n)
	lg.rec.PktsOut.Add(pk)
	if m := lg.member; m != nil {
		m.Stats.BytesOut.Add(n)
		m.Stats.PktsOut.Add(pk)
		m.Node.Stats.BytesOut.Add(n)
		m.Node.Stats.PktsOut.Add(pk)
		lg.pool.Stats.BytesOut.Add(n)
		lg.pool.Stats.PktsOut.Add(pk)
	}
}

func (lg *leg) writeBatch(fd uintptr) bool {
	lg.sent = sendmmsg(fd, lg.out)
	return true
}

// readBatch is the leg's read callback.
func (lg *leg) readBatch(fd uintptr) bool {
	if lg.b == nil {
		lg.b = slotPool.Get().(*slots)
	}
	n, e := lg.b.recv(fd, false)
	if e == unix.EAGAIN {
		slotPool.Put(lg.b)
		lg.b = nil
		return false
	}
	lg.n, lg.rerr = n, e
	return true
}

// readLoop passes the server's answers to the client, a batch at a time,
// until the leg is closed. An ICMP error from the server (port
// unreachable) is skipped: the client's next datagram may find it
// listening.
func (lg *leg) readLoop() {
	for {
		err := lg.rc.Read(lg.readFn)
		if err != nil || (lg.rerr != 0 && lg.rerr != unix.ECONNREFUSED) {
			if lg.b != nil {
				slotPool.Put(lg.b)
				lg.b = nil
			}
			return
		}
		if lg.rerr == 0 {
			lg.answer()
		}
		slotPool.Put(lg.b)
		lg.b = nil
	}
}

// answer counts a batch of answers, runs the rules on each, and sends
// what is left to the client from the virtual's address.
func (lg *leg) answer() {
	f, s := lg.f, lg.b
	f.Touch(f.l.e.now.Load())
	k := 0
	var bytes uint64
	bye := false // terminate-on-bye: a BYE's final answer passes (sipproxy.go)
	for i := 0; i < lg.n; i++ {
		if f.tftp && !lg.tftpFrom(addrOf(&s.names[i])) {
			continue // not the member's transfer (tftp.go)
		}
		b := s.payload(i)
		lg.rec.BytesIn.Add(uint64(len(b)))
		lg.rec.PktsIn.Add(1)
		if m := lg.member; m != nil {
			m.Stats.In(len(b), 1)
			m.Node.Stats.In(len(b), 1)
			lg.pool.Stats.In(len(b), 1)
		}
		if len(b) == 0 && !f.snap.Cfg.AllowNoPayload {
			continue // allow-no-payload disabled (udpopts.go)
		}
		got := b // as the member sent it
		if f.sip != nil {
			var done bool
			b, done = f.sip.fromMember(lg, b)
			bye = bye || done
		}
		if f.rs != nil {
			var fwd bool
			if b, fwd = f.serverData(lg, b); !fwd {
				continue
			}
			if f.snap.Cfg.SIP != nil {
				if b, fwd = f.sipFromMember(lg, b); !fwd { // sip.go
					continue
				}
				if b, fwd = f.sipOut(lg, b); !fwd {
					continue
				}
			}
		}
		if f.gtp {
			var fwd bool
			if b, fwd = f.gtpAnswer(lg, b); !fwd { // gtp.go
				continue
			}
		}
		if f.rad != nil {
			var fwd bool
			if b, fwd = f.radiusOut(b, got); !fwd { // radius.go
				continue
			}
		}
		if f.dhcp != nil {
			var fwd bool
			if b, fwd = f.dhcpOut(b); !fwd { // dhcp.go
				continue
			}
		}
		if p := f.pace.Load(); p != nil {
			p.toClient.Send(f, b) // UDP::max_rate (pace.go)
			continue
		}
		if fb := f.bwc.Load(); fb != nil {
			fb.toClient.Send(f, b) // bwc.go
			continue
		}
		h := &s.hdrs[k].Hdr
		s.iovs[k].Base = unsafe.SliceData(b)
		s.iovs[k].SetLen(len(b))
		h.Iov = &s.iovs[k]
		h.Name, h.Namelen = (*byte)(unsafe.Pointer(&f.sa)), f.salen
		bytes += uint64(len(b))
		k++
	}
	if bye && f.retireLeg(lg) { // sipproxy.go
		defer f.closeLeg(lg) // once the answer has left
	}
	if k == 0 {
		return
	}
	lg.answers, lg.answered = s.hdrs[:k], 0
	if f.raw {
		lg.answerRaw(s.iovs[:k]) // ip-forward on every port (rawanswer_linux.go)
	} else {
		f.orc.Write(lg.toFn) // the listener's socket, or the flow's own on every port
	}
	n := lg.answered
	lg.answers = nil
	if n == 0 {
		return
	}
	if f.rs != nil && f.snap.EvMask&config.SIPDoneBits != 0 {
		for i := 0; i < n; i++ {
			f.sipSent(lg, unsafe.Slice(s.iovs[i].Base, s.iovs[i].Len)) // sip.go
		}
	}
	if n < k {
		bytes = 0
		for i := 0; i < n; i++ {
			bytes += s.iovs[i].Len
		}
	}
	f.BytesOut.Add(bytes)
	f.PktsOut.Add(uint64(n))
	f.vs.Stats.BytesOut.Add(bytes)
	f.vs.Stats.PktsOut.Add(uint64(n))
	f.vs.Prof.Conns.DgOut.Add(uint64(n))
}

func (lg *leg) answerBatch(fd uintptr) bool {
	lg.answered = sendmmsg(fd, lg.answers)
	return true
}

// answerDNS hands a batch to the virtual's dns profile (dataplane/dnsvs).
// Each query is a new datagram to the packet filters (no flow is made),
// matched while filtering is on: a reject is answered with an ICMP port
// unreachable, a discard dropped.
func (l *Listener) answerDNS(vs *state.Virtual, snap *state.VirtualSnap, vl *config.VLANFilter) {
	pf := snap.PF.Load() != nil // once per batch
	for i := 0; i < l.n; i++ {
		if l.b.hdrs[i].Hdr.Flags&unix.MSG_TRUNC != 0 {
			continue
		}
		if vl != nil && !l.arrivedOn(vl, i) {
			continue
		}
		a := addrOf(&l.b.names[i])
		client := netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
		conn, local := l.conn, l.addr
		if l.any {
			// On every port: the query's own destination, and its
			// answers from there (dnsany.go).
			if local = origDst(l.ctl(i)); !local.IsValid() {
				continue // not steered: cannot happen
			}
			var err error
			if conn, err = l.dnsReply(local, snap); err != nil {
				vs.Prof.Conns.DgDropped.Add(1)
				continue
			}
		}
		if pf {
			switch snap.FilterQuery(client, local, l.arrIf) {
			case pktfilter.Accept:
			case pktfilter.Reject:
				l.e.env.Unreach.PortUnreachable(client, local, l.b.payload(i))
				continue
			default:
				continue
			}
		}
		snap.DNS.ServeUDP(vs, snap, conn, client, local, l.b.payload(i), l.arrIf) // arrIf: 0 without a VLAN list (serve)
	}
}

// ctl is the control messages of datagram i of the batch.
func (l *Listener) ctl(i int) []byte {
	return l.b.ctl[i][:min(int(l.b.hdrs[i].Hdr.Controllen), ctlLen)]
}

// arrivedOn reports whether datagram i of the batch arrived on an
// interface the listener's virtual is enabled on; one that did not is
// dropped, and counted with the udp profile's dropped datagrams.
func (l *Listener) arrivedOn(vl *config.VLANFilter, i int) bool {
	l.arrIf = rawsock.PktinfoIf(l.ctl(i))
	if vl.Admits(l.arrIf) {
		return true
	}
	if vs := l.virtual(); vs != nil {
		vs.Prof.Conns.DgDropped.Add(1)
	}
	return false
}

// SetVLANs makes the listener's sockets take datagrams only from the
// interfaces its virtual's VLAN list admits (vl; nil: from every one),
// at each commit; the caller holds the plane's lock. Enabled on one
// interface, each socket is bound to it (SO_BINDTODEVICE) and the kernel
// does the rest; otherwise (several interfaces, a disabled list, or a
// binding the kernel refused) the sockets report each datagram's arrival
// interface (IP_PKTINFO) and the reader checks it. Without a list the
// reader pays one nil check per batch.
func (l *Listener) SetVLANs(vl *config.VLANFilter) {
	if l.vlanSet && l.vlanCfg.Equal(vl) {
		return
	}
	l.vlanSet, l.vlanCfg = true, vl
	dev := ""
	if vl != nil {
		dev = vl.Device
	}
	for _, x := range l.all() {
		check := vl != nil
		x.rc.Control(func(fd uintptr) {
			if dev != "" || x.bound != "" {
				if err := rawsock.BindDevice(int(fd), dev); err == nil {
					x.bound = dev
					check = check && dev == ""
				}
			}
			rawsock.SetArrival(int(fd), check)
		})
		if check {
			x.vlans.Store(vl)
		} else {
			x.vlans.Store(nil)
		}
	}
}
