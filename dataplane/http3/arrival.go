package http3

import (
	"encoding/binary"
	"hash/maphash"
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

// The arrivals are kept by exactly the client address, in a table of
// arrivalSets sets of arrivalWays entries each, the set a hash of the
// address keyed at random per process (arrivalSeed): clients whose
// hashes meet share a set and keep their own
// entries; a set that is full gives up its oldest entry (the one noted
// least recently) [M: a connection whose entry was given up, four other
// clients of its set noted after it, before its own ConnContext ran has
// no arrival (0), as an unknown one]. The table is the listener's:
// nothing is allocated per packet.
const (
	arrivalSets = 256
	arrivalWays = 4
)

type arrivalConn struct {
	*net.UDPConn
	batch *ipv4.PacketConn
	on    atomic.Bool
	mu    sync.Mutex
	seq   uint32 // the last entry's note, for the oldest of a set
	sets  [arrivalSets][arrivalWays]arrivalSlot
}

// arrivalSlot is one client's arrival; seq 0: empty.
type arrivalSlot struct {
	from netip.AddrPort
	ifx  int32
	seq  uint32
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
		c.put(unmapped(a.AddrPort()), ifx)
	}
}

// put notes that the client at from arrived on ifx: in its own entry of
// its set, else an empty one, else the set's oldest.
func (c *arrivalConn) put(from netip.AddrPort, ifx int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if c.seq == 0 { // 0 marks an empty entry
		c.seq = 1
	}
	set := &c.sets[slotOf(from)]
	var e *arrivalSlot
	for i := range set {
		s := &set[i]
		if s.seq != 0 && s.from == from {
			e = s
			break
		}
		if e == nil || e.seq != 0 && (s.seq == 0 || c.seq-s.seq > c.seq-e.seq) {
			e = s // the first empty entry, else the oldest (seq wraps: the age is what counts)
		}
	}
	e.from, e.ifx, e.seq = from, int32(ifx), c.seq
}

// arrival is the interface the handshake of the client at from arrived
// on; 0 when not known (off, not noted, its entry taken since). It is
// read once, when the connection is made: a connection that migrates
// (a new client address, short-header packets only) keeps its
// handshake's arrival [M].
func (c *arrivalConn) arrival(from netip.AddrPort) int {
	if !c.on.Load() {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	set := &c.sets[slotOf(from)]
	for i := range set {
		if s := &set[i]; s.seq != 0 && s.from == from {
			return int(s.ifx)
		}
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

// arrivalSeed keys the sets' hash, made at random when the process
// starts: a client cannot choose addresses and ports that meet in one
// set (and so push a connection's arrival out of its four entries
// before its connection is made) without knowing it.
var arrivalSeed = maphash.MakeSeed()

// slotOf is the set of the client at from in this process's table.
func slotOf(from netip.AddrPort) int { return slotWith(arrivalSeed, from) }

// slotWith is the set of the client at from under seed: maphash over
// its 16-byte address and port, on the stack (no allocation; about as
// much as one 18-byte maphash.Bytes, some nanoseconds).
func slotWith(seed maphash.Seed, from netip.AddrPort) int {
	var b [18]byte
	a := from.Addr().As16()
	copy(b[:16], a[:])
	binary.BigEndian.PutUint16(b[16:], from.Port())
	return int(maphash.Bytes(seed, b[:]) % arrivalSets)
}

func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
