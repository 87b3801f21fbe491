package rtsp

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// listenUDP binds a data channel's socket to a, an address of an IPv6
// network that no interface holds included (sockopt.FreeBind6).
func listenUDP(a *net.UDPAddr) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: sockopt.FreeBind6}
	c, err := lc.ListenPacket(context.Background(), "udp", a.String())
	if err != nil {
		return nil, err
	}
	return c.(*net.UDPConn), nil
}

// pairTries bounds the tries for a free even/odd port pair.
const pairTries = 32

// DefaultIdle is idle-timeout's default: a data channel with no datagram
// either way for that long is closed.
const DefaultIdle = 300 * time.Second

// ListenPair opens the UDP sockets of a transport's channels on addr:
// want's ports when they are free (the gateway keeps the ports the
// endpoints chose, as BIG-IP does when it can [M]), else ports the
// system chooses, RTP's even and RTCP's the next when there are two
// (RFC 3550 11).
func ListenPair(addr netip.Addr, want Ports) ([]*net.UDPConn, error) {
	n := want.Count()
	if want.First != 0 && (n == 1 || want.Last == want.First+1) {
		if cs, err := listenAt(addr, want.First, n); err == nil {
			return cs, nil
		}
	}
	var err error
	for range pairTries {
		var c *net.UDPConn
		if c, err = listenUDP(net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, 0))); err != nil {
			return nil, err
		}
		p := uint16(c.LocalAddr().(*net.UDPAddr).Port)
		if n == 1 {
			return []*net.UDPConn{c}, nil
		}
		if p%2 != 0 || p == 65534 {
			c.Close()
			continue
		}
		var c2 *net.UDPConn
		if c2, err = listenUDP(net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, p+1))); err == nil {
			return []*net.UDPConn{c, c2}, nil
		}
		c.Close()
	}
	if err == nil {
		err = errors.New("no free even/odd port pair")
	}
	return nil, err
}

func listenAt(addr netip.Addr, first uint16, n int) ([]*net.UDPConn, error) {
	var cs []*net.UDPConn
	for i := range n {
		c, err := listenUDP(net.UDPAddrFromAddrPort(netip.AddrPortFrom(addr, first+uint16(i))))
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeAll(cs []*net.UDPConn) {
	for _, c := range cs {
		c.Close()
	}
}

// LocalPorts is the ports sockets are bound to.
func LocalPorts(cs []*net.UDPConn) Ports {
	addrs := make([]netip.AddrPort, len(cs))
	for i, c := range cs {
		addrs[i] = c.LocalAddr().(*net.UDPAddr).AddrPort()
	}
	return PortsOf(addrs)
}

// Channel is the data channels of one SETUP: for RTP (and RTCP) a socket
// on the virtual's address toward the client and one on the server
// side's address toward the member. The member's datagrams reach the
// client from the virtual's address and the port the client was told
// (server_port as rewritten), the client's reach the member from the
// server side's address and the port the member was told (client_port
// as rewritten).
type Channel struct {
	// member and client are the sockets toward each end; memberPeer and
	// clientPeer the ends' addresses and ports (a port 0 is learnt from
	// the end's first datagram).
	member, client         []*net.UDPConn
	memberPeer, clientPeer []netip.AddrPort
	peerMu                 sync.Mutex

	idle   time.Duration
	last   atomic.Int64
	once   sync.Once
	done   chan struct{}
	onDone func()
	// release gives back what the member side's sockets were bound to
	// (NewChannelOn), once they are closed.
	release func()
	// Datagrams counts the datagrams relayed, both ways.
	Datagrams atomic.Uint64
	// tracked is the channels' flows in a connection table (Track), one
	// per port (RTP, RTCP); nil when untracked. cnt counts them.
	tracked atomic.Pointer[[]*flows.Flow]
	table   *flows.Table
	cnt     flows.Counter
}

// NewChannel opens the member side of a SETUP whose client asked for
// want at client: the sockets whose ports the member is told.
func NewChannel(server netip.Addr, client netip.Addr, want Ports) (*Channel, error) {
	cs, err := ListenPair(server, want)
	if err != nil {
		return nil, err
	}
	ch := &Channel{member: cs, done: make(chan struct{})}
	for i := range cs {
		ch.clientPeer = append(ch.clientPeer, netip.AddrPortFrom(client, want.Port(i)))
	}
	return ch, nil
}

// NewChannelOn is NewChannel with the member side's sockets cs already
// bound (to an lsn pool's translations); release runs once the channel
// is closed and they are.
func NewChannelOn(cs []*net.UDPConn, client netip.Addr, want Ports, release func()) *Channel {
	ch := &Channel{member: cs, done: make(chan struct{}), release: release}
	for i := range cs {
		ch.clientPeer = append(ch.clientPeer, netip.AddrPortFrom(client, want.Port(i)))
	}
	return ch
}

// MemberPorts is the ports the member is told in client_port.
func (ch *Channel) MemberPorts() Ports { return LocalPorts(ch.member) }

// Open opens the client side once the member answered with server_port
// got at member, and starts relaying: the ports the client is told in
// server_port are returned.
func (ch *Channel) Open(vaddr, member netip.Addr, got Ports, idle time.Duration) (Ports, error) {
	want := got
	if want.First == 0 {
		want = PortsOf(ch.clientPeer)
	}
	if want.Count() != len(ch.member) {
		want = Ports{First: want.First}
		if len(ch.member) == 2 {
			want.Last = want.First + 1
		}
	}
	cs, err := ListenPair(vaddr, want)
	if err != nil {
		return Ports{}, err
	}
	ch.client = cs
	for i := range ch.member {
		var p uint16
		if got.First != 0 && i < got.Count() {
			p = got.Port(i)
		}
		ch.memberPeer = append(ch.memberPeer, netip.AddrPortFrom(member, p))
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	ch.idle = idle
	ch.last.Store(time.Now().UnixNano())
	for i := range ch.member {
		go ch.pipe(ch.member[i], ch.client[i], &ch.memberPeer[i], &ch.clientPeer[i], i, false)
		go ch.pipe(ch.client[i], ch.member[i], &ch.clientPeer[i], &ch.memberPeer[i], i, true)
	}
	return LocalPorts(cs), nil
}

// Track lists an open channel's relays in table as flows of virtual (one
// per port: RTP, and RTCP when there is one) until the channel closes,
// so that show sys connection lists them (the client and the virtual's
// port it was told on the client side, the server side's port and the
// member's on the server side) and delete sys connection closes the
// channel; cnt (nil: none) counts them and their datagrams. Called once,
// after Open.
func (ch *Channel) Track(table *flows.Table, virtual string, cnt flows.Counter) {
	ch.peerMu.Lock()
	defer ch.peerMu.Unlock()
	select {
	case <-ch.done:
		return
	default:
	}
	fs := make([]*flows.Flow, len(ch.client))
	for i := range ch.client {
		f := &flows.Flow{Client: ch.clientPeer[i], Local: udpAddrOf(ch.client[i]), Virtual: virtual, Protocol: "udp"}
		f.SetIdleTimeout(ch.idle)
		f.Closer = func(bool) { ch.Close() }
		f.AddLeg(&flows.Leg{Client: udpAddrOf(ch.member[i]), Server: ch.memberPeer[i]})
		if cnt != nil {
			cnt.TryOpen(0)
		}
		table.Add(f)
		fs[i] = f
	}
	ch.table, ch.cnt = table, cnt
	ch.tracked.Store(&fs)
}

// udpAddrOf is the address c is bound to.
func udpAddrOf(c *net.UDPConn) netip.AddrPort {
	ap := c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// untrack takes the channel's flows out of their table. The caller
// holds peerMu.
func (ch *Channel) untrack() {
	p := ch.tracked.Swap(nil)
	if p == nil {
		return
	}
	for _, f := range *p {
		ch.table.Remove(f)
		if ch.cnt != nil {
			ch.cnt.Close()
		}
	}
}

// note counts a datagram of n bytes relayed on port i's flow, toMember
// from the client (nothing when untracked).
func (ch *Channel) note(i int, toMember bool, n int) {
	p := ch.tracked.Load()
	if p == nil || i >= len(*p) {
		return
	}
	f := (*p)[i]
	f.Touch(time.Now().UnixNano())
	leg := f.Legs()[0]
	if toMember {
		f.BytesIn.Add(uint64(n))
		f.PktsIn.Add(1)
		leg.BytesOut.Add(uint64(n))
		leg.PktsOut.Add(1)
		if ch.cnt != nil {
			ch.cnt.In(n, 1)
		}
		return
	}
	f.BytesOut.Add(uint64(n))
	f.PktsOut.Add(1)
	leg.BytesIn.Add(uint64(n))
	leg.PktsIn.Add(1)
	if ch.cnt != nil {
		ch.cnt.Out(n, 1)
	}
}

// ClientPorts is the ports on the virtual's address the client is told
// in server_port (nothing before Open).
func (ch *Channel) ClientPorts() Ports { return LocalPorts(ch.client) }

// pipe relays src's datagrams from *from's address to *to through dst,
// on port i's flow (toMember: the client's datagrams).
func (ch *Channel) pipe(src, dst *net.UDPConn, from, to *netip.AddrPort, i int, toMember bool) {
	buf := make([]byte, 64<<10)
	for {
		src.SetReadDeadline(time.Unix(0, ch.last.Load()).Add(ch.idle))
		n, ap, err := src.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if time.Since(time.Unix(0, ch.last.Load())) < ch.idle {
					continue
				}
				ch.Close()
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			select {
			case <-ch.done:
				return
			default:
				continue // an ICMP error of an earlier send
			}
		}
		ap = netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
		ch.peerMu.Lock()
		if ap.Addr() != from.Addr() {
			ch.peerMu.Unlock()
			continue // only the end's own address [M]
		}
		if from.Port() == 0 {
			*from = ap
		}
		dest := *to
		ch.peerMu.Unlock()
		if dest.Port() == 0 {
			continue
		}
		ch.last.Store(time.Now().UnixNano())
		ch.Datagrams.Add(1)
		ch.note(i, toMember, n)
		dst.WriteToUDPAddrPort(buf[:n], dest)
	}
}

// Close ends the channels and frees their ports.
func (ch *Channel) Close() {
	ch.once.Do(func() {
		close(ch.done)
		closeAll(ch.member)
		closeAll(ch.client)
		ch.peerMu.Lock()
		f := ch.onDone
		ch.untrack()
		ch.peerMu.Unlock()
		if f != nil {
			f()
		}
		if ch.release != nil {
			ch.release()
		}
	})
}

// Done is closed once the channel is.
func (ch *Channel) Done() <-chan struct{} { return ch.done }

// AddrOf is a connection's address as a netip.AddrPort (ftpalg's).
func AddrOf(a net.Addr) netip.AddrPort { return ftpalg.AddrOf(a) }

// ClientPeers is the client's addresses and ports of the channels (its
// client_port as it wrote it).
func (ch *Channel) ClientPeers() []netip.AddrPort {
	ch.peerMu.Lock()
	defer ch.peerMu.Unlock()
	return append([]netip.AddrPort(nil), ch.clientPeer...)
}
