package l4

import (
	"net/netip"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"

	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/rules"
)

// flowPersist is a flow's persistence: the key a rule chose (persist uie,
// persist source_addr, persist none) and the record the flow made, which
// is refreshed when the flow ends. Rule events and the connect path both
// use it, so it has a lock of its own.
type flowPersist struct {
	mu      sync.Mutex
	set     bool // a rule chose; otherwise the virtual's profiles do
	none    bool // persist none
	key     persist.Key
	timeout time.Duration // <0: the profile's
	made    bool
	madeKey persist.Key
	madeIn  persist.Scope
	downRan bool // PERSIST_DOWN ran for this flow
}

// persistDecision is what the connect path persists on: the primary key
// and, when the virtual's fallback-persistence gives one too, the
// fallback key, looked up when the primary finds no record. Both are
// recorded once the flow is connected, so that the fallback finds a
// record the next time the primary does not.
type persistDecision struct {
	key     persist.Key
	prof    *config.Persistence // the virtual's profile of the key's mode, if any
	timeout time.Duration
	// fb is the fallback's key (mode 0: none), with its profile.
	fb     persist.Key
	fbProf *config.Persistence
}

// profileKey is the key profile prof gives the flow on its own: the
// client's address (source-addr) or the address it connected to
// (dest-addr), under the profile's mask, the session ID the client's
// TLS hello asks to resume (ssl; on a virtual ending TLS, the client-ssl
// session's name, tls.go), its RDP cookie (msrdp), or the key a
// hash profile finds in its first bytes. Universal and other hash profiles need
// a rule's key, cookie persistence needs HTTP: none.
func (fl *flow) profileKey(prof *config.Persistence) (persist.Key, bool) {
	switch prof.Method {
	case config.PersistSourceAddr:
		return prof.SourceKey(fl.Client.Addr()), true
	case config.PersistDestAddr:
		return persist.AddrKey(persist.DestAddress, fl.Local.Addr(), prof.Mask), true
	case config.PersistSSL:
		if len(fl.firstKey) > 0 { // the session the client resumes (sslpersist.go, tls.go)
			return sslKey(fl.firstKey), true
		}
	case config.PersistMSRDP:
		if len(fl.firstKey) > 0 { // the RDP client's cookie
			return persist.StringKey(persist.MSRDP, string(fl.firstKey)), true
		}
	case config.PersistHash:
		if len(fl.firstKey) > 0 { // the hash profile's payload key
			return persist.StringKey(persist.Hash, string(fl.firstKey)), true
		}
	}
	return persist.Key{}, false
}

// persistKey decides the flow's persistence key: a rule's choice, else the
// virtual's default profile, else its fallback (and the fallback as a
// second key when both give one). ok is false when the flow does not
// persist.
func (fl *flow) persistKey() (d persistDecision, ok bool) {
	cfg := fl.snap.Cfg
	if fp := fl.pers.Load(); fp != nil {
		fp.mu.Lock()
		set, none, key, to := fp.set, fp.none, fp.key, fp.timeout
		fp.mu.Unlock()
		if set {
			if none {
				return d, false
			}
			d.key, d.prof = key, cfg.ProfileFor(key.Mode)
			d.timeout = config.DefaultPersistTimeout
			if d.prof != nil {
				d.timeout = d.prof.Timeout
			}
			if to >= 0 {
				d.timeout = to
			}
			// The fallback applies when the rule's key finds no record.
			if fb := cfg.FallbackPersist; fb != nil {
				if k, has := fl.profileKey(fb); has && k.Mode != key.Mode {
					d.fb, d.fbProf = k, fb
				}
			}
			return d, true
		}
	}
	for _, prof := range []*config.Persistence{cfg.Persist, cfg.FallbackPersist} {
		if prof == nil {
			continue
		}
		k, has := fl.profileKey(prof)
		switch {
		case !has:
		case !ok:
			d, ok = persistDecision{key: k, prof: prof, timeout: prof.Timeout}, true
		case k != d.key:
			d.fb, d.fbProf = k, prof
		}
	}
	return d, ok
}

// persistLookup finds the member the flow persists to in pool, if any:
// the primary key's record, else the fallback's.
func (fl *flow) persistLookup(d *persistDecision, pool *state.Pool) (*state.Pool, *state.Member) {
	if q, m := fl.lookupKey(d.key, d.prof, pool); m != nil {
		return q, m
	}
	if d.fb.Mode != 0 {
		return fl.lookupKey(d.fb, d.fbProf, pool)
	}
	return nil, nil
}

func (fl *flow) lookupKey(k persist.Key, prof *config.Persistence, pool *state.Pool) (*state.Pool, *state.Member) {
	if prof != nil && prof.CARP {
		if m := state.CARPTarget(k, pool); m != nil {
			return pool, m
		}
		return nil, nil
	}
	s := state.PersistScope(fl.snap.Cfg, pool.Name, prof)
	return fl.e.env.Pools().PersistFind(fl.e.env.Persist, k, s, pool)
}

// persistSave makes or refreshes the flow's record (and the fallback's)
// once it is connected to member m of pool.
func (fl *flow) persistSave(d *persistDecision, pool *state.Pool, m *state.Member) {
	s := state.PersistScope(fl.snap.Cfg, pool.Name, d.prof)
	addr := m.Cfg.Load().Addr
	if d.prof == nil || !d.prof.CARP { // carp keeps no records
		fl.e.env.Persist.Add(d.key, s, addr, fl.Client.Addr(), d.timeout)
	}
	if d.fb.Mode != 0 && !d.fbProf.CARP {
		fl.e.env.Persist.Add(d.fb, state.PersistScope(fl.snap.Cfg, pool.Name, d.fbProf), addr, fl.Client.Addr(), d.fbProf.Timeout)
	}
	fp := fl.persistState()
	fp.mu.Lock()
	fp.made, fp.madeKey, fp.madeIn = true, d.key, s
	fp.mu.Unlock()
}

// persistState returns the flow's persistence state, made on first use
// (a rule event on one side and the connect path on the other may race to
// make it; flows that never persist never allocate it).
func (fl *flow) persistState() *flowPersist {
	if fp := fl.pers.Load(); fp != nil {
		return fp
	}
	fp := &flowPersist{timeout: -1}
	if fl.pers.CompareAndSwap(nil, fp) {
		return fp
	}
	return fl.pers.Load()
}

// persistDone refreshes the flow's record as the flow ends, so that a
// record lives its timeout after the last connection using it.
func (fl *flow) persistDone() {
	fp := fl.pers.Load()
	if fp == nil {
		return
	}
	fp.mu.Lock()
	made, k, s := fp.made, fp.madeKey, fp.madeIn
	fp.mu.Unlock()
	if made {
		fl.e.env.Persist.Touch(k, s)
	}
}

// ---- The persist command (rules.PersistConn) ----

var _ rules.PersistConn = (*proxied)(nil)

// RuleKey (irules.PersistFlow) turns a persist command's mode and key into the table's key.
func (pr *proxied) RuleKey(r rules.Persist) (persist.Key, error) {
	return irules.PersistKey(r, pr.Client, pr.Local)
}

// RuleScope (irules.PersistFlow) is the scope a persist add/lookup/delete acts in: this
// virtual and the flow's pool (or the one the key names), widened by the
// key's `any virtual|service|pool` or the virtual's profile of that mode.
func (pr *proxied) RuleScope(r rules.Persist, k persist.Key) (persist.Scope, error) {
	pool := pr.pool
	if pr.rs != nil && pr.rs.Pool != nil {
		pool = pr.rs.Pool
	}
	if sc := pr.srv.Load(); sc != nil && sc.pool != nil {
		pool = sc.pool
	}
	return irules.PersistScope(pr.snap.Cfg, poolName(pool), pr.namedPool, r, k)
}

// namedPool resolves a pool a rule names, as the virtual sees it.
func (pr *proxied) namedPool(name string) (string, bool) {
	if q := pr.e.env.Pools().Named(pr.Virtual, name); q != nil {
		return q.Name, true
	}
	return "", false
}

// poolName is a pool's full name, "" for none.
func poolName(p *state.Pool) string {
	if p == nil {
		return ""
	}
	return p.Name
}

// RuleTimeout implements irules.PersistFlow.
func (pr *proxied) RuleTimeout(r rules.Persist, k persist.Key) time.Duration {
	return irules.PersistTimeout(pr.snap.Cfg, r, k)
}

// Persist implements rules.PersistConn: persist uie|source_addr|none sets
// what this flow persists on. After load balancing (a server-side event)
// the record is made at once for the current member.
func (pr *proxied) Persist(r rules.Persist) error {
	fp := pr.persistState()
	if r.Method == rules.PersistNone {
		fp.mu.Lock()
		fp.set, fp.none = true, true
		fp.mu.Unlock()
		return nil
	}
	k, err := pr.RuleKey(r)
	if err != nil {
		return err
	}
	fp.mu.Lock()
	fp.set, fp.none, fp.key, fp.timeout = true, false, k, r.Timeout
	fp.mu.Unlock()
	if sc := pr.srv.Load(); sc != nil && sc.member != nil {
		d := persistDecision{key: k, prof: pr.snap.Cfg.ProfileFor(k.Mode), timeout: pr.RuleTimeout(r, k)}
		pr.persistSave(&d, sc.pool, sc.member)
	}
	return nil
}

// PersistAdd implements rules.PersistConn: a record for the key pointing
// at the flow's current (or just selected) member.
func (pr *proxied) PersistAdd(r rules.Persist) error {
	return irules.PersistAdd(pr.e.env.Persist, pr, r)
}

// PersistLookup implements rules.PersistConn.
func (pr *proxied) PersistLookup(r rules.Persist) (rules.PersistTarget, bool, error) {
	return irules.PersistLookup(pr.e.env.Persist, pr, r)
}

// PersistDelete implements rules.PersistConn.
func (pr *proxied) PersistDelete(r rules.Persist) error {
	return irules.PersistDelete(pr.e.env.Persist, pr, r)
}

// ClientAddr implements irules.PersistFlow.
func (pr *proxied) ClientAddr() netip.Addr { return pr.Client.Addr() }

// persistDown reports whether the flow's record (the primary's, else the
// fallback's) names a member of pool that is down or forced offline: the
// case PERSIST_DOWN is raised for.
func (fl *flow) persistDown(d *persistDecision, pool *state.Pool) bool {
	for _, k := range [2]struct {
		key  persist.Key
		prof *config.Persistence
	}{{d.key, d.prof}, {d.fb, d.fbProf}} {
		if k.key.Mode == 0 {
			continue
		}
		s := state.PersistScope(fl.snap.Cfg, pool.Name, k.prof)
		rec, ok := fl.e.env.Persist.Lookup(k.key, s)
		if !ok {
			continue
		}
		if _, m := fl.e.env.Pools().PersistTarget(&rec, pool, s.AcrossPools); m != nil {
			return false // a usable record: the flow persists
		}
		return fl.e.env.Pools().PersistDown(&rec, pool, s.AcrossPools)
	}
	return false
}

// persistDownEvent runs PERSIST_DOWN once per flow when its record's
// member is down (BIG-IP raises it even when another member can take the
// flow). again: the rule chose a pool, member or node, and the connect
// starts over with its choice; an error: the rule ended the flow.
func (pr *proxied) persistDownEvent(d *persistDecision, pool *state.Pool) (again bool, err error) {
	fp := pr.persistState()
	fp.mu.Lock()
	ran := fp.downRan
	fp.downRan = true
	fp.mu.Unlock()
	if ran || !pr.persistDown(d, pool) {
		return false, nil
	}
	rs := pr.rs
	rs.mu.Lock()
	rs.Changed = false
	rs.mu.Unlock()
	if !pr.runEvent(config.EventPersistDown) {
		return false, errFlowEnded
	}
	rs.mu.Lock()
	changed := rs.Changed
	rs.mu.Unlock()
	return changed, nil
}
