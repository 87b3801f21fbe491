package lsn

import (
	"io"
	"net/netip"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Pool is one running lsn pool: its translations in use, persistence
// records, port blocks and counters. Every method is safe for
// concurrent use.
type Pool struct {
	Name  string
	Stats Stats
	set   *Set

	mu   sync.Mutex
	cfg  *config.LSNPool
	main addrSpace // members
	back addrSpace // backup-members
	det  *detMap   // mode deterministic
	// addrs is the translation addresses with a port (or a block) in use.
	addrs map[netip.Addr]*addrState
	// cursor turns over the addresses for new translations (napt) and
	// new blocks (pba), so that a new address is preferred over a new
	// port of one in use.
	cursor uint64
	// persist is the persistence records by subscriber (address, or
	// address and port).
	persist map[persistKey]*persistRec
	// subs is the subscribers with a translation or a block.
	subs map[netip.Addr]*subscriber
	// pcp is the PCP mappings (pcp.go) and pcpSrv the PCP server; nil:
	// none.
	pcp    map[pcpKey]*pcpMap
	pcpSrv *pcpServer
	// entries is the rule-made entries (entries.go).
	entries map[entryKey]*entry
}

// Stats are a pool's counters, for show ltm lsn-pool.
type Stats struct {
	Requests         counter // translations asked for
	Active           counter // translations in use
	Total            counter // translations made
	Failures         counter // translations refused: no port, no block
	ClientLimit      counter // refused at client-connection-limit
	BackupActive     counter // translations from backup-members in use
	BackupTotal      counter
	PersistHits      counter // translations that followed a persistence record
	BlocksActive     counter // port blocks held by subscribers (pba)
	BlocksTotal      counter // port blocks allocated
	BlockFailures    counter // port blocks refused: none free, or client-block-limit
	BlocksZombie     counter // blocks past their lifetime with connections left
	InboundActive    counter // inbound connections open
	InboundTotal     counter // inbound connections sent to subscribers
	InboundRefused   counter // inbound connections no subscriber took
	PortsInUse       counter // translation ports held (translations and persistence)
	SubscribersTotal counter
	// The PCP server's (pcp.go).
	PCPRequests       counter // requests answered
	PCPFailures       counter // answered with an error result
	PCPMaps           counter // MAP mappings held
	PCPPeers          counter // PEER mappings held
	PCPListenFailures counter // the selfip's address and port could not be bound
	PCPRuleRejects    counter // refused by the profile's rule (PCP::reject)
	PCPRuleDrops      counter // dropped unanswered: the profile's rule failed
	// Hairpins is the subscriber connections sent to another
	// subscriber's translation inside (hairpin-mode).
	Hairpins counter
	// ZombiesCut is the connections ended at zombie-timeout.
	ZombiesCut counter
}

type persistKey struct {
	addr netip.Addr
	port uint16 // 0: address persistence
	udp  bool
}

// persistRec keeps a subscriber's translation address (and port) while
// it has connections and for the timeout after the last one.
type persistRec struct {
	key   persistKey
	to    netip.Addr
	port  *portUse // address-port: the port it keeps (held)
	refs  int
	ended time.Time
	ttl   time.Duration
	// byRule: a rule made it (LSN::persistence-entry, a reservation,
	// entries.go): the subscriber's connections follow it whatever the
	// pool's persistence mode, and they keep its timeout.
	byRule bool
}

// subscriber is one client address's translations and port blocks.
type subscriber struct {
	addr   netip.Addr
	active uint32
	blocks []*block
}

// addrState is a translation address's ports and blocks in use.
type addrState struct {
	addr  netip.Addr
	tcp   map[uint16]*portUse
	udp   map[uint16]*portUse
	next  uint16         // where the search for a free port goes on
	slots map[int]*block // pba: the blocks, by slot
}

// portUse is one translation address and port held: by the
// translations using it and the persistence record keeping it.
type portUse struct {
	at     netip.AddrPort
	udp    bool
	client netip.AddrPort // the subscriber it maps to
	refs   int
	in     *inbound
	// pcpIn: in was opened for a PCP MAP mapping, and closes with it.
	pcpIn bool
	// allow and single are an XLAT::listen entry's filters (entries.go):
	// the one peer taken (invalid: any; port 0: any of its ports), and
	// the listener closing after its first connection.
	allow  netip.AddrPort
	single bool
}

// block is a subscriber's port block (pba).
type block struct {
	owner         *subscriber
	addr          *addrState
	slot          int
	low, high     uint16
	created, last time.Time
	refs          int
	zombie        bool
	// conns is the block's translations, for zombie-timeout to cut.
	conns map[*Translation]struct{}
}

func newPool(s *Set, pc *config.LSNPool) *Pool {
	p := &Pool{Name: pc.Name, set: s, addrs: map[netip.Addr]*addrState{},
		persist: map[persistKey]*persistRec{}, subs: map[netip.Addr]*subscriber{}}
	p.reconfigure(pc)
	return p
}

func (p *Pool) reconfigure(pc *config.LSNPool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cfg = pc
	p.main = newAddrSpace(pc.Members)
	p.back = newAddrSpace(pc.BackupMembers)
	p.det = nil
	if pc.Mode == config.LSNDeterministic {
		p.det = newDetMap(pc, p.main)
	}
	p.startPCP(pc.PCP) // pcp.go
}

// Cfg is the pool's settings.
func (p *Pool) Cfg() *config.LSNPool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg
}

// Want is what a rule asked of one connection's translation (LSN::
// commands); the zero value asks nothing.
type Want struct {
	// Addr and Port are LSN::address and LSN::port: the translation
	// address and port to take when free (invalid, 0: the pool's
	// choice).
	Addr netip.Addr
	Port uint16
	// Persist and PersistTimeout are LSN::persistence ("": the pool's).
	Persist        config.LSNPersist
	PersistTimeout time.Duration
	// Inbound is LSN::inbound: "" the pool's setting, else enabled or
	// disabled for this connection's translation.
	Inbound string
	// pcp: a PCP MAP mapping, whose inbound listener opens whatever
	// the pool's inbound-connections; fromPCP: any PCP mapping, which
	// keeps no persistence record (its lifetime is its own).
	pcp, fromPCP bool
}

// Translation is one connection's translation, held until Release.
type Translation struct {
	pool   *Pool
	Client netip.AddrPort
	// Addr is the translation address and port the server side uses.
	Addr   netip.AddrPort
	Dst    netip.AddrPort
	UDP    bool
	Backup bool
	Start  time.Time
	use    *portUse
	rec    *persistRec
	blk    *block
	sub    *subscriber
	done   bool
	// conn is the server side Attach gave, closed at zombie-timeout.
	conn io.Closer
	// low and high bound the ports a retry may take (deterministic, pba);
	// 0: the pool's range.
	low, high uint16
}

// Translate gives client's connection to dst a translation address and
// port (see the package comment), or an error the connection is
// refused with. want may be nil.
func (p *Pool) Translate(client, dst netip.AddrPort, udp bool, want *Want) (*Translation, error) {
	p.Stats.Requests.Add(1)
	now := p.set.now()
	p.mu.Lock()
	t, newBlock, err := p.translate(client, dst, udp, want, now)
	var pc = p.cfg
	p.mu.Unlock()
	if err != nil {
		if err == ErrClientLimit {
			p.Stats.ClientLimit.Add(1)
		}
		p.Stats.Failures.Add(1)
		return nil, err
	}
	p.Stats.Active.Add(1)
	p.Stats.Total.Add(1)
	if t.Backup {
		p.Stats.BackupActive.Add(1)
		p.Stats.BackupTotal.Add(1)
	}
	if newBlock != nil {
		p.logBlock(pc, "LSN_PB_ALLOCATED", newBlock, now)
	}
	if pc.LogStart && (!pc.LogBackupOnly || t.Backup) {
		p.logTranslation(pc, "LSN_ADD", t, now)
	}
	return t, nil
}

func (p *Pool) translate(client, dst netip.AddrPort, udp bool, want *Want, now time.Time) (*Translation, *block, error) {
	pc := p.cfg
	ca := client.Addr().Unmap()
	four := dst.Addr().Unmap().Is4()
	sub := p.subs[ca]
	if sub == nil {
		sub = &subscriber{addr: ca}
		p.subs[ca] = sub
		p.Stats.SubscribersTotal.Add(1)
		defer p.dropSubscriber(sub) // kept while it has a translation or a block
	}
	if pc.ClientConnLimit > 0 && sub.active >= pc.ClientConnLimit {
		return nil, nil, ErrClientLimit
	}
	mode, ttl := pc.Persist, pc.PersistTimeout
	if want != nil && want.Persist != "" {
		mode, ttl = want.Persist, want.PersistTimeout
	}
	if want != nil && want.fromPCP {
		mode = config.LSNPersistNone
	}
	t := &Translation{pool: p, Client: client, Dst: dst, UDP: udp, Start: now, sub: sub}
	var key persistKey
	var rec *persistRec
	switch mode {
	case config.LSNPersistAddress:
		key = persistKey{addr: ca, udp: udp}
	case config.LSNPersistAddressPort:
		key = persistKey{addr: ca, port: client.Port(), udp: udp}
	}
	if key.addr.IsValid() {
		rec = p.persist[key]
	}
	if rec == nil && len(p.persist) > 0 && (want == nil || !want.fromPCP) {
		// A rule's record (entries.go), address and port before address.
		for _, k := range [2]persistKey{{addr: ca, port: client.Port(), udp: udp}, {addr: ca, udp: udp}} {
			if r := p.persist[k]; r != nil && r.byRule {
				key, rec = k, r
				break
			}
		}
	}
	var newBlock *block
	var use *portUse
	var pm *pcpMap
	if len(p.pcp) > 0 {
		pm = p.pcp[pcpKey{internal: client, udp: udp}]
	}
	switch {
	case pm != nil: // a PCP mapping of the subscriber's address and port (pcp.go)
		use = pm.t.use
		use.refs++
	case want != nil && want.Addr.IsValid():
		use = p.takeWanted(want, client, udp)
	case rec != nil && rec.port != nil:
		use = rec.port
		use.refs++
		p.Stats.PersistHits.Add(1)
	case pc.Mode == config.LSNDeterministic:
		use, t.low, t.high = p.takeDeterministic(client, udp, four) // deterministic.go
	case pc.Mode == config.LSNPBA:
		use, t.blk, newBlock = p.takePBA(sub, client, udp, four, now) // pba.go
		if t.blk != nil {
			t.low, t.high = t.blk.low, t.blk.high
		}
	default:
		var prefer netip.Addr
		if rec != nil {
			prefer = rec.to
			p.Stats.PersistHits.Add(1)
		}
		use = p.takeNAPT(&p.main, client, udp, four, prefer, 0)
	}
	if use == nil && pc.Mode == config.LSNDeterministic && p.back.n > 0 {
		if use = p.takeNAPT(&p.back, client, udp, four, netip.Addr{}, 0); use != nil {
			t.Backup = true
		}
	}
	if use == nil {
		if pc.Mode == config.LSNPBA {
			p.Stats.BlockFailures.Add(1)
		}
		if pc.Mode == config.LSNDeterministic && p.det != nil && !p.det.has(ca) && p.back.n == 0 {
			return nil, nil, ErrNoSubscriber
		}
		if p.main.n > 0 && !p.main.hasFamily(four) && !p.back.hasFamily(four) {
			return nil, nil, ErrFamily
		}
		return nil, nil, ErrExhausted
	}
	t.use, t.Addr = use, use.at
	if use.refs == 1 {
		use.client = client
		p.Stats.PortsInUse.Add(1)
		p.openInbound(use, want) // inbound.go
	}
	if key.addr.IsValid() {
		if rec == nil {
			rec = &persistRec{key: key, to: use.at.Addr(), ttl: ttl}
			if mode == config.LSNPersistAddressPort {
				rec.port = use
				use.refs++ // the record keeps the port
			}
			p.persist[key] = rec
		}
		rec.refs++
		if !rec.byRule {
			rec.ttl = ttl
		}
		t.rec = rec
	}
	if t.blk != nil {
		t.blk.refs++
		t.blk.last = now
		if pc.ZombieTimeout > 0 {
			if t.blk.conns == nil {
				t.blk.conns = map[*Translation]struct{}{}
			}
			t.blk.conns[t] = struct{}{}
		}
	}
	sub.active++
	return t, newBlock, nil
}

// Retry gives the translation another port on the same address after
// the host refused the one it had (another program holds it); false
// when there is none.
func (t *Translation) Retry() bool {
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	old := t.use
	var use *portUse
	four := old.at.Addr().Is4()
	if t.high != 0 {
		use = p.portIn(p.addrs[old.at.Addr()], t.Client, t.UDP, t.low, t.high)
	} else {
		sp := &p.main
		if t.Backup {
			sp = &p.back
		}
		use = p.takeNAPT(sp, t.Client, t.UDP, four, old.at.Addr(), old.at.Port())
	}
	if use == nil {
		return false
	}
	// The refused port was held while the new one was looked for, so
	// that the search passed it over.
	p.unref(old)
	if t.rec != nil && t.rec.port == old {
		t.rec.port = use
		use.refs++
		p.unref(old)
	}
	use.client = t.Client
	if use.refs == 1 {
		p.Stats.PortsInUse.Add(1)
	}
	t.use, t.Addr = use, use.at
	return true
}

// Pool is the pool the translation was made from: a connection related
// to the translated one (an FTP data connection) takes its own
// translation there.
func (t *Translation) Pool() *Pool { return t.pool }

// Attach gives the translation its server side, which zombie-timeout
// closes (a pba block's connections past the block's lifetime).
func (t *Translation) Attach(c io.Closer) {
	if t == nil || t.blk == nil {
		return
	}
	p := t.pool
	p.mu.Lock()
	if !t.done {
		t.conn = c
	}
	p.mu.Unlock()
}

// Hairpin is where a subscriber's connection to dst goes inside with
// hairpin-mode enabled: the subscriber whose translation dst is, when it
// takes inbound connections (inbound-connections, LSN::inbound, a PCP
// MAP mapping); false otherwise, and for a pool without hairpin-mode.
func (p *Pool) Hairpin(dst netip.AddrPort, udp bool) (netip.AddrPort, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cfg.Hairpin {
		return netip.AddrPort{}, false
	}
	st := p.addrs[dst.Addr().Unmap()]
	if st == nil {
		return netip.AddrPort{}, false
	}
	m := st.tcp
	if udp {
		m = st.udp
	}
	u := m[dst.Port()]
	if u == nil || u.in == nil {
		return netip.AddrPort{}, false
	}
	p.Stats.Hairpins.Add(1)
	return u.client, true
}

// Release ends the translation: its port goes back (or stays with the
// persistence record for its timeout), its block counts one connection
// less.
func (t *Translation) Release() {
	if t == nil {
		return
	}
	p := t.pool
	now := p.set.now()
	p.mu.Lock()
	if t.done {
		p.mu.Unlock()
		return
	}
	t.done = true
	pc := p.cfg
	p.unref(t.use)
	if r := t.rec; r != nil {
		r.refs--
		if r.refs == 0 {
			r.ended = now
		}
	}
	if b := t.blk; b != nil {
		b.refs--
		b.last = now
		delete(b.conns, t)
	}
	t.sub.active--
	p.dropSubscriber(t.sub)
	p.mu.Unlock()
	p.Stats.Active.Add(-1)
	if t.Backup {
		p.Stats.BackupActive.Add(-1)
	}
	if pc.LogEnd && (!pc.LogBackupOnly || t.Backup) {
		p.logTranslation(pc, "LSN_DELETE", t, now)
	}
}

// unref lets go of one hold on a port; the last closes its inbound
// listener and frees it.
func (p *Pool) unref(u *portUse) {
	u.refs--
	if u.refs > 0 {
		return
	}
	if a := p.addrs[u.at.Addr()]; a != nil {
		m := a.tcp
		if u.udp {
			m = a.udp
		}
		delete(m, u.at.Port())
		p.dropAddr(a)
	}
	p.Stats.PortsInUse.Add(-1)
	if u.in != nil {
		u.in.close()
		u.in = nil
	}
}

func (p *Pool) dropAddr(a *addrState) {
	if len(a.tcp) == 0 && len(a.udp) == 0 && len(a.slots) == 0 {
		delete(p.addrs, a.addr)
	}
}

func (p *Pool) dropSubscriber(s *subscriber) {
	if s.active == 0 && len(s.blocks) == 0 {
		delete(p.subs, s.addr)
	}
}

// addr is the state of a translation address, made when first used.
func (p *Pool) addr(a netip.Addr) *addrState {
	st := p.addrs[a]
	if st == nil {
		st = &addrState{addr: a, tcp: map[uint16]*portUse{}, udp: map[uint16]*portUse{}}
		p.addrs[a] = st
	}
	return st
}

// take holds port on st for client; nil when it is in use (by
// another subscriber: a subscriber's own address-port translation is
// shared through its persistence record instead).
func (p *Pool) take(st *addrState, port uint16, client netip.AddrPort, udp bool) *portUse {
	m := st.tcp
	if udp {
		m = st.udp
	}
	if m[port] != nil {
		return nil
	}
	u := &portUse{at: netip.AddrPortFrom(st.addr, port), udp: udp, client: client, refs: 1}
	m[port] = u
	return u
}

// portIn holds the first free port of st from low to high, going on
// from where the last search ended.
func (p *Pool) portIn(st *addrState, client netip.AddrPort, udp bool, low, high uint16) *portUse {
	if st == nil || high < low {
		return nil
	}
	n := int(high) - int(low) + 1
	start := 0
	if st.next >= low && st.next <= high {
		start = int(st.next - low)
	}
	for i := 0; i < n; i++ {
		port := low + uint16((start+i)%n)
		if u := p.take(st, port, client, udp); u != nil {
			st.next = port + 1
			return u
		}
	}
	return nil
}

// maxAddrTries bounds the addresses one napt translation looks at.
const maxAddrTries = 4096

// takeNAPT holds a free address and port of sp: on prefer when it is
// valid and has one, else on the next address in turn. avoid is a port
// not to take on prefer (0: none).
func (p *Pool) takeNAPT(sp *addrSpace, client netip.AddrPort, udp, four bool, prefer netip.Addr, avoid uint16) *portUse {
	pc := p.cfg
	try := func(a netip.Addr) *portUse {
		st := p.addr(a)
		if avoid != 0 && a == prefer {
			st.next = avoid + 1
		}
		u := p.portIn(st, client, udp, pc.PortLow, pc.PortHigh)
		if u == nil {
			p.dropAddr(st)
		}
		return u
	}
	if prefer.IsValid() && sp.contains(prefer) {
		if u := try(prefer); u != nil {
			return u
		}
	}
	tries := min(sp.n, maxAddrTries)
	for i := uint64(0); i < tries; i++ {
		p.cursor++
		a, ok := sp.at(p.cursor % sp.n)
		if !ok || a.Is4() != four {
			continue
		}
		if u := try(a); u != nil {
			return u
		}
	}
	return nil
}

// takeWanted holds the address and port a rule asked for (LSN::address,
// LSN::port), when the address is the pool's and the port free; else
// the pool's choice on that address.
func (p *Pool) takeWanted(w *Want, client netip.AddrPort, udp bool) *portUse {
	pc := p.cfg
	a := w.Addr.Unmap()
	if !p.main.contains(a) && !p.back.contains(a) {
		return nil
	}
	st := p.addr(a)
	if w.Port != 0 {
		if u := p.take(st, w.Port, client, udp); u != nil {
			return u
		}
		// The subscriber's own address and port already hold it (a
		// rule's entry of the flow's translation, entries.go).
		if u := p.portUse(netip.AddrPortFrom(a, w.Port), udp); u != nil && u.client == client {
			u.refs++
			return u
		}
	}
	u := p.portIn(st, client, udp, pc.PortLow, pc.PortHigh)
	if u == nil {
		p.dropAddr(st)
	}
	return u
}

// Sweep ends the persistence records and port blocks whose time is
// over; the janitor calls it twice a second.
func (p *Pool) Sweep() {
	now := p.set.now()
	var released []*block
	var cut []io.Closer
	p.mu.Lock()
	pc := p.cfg
	maps := p.sweepPCP(now)        // pcp.go
	entries := p.sweepEntries(now) // entries.go
	for k, r := range p.persist {
		if r.refs == 0 && now.Sub(r.ended) >= r.ttl {
			delete(p.persist, k)
			if r.port != nil {
				p.unref(r.port)
			}
		}
	}
	for _, s := range p.subs {
		for i := 0; i < len(s.blocks); i++ {
			b := s.blocks[i]
			expired := pc.BlockLifetime > 0 && now.Sub(b.created) >= pc.BlockLifetime
			idle := b.refs == 0 && now.Sub(b.last) >= pc.BlockIdle
			if expired && b.refs > 0 {
				if !b.zombie {
					b.zombie = true
					p.Stats.BlocksZombie.Add(1)
				}
				// zombie-timeout: a zombie's connections are cut that
				// long after its lifetime ended.
				if pc.ZombieTimeout > 0 && now.Sub(b.created) >= pc.BlockLifetime+pc.ZombieTimeout {
					for t := range b.conns {
						if t.conn != nil {
							cut = append(cut, t.conn)
							t.conn = nil
						}
					}
				}
				continue
			}
			if expired || idle {
				p.freeBlock(b)
				s.blocks = append(s.blocks[:i], s.blocks[i+1:]...)
				i--
				released = append(released, b)
			}
		}
		p.dropSubscriber(s)
	}
	p.mu.Unlock()
	for _, c := range cut {
		p.Stats.ZombiesCut.Add(1)
		c.Close()
	}
	p.endMaps(maps)
	p.endEntries(entries)
	for _, b := range released {
		p.logBlock(pc, "LSN_PB_RELEASED", b, now)
	}
}

func (p *Pool) closeAll() {
	p.mu.Lock()
	maps := p.stopPCP()        // pcp.go
	entries := p.stopEntries() // entries.go
	p.mu.Unlock()
	p.endMaps(maps)
	p.endEntries(entries)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, st := range p.addrs {
		for _, m := range []map[uint16]*portUse{st.tcp, st.udp} {
			for _, u := range m {
				if u.in != nil {
					u.in.close()
					u.in = nil
				}
			}
		}
	}
}

// Snapshot is what show ltm lsn-pool prints beside the counters.
type Snapshot struct {
	Mode          config.LSNMode
	Addresses     uint64 // translation addresses (members)
	Ports         int    // ports per address
	AddressesUsed int    // addresses with a port or block in use
	Persistence   int    // persistence records
	Subscribers   int    // subscribers with translations or blocks
}

// Snapshot reads the pool's state for show.
func (p *Pool) Snapshot() Snapshot {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Snapshot{Mode: p.cfg.Mode, Addresses: p.main.n, Ports: int(p.cfg.PortHigh) - int(p.cfg.PortLow) + 1,
		AddressesUsed: len(p.addrs), Persistence: len(p.persist), Subscribers: len(p.subs)}
}

// ResetStats zeroes the totals (reset-stats); what is in use stays
// counted.
func (p *Pool) ResetStats() {
	s := &p.Stats
	for _, c := range []*counter{&s.Requests, &s.Total, &s.Failures, &s.ClientLimit, &s.BackupTotal, &s.PersistHits,
		&s.BlocksTotal, &s.BlockFailures, &s.InboundTotal, &s.InboundRefused, &s.SubscribersTotal,
		&s.PCPRequests, &s.PCPFailures, &s.PCPListenFailures, &s.PCPRuleRejects, &s.PCPRuleDrops, &s.Hairpins, &s.ZombiesCut} {
		c.Store(0)
	}
}

// ValidRange is a translation address and the ports of it a
// subscriber's translations may take.
type ValidRange struct {
	Addr      netip.Addr
	Low, High uint16
}

// ValidRanges are the translation endpoints t's subscriber may take
// (XLAT::src_nat_valid_range): in mode pba each block it holds that is
// not a zombie; in mode deterministic its range of t's address; else
// t's address with the pool's translation-port-range.
func (t *Translation) ValidRanges() []ValidRange {
	p := t.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if t.blk != nil && t.sub != nil {
		var out []ValidRange
		for _, b := range t.sub.blocks {
			if !b.zombie {
				out = append(out, ValidRange{Addr: b.addr.addr, Low: b.low, High: b.high})
			}
		}
		return out
	}
	if t.low != 0 {
		return []ValidRange{{Addr: t.Addr.Addr(), Low: t.low, High: t.high}}
	}
	return []ValidRange{{Addr: t.Addr.Addr(), Low: p.cfg.PortLow, High: p.cfg.PortHigh}}
}
