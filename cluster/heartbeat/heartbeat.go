// Package heartbeat is BIG-IP's network failover: the devices of a device
// group send each other small UDP datagrams on their unicast addresses
// (`cm device NAME unicast-address { { ip A port P } }`, port 1026 by
// default), saying who they are, which traffic groups they are active for,
// whether they still reach the group's etcd cluster and which group
// generation they run, signed with the device's trust domain key when it
// has one. The cluster package decides failover from them while etcd is
// unreachable; this package only signs, sends, receives, checks and
// remembers the last datagram of each peer.
package heartbeat

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync"
	"time"
)

// Peer is a device the node exchanges beats with: its unicast addresses
// and, when it has a certificate of the trust domain, its public key (its
// beats must then be signed by it).
type Peer struct {
	Addrs []netip.AddrPort
	Key   *ecdsa.PublicKey
}

// DefaultPort is BIG-IP's network failover port.
const DefaultPort = 1026

// maxBeat bounds a datagram: one Ethernet frame is plenty for a device name,
// a few traffic groups and numbers.
const maxBeat = 1400

// Beat is one heartbeat.
type Beat struct {
	Device string `json:"device"`
	Group  string `json:"group"`
	// Seq grows with every beat a device sends, so a datagram delayed
	// behind a newer one is ignored.
	Seq uint64 `json:"seq"`
	// Boot tells a restarted device (whose Seq starts again) from a
	// delayed datagram.
	Boot int64 `json:"boot"`
	// Generation is the group generation the device runs.
	Generation uint64 `json:"gen"`
	// Active lists the traffic groups the device serves.
	Active []string `json:"active,omitempty"`
	// Etcd is true while the device surely holds its etcd lease: its
	// Active traffic groups are then the etcd election's.
	Etcd bool `json:"etcd"`
	// EtcdAge is how long ago (ms) the device last heard etcd answer a
	// lease renewal; -1 when it never did.
	EtcdAge int64 `json:"etcd_age_ms"`
	// Sig is the sender's ECDSA signature (SHA-256, ASN.1) of the beat's
	// JSON without Sig, when it has a key.
	Sig []byte `json:"sig,omitempty"`
}

// payload is what a beat's signature covers.
func payload(b Beat) ([]byte, error) {
	b.Sig = nil
	return json.Marshal(b)
}

// Heard is the last beat of a peer and when this device received it.
type Heard struct {
	Beat
	At   time.Time
	From netip.AddrPort
}

// Node sends this device's beats to its peers and keeps their last ones.
// Beats are accepted only from a device the node was told about
// (SetPeers), from one of that device's addresses, for the node's group,
// and signed by the device's key when the node knows it.
type Node struct {
	group string
	conns []*net.UDPConn

	mu    sync.Mutex
	peers map[string]Peer
	heard map[string]Heard
	key   *ecdsa.PrivateKey
	seq   uint64
	boot  int64
	wg    sync.WaitGroup
}

// Listen binds a UDP socket on each of the device's unicast addresses
// (none is allowed: the node then sends and hears nothing until SetAddrs).
func Listen(group string, addrs []netip.AddrPort) (*Node, error) {
	n := &Node{group: group, peers: map[string]Peer{}, heard: map[string]Heard{}, boot: time.Now().UnixNano()}
	if err := n.SetAddrs(addrs); err != nil {
		return nil, err
	}
	return n, nil
}

// SetAddrs makes the node listen on addrs, after a change of the device's
// unicast-address: sockets already bound to one of them stay, the others
// close. On error nothing changes.
func (n *Node) SetAddrs(addrs []netip.AddrPort) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	keep := map[*net.UDPConn]bool{}
	var conns, opened []*net.UDPConn
	for _, a := range addrs {
		if i := slices.IndexFunc(n.conns, func(c *net.UDPConn) bool { return localAddr(c) == a }); i >= 0 {
			keep[n.conns[i]] = true
			conns = append(conns, n.conns[i])
			continue
		}
		c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
		if err != nil {
			for _, o := range opened {
				o.Close()
			}
			return fmt.Errorf("network failover cannot listen on unicast address %s: %w", a, err)
		}
		opened = append(opened, c)
		conns = append(conns, c)
	}
	for _, c := range n.conns {
		if !keep[c] {
			c.Close()
		}
	}
	for _, c := range opened {
		n.wg.Add(1)
		go func() { defer n.wg.Done(); n.receive(c) }()
	}
	n.conns = conns
	return nil
}

func localAddr(c *net.UDPConn) netip.AddrPort { return c.LocalAddr().(*net.UDPAddr).AddrPort() }

// Addrs are the addresses the node listens on.
func (n *Node) Addrs() []netip.AddrPort {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []netip.AddrPort
	for _, c := range n.conns {
		out = append(out, localAddr(c))
	}
	return out
}

// SetKey makes the node sign its beats with the device's key (its trust
// domain certificate's).
func (n *Node) SetKey(k *ecdsa.PrivateKey) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.key = k
}

// SetPeers says which devices (by name) may send beats, with which key,
// and where this device sends its own.
func (n *Node) SetPeers(peers map[string]Peer) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.peers = map[string]Peer{}
	for d, p := range peers {
		n.peers[d] = Peer{Addrs: slices.Clone(p.Addrs), Key: p.Key}
	}
	for d := range n.heard {
		if _, ok := n.peers[d]; !ok {
			delete(n.heard, d)
		}
	}
}

// Send sends b to every address of every peer, from the node's first
// socket on the peer address's family. Seq and Group are filled in.
func (n *Node) Send(b Beat) {
	n.mu.Lock()
	n.seq++
	b.Seq, b.Boot, b.Group = n.seq, n.boot, n.group
	var to []netip.AddrPort
	for _, p := range n.peers {
		to = append(to, p.Addrs...)
	}
	conns := slices.Clone(n.conns)
	key := n.key
	n.mu.Unlock()
	b.Sig = nil
	if key != nil {
		p, err := payload(b)
		if err != nil {
			return
		}
		sum := sha256.Sum256(p)
		if b.Sig, err = ecdsa.SignASN1(rand.Reader, key, sum[:]); err != nil {
			return
		}
	}
	data, err := json.Marshal(b)
	if err != nil || len(data) > maxBeat {
		return
	}
	for _, a := range to {
		for _, c := range conns {
			if localAddr(c).Addr().Unmap().Is4() == a.Addr().Unmap().Is4() {
				_, _ = c.WriteToUDPAddrPort(data, a)
				break
			}
		}
	}
}

func (n *Node) receive(c *net.UDPConn) {
	buf := make([]byte, maxBeat+1)
	for {
		k, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		var b Beat
		if k > maxBeat || json.Unmarshal(buf[:k], &b) != nil {
			continue
		}
		n.accept(b, from, time.Now())
	}
}

// accept records a beat that passes the checks.
func (n *Node) accept(b Beat, from netip.AddrPort, at time.Time) bool {
	n.mu.Lock()
	defer n.mu.Unlock()
	if b.Group != n.group {
		return false
	}
	p, ok := n.peers[b.Device]
	if !ok || !slices.ContainsFunc(p.Addrs, func(a netip.AddrPort) bool { return a.Addr().Unmap() == from.Addr().Unmap() }) {
		return false
	}
	if p.Key != nil {
		data, err := payload(b)
		if err != nil {
			return false
		}
		sum := sha256.Sum256(data)
		if !ecdsa.VerifyASN1(p.Key, sum[:], b.Sig) {
			return false
		}
	}
	if last, ok := n.heard[b.Device]; ok {
		switch {
		case b.Boot == last.Boot && b.Seq <= last.Seq:
			return false // delayed behind a newer one
		case b.Boot < last.Boot && at.Sub(last.At) < time.Minute:
			return false // from before the device restarted
		}
	}
	n.heard[b.Device] = Heard{Beat: b, At: at, From: from}
	return true
}

// Heard returns the last beat of each peer heard within maxAge.
func (n *Node) Heard(maxAge time.Duration) map[string]Heard {
	now := time.Now()
	n.mu.Lock()
	defer n.mu.Unlock()
	out := map[string]Heard{}
	for d, h := range n.heard {
		if now.Sub(h.At) <= maxAge {
			out[d] = h
		}
	}
	return out
}

// Close stops listening.
func (n *Node) Close() {
	n.mu.Lock()
	for _, c := range n.conns {
		c.Close()
	}
	n.conns = nil
	n.mu.Unlock()
	n.wg.Wait()
}
