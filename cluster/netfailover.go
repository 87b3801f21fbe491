package cluster

import (
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/openltm/openltm/cluster/heartbeat"
	"github.com/openltm/openltm/cluster/trust"
)

// Network failover: while etcd is unreachable for every device, the devices
// decide failover from each other's heartbeats (package heartbeat), as
// BIG-IP's network failover does:
//
//   - An active device that loses etcd keeps its traffic groups when no
//     peer has heard etcd since it last did (etcd is down for everyone),
//     and steps down at once as before when some peer still reaches etcd
//     (it alone is cut off: the etcd election goes on without it).
//   - It keeps them while no peer claims them; a claim by a peer that holds
//     its etcd lease, or by a peer before it in the ranking (ha-order), makes
//     it step down.
//   - A standby that reaches no etcd, hears no peer reaching etcd and hears
//     no peer claiming a traffic group for the failover time takes it over,
//     in ranking order (each next device waits one failover time more).
//   - When etcd answers again the etcd election wins: a device active by
//     heartbeat claims the vacant owner key at once, and goes standby when
//     another device owns it (once that device's lease has had time to
//     expire when the device is silent: it may have died during the outage).
//
// A device cut off from both etcd and its peers keeps serving (as a BIG-IP
// that hears no peer goes active); the split ends when either comes back.

// netState is the network failover state; the failover goroutine's only.
type netState struct {
	wasSafe   bool
	holdOn    bool      // lost etcd while nobody else reached it: keep the traffic groups
	safeSince time.Time // when the lease became safe again
}

// peers are the group's other devices as they published themselves:
// their unicast addresses and, when they published a certificate, its key.
// A certificate that is not the trust domain's for that device name (when
// this device knows the domain) leaves the device out.
func (m *Member) peers(def GroupDef) map[string]heartbeat.Peer {
	out := map[string]heartbeat.Peer{}
	for d, kv := range m.mr.under("state/") {
		if d == m.me || !slices.Contains(def.Devices, d) {
			continue
		}
		var st memberState
		if json.Unmarshal(kv.Value, &st) != nil {
			continue
		}
		var p heartbeat.Peer
		if st.Cert != "" {
			k, err := m.peerKey(d, st.Cert)
			if err != nil {
				continue
			}
			p.Key = k
		}
		for _, s := range st.Unicast {
			if a, err := netip.ParseAddrPort(s); err == nil {
				p.Addrs = append(p.Addrs, a)
			}
		}
		out[d] = p
	}
	return out
}

// peerKey checks a peer's certificate (once per certificate) and returns
// its public key.
func (m *Member) peerKey(device, certPEM string) (*ecdsa.PublicKey, error) {
	if k, ok := m.keys[device+"\x00"+certPEM]; ok {
		return k, nil
	}
	id := m.opts.Identity
	if id == nil {
		return nil, errors.New("no trust domain to check the certificate against")
	}
	block, _ := pem.Decode([]byte(certPEM))
	if block == nil {
		return nil, errors.New("not a PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, err
	}
	peer := &trust.Identity{Device: cert.Subject.CommonName, Cert: cert}
	if err := peer.Verify(id.CAPEM()); err != nil {
		return nil, err
	}
	k, ok := cert.PublicKey.(*ecdsa.PublicKey)
	if !ok || cert.Subject.CommonName != device {
		return nil, fmt.Errorf("the certificate is not device %s's", device)
	}
	if len(m.keys) > 64 {
		clear(m.keys)
	}
	m.keys[device+"\x00"+certPEM] = k
	return k, nil
}

// beatLoop sends the device's heartbeat ten times per failover time.
func (m *Member) beatLoop() {
	tick := time.NewTicker(m.opts.LeaseTTL / 10)
	defer tick.Stop()
	var published []netip.AddrPort
	if id := m.opts.Identity; id != nil {
		m.opts.Heartbeat.SetKey(id.Key)
	}
	for {
		if as := m.opts.Heartbeat.Addrs(); !slices.Equal(as, published) {
			// The unicast addresses changed: tell the peers.
			published = as
			m.publish()
		}
		def := m.Group()
		m.opts.Heartbeat.SetPeers(m.peers(def))
		if def.NetworkFailover {
			m.opts.Heartbeat.Send(m.beat())
		}
		select {
		case <-m.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (m *Member) beat() heartbeat.Beat {
	now := time.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	b := heartbeat.Beat{Device: m.me, Generation: m.applied, Etcd: m.lease != 0 && now.Before(m.safeUntil), EtcdAge: -1}
	if !m.lastOK.IsZero() {
		b.EtcdAge = now.Sub(m.lastOK).Milliseconds()
	}
	for tg, on := range m.activeSet {
		if on {
			b.Active = append(b.Active, tg)
		}
	}
	sort.Strings(b.Active)
	return b
}

// heard returns the peers' fresh heartbeats (within the failover time),
// or nil when network failover is off.
func (m *Member) heard(def GroupDef) map[string]heartbeat.Heard {
	if m.opts.Heartbeat == nil || !def.NetworkFailover {
		return nil
	}
	return m.opts.Heartbeat.Heard(m.opts.LeaseTTL)
}

// othersReachedEtcd reports whether a peer heard etcd answer clearly after
// this device last did (lastOK): then etcd is up and this device alone is
// cut off. Renewals are sent every eighth of the TTL, so devices that lost
// etcd together differ by about that; one that kept it is a good part of a
// TTL ahead by the time this device's lease stops being safe.
func othersReachedEtcd(heard map[string]heartbeat.Heard, lastOK time.Time, ttl time.Duration) bool {
	for _, h := range heard {
		if h.EtcdAge < 0 {
			continue
		}
		if h.At.Add(-time.Duration(h.EtcdAge) * time.Millisecond).After(lastOK.Add(ttl * 3 / 8)) {
			return true
		}
	}
	return false
}

// etcdHeld reports whether a fresh peer holds its etcd lease now.
func etcdHeld(heard map[string]heartbeat.Heard) bool {
	for _, h := range heard {
		if h.Etcd {
			return true
		}
	}
	return false
}

// claimants are the peers whose last heartbeat says they serve tg.
func claimants(heard map[string]heartbeat.Heard, tg string) []heartbeat.Heard {
	var out []heartbeat.Heard
	for _, h := range heard {
		if slices.Contains(h.Active, tg) {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}

// heardAlive is the set of devices known alive by heartbeat, this one
// included.
func (m *Member) heardAlive(heard map[string]heartbeat.Heard) map[string]bool {
	alive := map[string]bool{m.me: true}
	for d := range heard {
		alive[d] = true
	}
	return alive
}

// beaten reports whether a peer's claim on tg wins over this device's:
// one backed by etcd, or one by a device ranked before this one.
func (m *Member) beaten(tg TrafficGroup, def GroupDef, heard map[string]heartbeat.Heard, standby map[string]bool) bool {
	cs := claimants(heard, tg.Name)
	if len(cs) == 0 {
		return false
	}
	cands := m.candidates(tg, def, m.heardAlive(heard), standby)
	me := slices.Index(cands, m.me)
	for _, h := range cs {
		if h.Etcd {
			return true
		}
		if i := slices.Index(cands, h.Device); i >= 0 && (me < 0 || i < me) {
			return true
		}
	}
	return false
}

// evaluateOffline decides one traffic group while the device's lease is
// not safe: whether it serves tg by heartbeat alone.
func (m *Member) evaluateOffline(tg TrafficGroup, def GroupDef, st *tgState, heard map[string]heartbeat.Heard, standby map[string]bool, now time.Time) bool {
	if heard == nil {
		return false // network failover off
	}
	if st.active {
		return (m.net.holdOn || st.byHeartbeat) && !m.beaten(tg, def, heard, standby)
	}
	if etcdHeld(heard) || len(claimants(heard, tg.Name)) > 0 {
		st.hbVacantSince = time.Time{}
		return false
	}
	if st.hbVacantSince.IsZero() {
		st.hbVacantSince = now
	}
	cands := m.candidates(tg, def, m.heardAlive(heard), standby)
	i := slices.Index(cands, m.me)
	if i < 0 || now.Sub(st.hbVacantSince) < time.Duration(i)*m.opts.LeaseTTL {
		return false
	}
	st.byHeartbeat = true
	return true
}

// HeardPeer is one line of the network failover part of
// `show cm failover-status`.
type HeardPeer struct {
	Device     string
	Address    netip.AddrPort
	Age        time.Duration // since its last heartbeat
	Generation uint64
	Active     []string
	Etcd       bool
}

// HeardPeers lists the peers whose heartbeats this device hears.
func (m *Member) HeardPeers() []HeardPeer {
	heard := m.heard(m.Group())
	var out []HeardPeer
	now := time.Now()
	for _, h := range heard {
		out = append(out, HeardPeer{Device: h.Device, Address: h.From, Age: now.Sub(h.At), Generation: h.Generation,
			Active: h.Active, Etcd: h.Etcd})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Device < out[j].Device })
	return out
}
