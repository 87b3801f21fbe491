package lsn

import (
	"errors"
	"maps"
	"net/netip"
	"slices"
	"time"
)

// Entries a rule makes in a pool's tables (rules/README.md, "PCP
// messages and source translations"):
//
//   - an inbound entry (LSN::inbound-entry create): a translation
//     address and port held for a subscriber's address and port, whose
//     inbound connections or datagrams reach it, whatever the pool's
//     inbound-connections, until its timeout;
//   - a listener (XLAT::listen): the same, held for its lifetime
//     (XLAT::listen_lifetime), taking connections only from the allowed
//     peer when the rule names one, and only the first with
//     -single-connection;
//   - a reservation (XLAT::src_endpoint_reservation): a translation
//     address and port held for a subscriber's address and port for its
//     lifetime, with no inbound listener of its own; an address-port
//     persistence record (unless -no-persist) makes the subscriber's
//     connections from that address and port take it.
//
// Each is a translation of the pool (counted and logged with them, as a
// PCP mapping is) whose destination is the all-zeroes address, ended by
// the janitor when its time is over. The translation endpoint a rule
// names is taken when it is free or held by the same subscriber address
// and port (a reservation of the flow's own translation); held by
// another, the entry is refused (-override on an inbound entry ends
// the other rule-made entry first) [M].

// EntryKind is what made an entry.
type EntryKind uint8

// The entry kinds.
const (
	EntryInbound EntryKind = iota // LSN::inbound-entry
	EntryListen                   // XLAT::listen
	EntryReserve                  // XLAT::src_endpoint_reservation
)

// Errors an entry gives.
var (
	// ErrEndpointTaken: the translation endpoint asked for is another
	// subscriber's.
	ErrEndpointTaken = errors.New("lsn: the translation address and port are in use by another subscriber")
	// ErrNotMember: the translation address is none of the pool's.
	ErrNotMember = errors.New("lsn: the address is not one of the pool's translation addresses")
)

type entryKey struct {
	at  netip.AddrPort
	udp bool
}

// entry is one rule-made entry.
type entry struct {
	kind    EntryKind
	t       *Translation
	expires time.Time
	// opened: the entry opened the inbound listener, which closes with
	// it.
	opened bool
	// allow, single: XLAT::listen's filters (allow invalid: any peer).
	allow  netip.AddrPort
	single bool
}

// EntrySpec is what a rule asks of a new entry.
type EntrySpec struct {
	Kind EntryKind
	// Client is the subscriber's address and port (XLAT::listen's
	// server) the entry maps to.
	Client netip.AddrPort
	// At is the translation address and port asked for (invalid: the
	// pool's choice; port 0: any port of the address).
	At  netip.AddrPort
	UDP bool
	// Life is how long the entry lasts.
	Life time.Duration
	// Loose takes another endpoint when At is not free; else At is
	// taken or the entry refused.
	Loose bool
	// Override ends another rule-made entry holding At first.
	Override bool
	// Allow and Single filter a listener's peers.
	Allow  netip.AddrPort
	Single bool
	// NoPersist: a reservation makes no persistence record.
	NoPersist bool
}

// AddEntry makes an entry and answers its translation address and port.
func (p *Pool) AddEntry(sp EntrySpec) (netip.AddrPort, error) {
	at := netip.AddrPortFrom(sp.At.Addr().Unmap(), sp.At.Port())
	if at.Addr().IsValid() {
		p.mu.Lock()
		if !p.main.contains(at.Addr()) && !p.back.contains(at.Addr()) {
			p.mu.Unlock()
			return netip.AddrPort{}, ErrNotMember
		}
		var ended *entry
		if at.Port() != 0 {
			key := entryKey{at, sp.UDP}
			if u := p.portUse(at, sp.UDP); u != nil && u.client != sp.Client {
				if e := p.entries[key]; sp.Override && e != nil && e.t.use == u {
					delete(p.entries, key)
					ended = e
				} else if !sp.Loose {
					p.mu.Unlock()
					return netip.AddrPort{}, ErrEndpointTaken
				}
			}
		}
		p.mu.Unlock()
		if ended != nil {
			p.endEntries([]*entry{ended})
		}
	}
	four := sp.Client.Addr().Unmap().Is4()
	if at.Addr().IsValid() {
		four = at.Addr().Is4()
	}
	dst := netip.AddrPortFrom(netip.IPv6Unspecified(), 0)
	if four {
		dst = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	want := &Want{Addr: at.Addr(), Port: at.Port(), fromPCP: true}
	t, err := p.Translate(sp.Client, dst, sp.UDP, want)
	if err != nil {
		return netip.AddrPort{}, err
	}
	if !sp.Loose && at.Port() != 0 && t.Addr != at {
		t.Release()
		return netip.AddrPort{}, ErrEndpointTaken
	}
	now := p.set.now()
	e := &entry{kind: sp.Kind, t: t, expires: now.Add(sp.Life), allow: sp.Allow, single: sp.Single}
	key := entryKey{t.Addr, sp.UDP}
	p.mu.Lock()
	if old := p.entries[key]; old != nil { // a second entry of the same endpoint: it replaces the first
		delete(p.entries, key)
		defer p.endEntries([]*entry{old})
	}
	if p.entries == nil {
		p.entries = map[entryKey]*entry{}
	}
	p.entries[key] = e
	u := t.use
	if sp.Kind != EntryReserve {
		if u.in == nil {
			p.openInbound(u, pcpWant)
			e.opened = u.in != nil
		}
		u.allow, u.single = sp.Allow, sp.Single
	} else if !sp.NoPersist {
		p.persistOn(sp.Client, u, sp.UDP, sp.Life, now)
	}
	p.mu.Unlock()
	return t.Addr, nil
}

// persistOn makes (or points) the address-port persistence record of
// client at u, held for ttl. The caller holds p.mu.
func (p *Pool) persistOn(client netip.AddrPort, u *portUse, udp bool, ttl time.Duration, now time.Time) {
	key := persistKey{addr: client.Addr().Unmap(), port: client.Port(), udp: udp}
	rec := p.persist[key]
	if rec == nil {
		rec = &persistRec{key: key, ended: now}
		p.persist[key] = rec
	}
	rec.byRule = true
	if rec.port != u {
		if rec.port != nil {
			p.unref(rec.port)
		}
		rec.port = u
		u.refs++
	}
	rec.to, rec.ttl = u.at.Addr(), ttl
	if rec.refs == 0 {
		rec.ended = now
	}
}

// portUse is the hold on at, nil when it is free. The caller holds
// p.mu.
func (p *Pool) portUse(at netip.AddrPort, udp bool) *portUse {
	st := p.addrs[at.Addr()]
	if st == nil {
		return nil
	}
	if udp {
		return st.udp[at.Port()]
	}
	return st.tcp[at.Port()]
}

// EntryInfo is one entry, for a rule's get.
type EntryInfo struct {
	Kind   EntryKind
	Pool   string
	At     netip.AddrPort
	Client netip.AddrPort
	// Left is the time it has left.
	Left time.Duration
}

// Entry is the rule-made entry of that translation endpoint.
func (p *Pool) Entry(at netip.AddrPort, udp bool) (EntryInfo, bool) {
	now := p.set.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[entryKey{unmapAP(at), udp}]
	if e == nil {
		return EntryInfo{}, false
	}
	return EntryInfo{Kind: e.kind, Pool: p.Name, At: e.t.Addr, Client: e.t.Client, Left: max(e.expires.Sub(now), 0)}, true
}

// SetEntryLife gives the entry of that endpoint a new lifetime from now
// (0 ends it at the janitor's next round); false when there is none.
func (p *Pool) SetEntryLife(at netip.AddrPort, udp bool, life time.Duration) bool {
	now := p.set.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entries[entryKey{unmapAP(at), udp}]
	if e == nil {
		return false
	}
	e.expires = now.Add(life)
	if r := p.persist[persistKey{addr: e.t.Client.Addr().Unmap(), port: e.t.Client.Port(), udp: udp}]; e.kind == EntryReserve && r != nil && r.port == e.t.use {
		r.ttl = life
		if r.refs == 0 {
			r.ended = now
		}
	}
	return true
}

// Inbound is the subscriber address and port inbound connections (or
// datagrams) to that translation endpoint reach: a rule-made entry's, a
// PCP MAP mapping's, or a translation's that listens
// (inbound-connections); false when none listens there.
func (p *Pool) Inbound(at netip.AddrPort, udp bool) (netip.AddrPort, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	u := p.portUse(unmapAP(at), udp)
	if u == nil || u.in == nil {
		return netip.AddrPort{}, false
	}
	return u.client, true
}

// DeleteInbound ends the inbound mapping of that translation endpoint:
// a rule-made entry ends; a translation's (or PCP mapping's) listener
// closes, the translation going on outbound only [M]. False when there
// was none.
func (p *Pool) DeleteInbound(at netip.AddrPort, udp bool) bool {
	at = unmapAP(at)
	p.mu.Lock()
	key := entryKey{at, udp}
	if e := p.entries[key]; e != nil && e.kind != EntryReserve {
		delete(p.entries, key)
		p.mu.Unlock()
		p.endEntries([]*entry{e})
		return true
	}
	defer p.mu.Unlock()
	u := p.portUse(at, udp)
	if u == nil || u.in == nil {
		return false
	}
	u.in.close()
	u.in, u.pcpIn = nil, false
	return true
}

// endEntries releases ended entries' translations and closes the
// listeners they opened. The caller does not hold p.mu.
func (p *Pool) endEntries(es []*entry) {
	for _, e := range es {
		p.mu.Lock()
		if u := e.t.use; e.opened && u.in != nil {
			u.in.close()
			u.in = nil
		}
		e.t.use.allow, e.t.use.single = netip.AddrPort{}, false
		p.mu.Unlock()
		e.t.Release()
	}
}

// sweepEntries takes out the entries whose time is over. The caller
// holds p.mu and ends them (endEntries) after it lets go.
func (p *Pool) sweepEntries(now time.Time) []*entry {
	return takeExpired(p.entries, now, func(e *entry) time.Time { return e.expires })
}

// stopEntries takes out every entry (the pool closes).
func (p *Pool) stopEntries() []*entry {
	ended := slices.Collect(maps.Values(p.entries))
	clear(p.entries)
	return ended
}

// takeExpired deletes from m the values whose expiry (as expires reads
// it) is not after now, and returns them: the sweep of the rule-made
// entries and of the PCP mappings alike.
func takeExpired[K comparable, V any](m map[K]V, now time.Time, expires func(V) time.Time) []V {
	var ended []V
	for k, v := range m {
		if !now.Before(expires(v)) {
			delete(m, k)
			ended = append(ended, v)
		}
	}
	return ended
}

// PersistEntry is LSN::persistence-entry create: the persistence
// record of client (port 0: address persistence, else address-port) to
// the translation address to (port 0: any free port of it, for
// address-port), for ttl after the subscriber's last connection (0: the
// pool's persistence timeout), for TCP and UDP both [M: F5's command
// names no protocol]. An existing record stands unless override; the
// answer is the record's translation (the address alone for address
// persistence).
func (p *Pool) PersistEntry(client, to netip.AddrPort, ttl time.Duration, override bool) (netip.AddrPort, error) {
	client, to = unmapAP(client), unmapAP(to)
	now := p.set.now()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.main.contains(to.Addr()) && !p.back.contains(to.Addr()) {
		return netip.AddrPort{}, ErrNotMember
	}
	if ttl == 0 {
		ttl = p.cfg.PersistTimeout
	}
	var out netip.AddrPort
	for _, udp := range []bool{false, true} {
		key := persistKey{addr: client.Addr(), port: client.Port(), udp: udp}
		if r := p.persist[key]; r != nil {
			if !override {
				if !out.IsValid() {
					out = r.answer()
				}
				continue
			}
			delete(p.persist, key)
			if r.port != nil {
				p.unref(r.port)
				r.port = nil
			}
		}
		rec := &persistRec{key: key, to: to.Addr(), ttl: ttl, ended: now, byRule: true}
		if client.Port() != 0 {
			u := p.holdFor(to, client, udp)
			if u == nil {
				return netip.AddrPort{}, ErrEndpointTaken
			}
			rec.port = u
		}
		p.persist[key] = rec
		if !out.IsValid() {
			out = rec.answer()
		}
	}
	return out, nil
}

// holdFor holds to (any free port of its address when its port is 0)
// for client: a port client already holds is shared. The caller holds
// p.mu.
func (p *Pool) holdFor(to, client netip.AddrPort, udp bool) *portUse {
	st := p.addr(to.Addr())
	var u *portUse
	if to.Port() != 0 {
		if u = p.portUse(to, udp); u != nil {
			if u.client != client {
				return nil
			}
			u.refs++
			return u
		}
		u = p.take(st, to.Port(), client, udp)
	} else {
		u = p.portIn(st, client, udp, p.cfg.PortLow, p.cfg.PortHigh)
	}
	if u == nil {
		p.dropAddr(st)
		return nil
	}
	p.Stats.PortsInUse.Add(1)
	p.openInbound(u, nil)
	return u
}

func (r *persistRec) answer() netip.AddrPort {
	if r.port != nil {
		return r.port.at
	}
	return netip.AddrPortFrom(r.to, 0)
}

// Persistence is the translation of client's persistence record (port
// 0: its address record), TCP's before UDP's; false when it has none.
func (p *Pool) Persistence(client netip.AddrPort) (netip.AddrPort, bool) {
	client = unmapAP(client)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, udp := range []bool{false, true} {
		if r := p.persist[persistKey{addr: client.Addr(), port: client.Port(), udp: udp}]; r != nil {
			return r.answer(), true
		}
	}
	return netip.AddrPort{}, false
}

// DeletePersistence ends client's persistence records (TCP and UDP);
// connections using them go on. False when there were none.
func (p *Pool) DeletePersistence(client netip.AddrPort) bool {
	client = unmapAP(client)
	p.mu.Lock()
	defer p.mu.Unlock()
	found := false
	for _, udp := range []bool{false, true} {
		key := persistKey{addr: client.Addr(), port: client.Port(), udp: udp}
		if r := p.persist[key]; r != nil {
			delete(p.persist, key)
			if r.port != nil {
				p.unref(r.port)
				r.port = nil
			}
			found = true
		}
	}
	return found
}

func unmapAP(a netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// Set-wide lookups: the commands that name a translation endpoint or a
// subscriber without a pool look through every pool.

// Inbound is Pool.Inbound over every pool.
func (s *Set) Inbound(at netip.AddrPort, udp bool) (netip.AddrPort, bool) {
	for _, p := range s.Pools() {
		if c, ok := p.Inbound(at, udp); ok {
			return c, true
		}
	}
	return netip.AddrPort{}, false
}

// DeleteInbound is Pool.DeleteInbound over every pool.
func (s *Set) DeleteInbound(at netip.AddrPort, udp bool) bool {
	for _, p := range s.Pools() {
		if p.DeleteInbound(at, udp) {
			return true
		}
	}
	return false
}

// Persistence is Pool.Persistence over every pool.
func (s *Set) Persistence(client netip.AddrPort) (netip.AddrPort, bool) {
	for _, p := range s.Pools() {
		if to, ok := p.Persistence(client); ok {
			return to, true
		}
	}
	return netip.AddrPort{}, false
}

// DeletePersistence is Pool.DeletePersistence over every pool.
func (s *Set) DeletePersistence(client netip.AddrPort) bool {
	found := false
	for _, p := range s.Pools() {
		if p.DeletePersistence(client) {
			found = true
		}
	}
	return found
}

// Entry is Pool.Entry over every pool.
func (s *Set) Entry(at netip.AddrPort, udp bool) (EntryInfo, *Pool, bool) {
	for _, p := range s.Pools() {
		if e, ok := p.Entry(at, udp); ok {
			return e, p, true
		}
	}
	return EntryInfo{}, nil, false
}
