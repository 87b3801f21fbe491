package http3

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"golang.org/x/net/ipv4"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
)

// The arrival interface of a QUIC connection, for a VLAN-limited SNAT's
// or NAT's choice of its member connections' source: quic-go reads the
// packets itself and keeps their IP_PKTINFO to itself, but it reads them
// through the batchConn its PacketConn gives, if it gives one. arrivalConn
// is that PacketConn: the UDP socket, whose batches it reads with
// x/net/ipv4 as quic-go would, and, while on (SetArrival), notes the
// arrival of each long-header packet (a handshake's: an Initial among
// them) by its client address, where ConnContext finds it for Conn.Arrival.
// A short-header packet (a connection under way) is passed over.

// arrivalSlots bounds what is noted: one slot per hash of the client
// address, a later client taking the slot of an earlier one [M: a
// connection whose slot another client's handshake took before its own
// ConnContext ran has no arrival (0), as an unknown one].
const arrivalSlots = 256

type arrivalConn struct {
	*net.UDPConn
	batch *ipv4.PacketConn
	on    atomic.Bool
	mu    sync.Mutex
	slots [arrivalSlots]arrivalSlot
}

type arrivalSlot struct {
	from netip.AddrPort
	ifx  int32
}

func newArrivalConn(c *net.UDPConn) *arrivalConn {
	return &arrivalConn{UDPConn: c, batch: ipv4.NewPacketConn(c)}
}

// ReadBatch is quic-go's read of a batch of packets (its batchConn).
// Off: one atomic load per batch more than quic-go's own read.
func (c *arrivalConn) ReadBatch(ms []ipv4.Message, flags int) (int, error) {
	n, err := c.batch.ReadBatch(ms, flags)
	if n > 0 && c.on.Load() {
		c.note(ms[:n])
	}
	return n, err
}

// note keeps the arrival of each long-header packet of ms.
func (c *arrivalConn) note(ms []ipv4.Message) {
	for i := range ms {
		m := &ms[i]
		if m.N == 0 || len(m.Buffers) == 0 || m.Buffers[0][0]&0x80 == 0 {
			continue
		}
		a, ok := m.Addr.(*net.UDPAddr)
		if !ok {
			continue
		}
		ifx := rawsock.PktinfoIf(m.OOB[:m.NN])
		if ifx == 0 {
			continue
		}
		from := unmapped(a.AddrPort())
		c.mu.Lock()
		s := &c.slots[slotOf(from)]
		s.from, s.ifx = from, int32(ifx)
		c.mu.Unlock()
	}
}

// arrival is the interface the handshake of the client at from arrived
// on; 0 when not known (off, not noted, its slot taken since).
func (c *arrivalConn) arrival(from netip.AddrPort) int {
	if !c.on.Load() {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if s := &c.slots[slotOf(from)]; s.from == from {
		return int(s.ifx)
	}
	return 0
}

// setArrival turns the noting on or off, and with it the socket's
// IP_PKTINFO (which quic-go then reads too: it answers from the address
// and through the interface the packet came to, as it does on a
// wildcard socket).
func (c *arrivalConn) setArrival(on bool) {
	if c.on.Swap(on) == on {
		return
	}
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { rawsock.SetArrival(int(fd), on) })
	}
}

func slotOf(from netip.AddrPort) int {
	h := uint32(from.Port())
	for _, b := range from.Addr().As16() {
		h = h*31 + uint32(b)
	}
	return int(h % arrivalSlots)
}

func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
