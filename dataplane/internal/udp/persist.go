package udp

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/rules"
)

// Persistence a rule asks for (rules.PersistConn): `persist uie`,
// `source_addr`, `dest_addr`, `hash` and `none` set what the flow's next
// choices persist on; `persist add|lookup|delete` act on the table at
// once. Keys, scopes and timeouts are the L4 path's (irules/persist.go).

var _ rules.PersistConn = (*flow)(nil)

// rulePersistState is a rule's persist decision for the flow.
type rulePersistState struct {
	set     bool // a rule chose; otherwise the virtual's profiles do
	none    bool
	key     persist.Key
	timeout time.Duration // <0: the profile's
}

// rulePersist folds a rule's persist decision into the flow's, before a
// choice. Only the reader calls it.
func (f *flow) rulePersist() {
	rs := f.rs
	rs.mu.Lock()
	rp := rs.persist
	rs.mu.Unlock()
	if !rp.set {
		return
	}
	if rp.none {
		f.persists = false
		return
	}
	d := persistDecision{key: rp.key, prof: f.snap.Cfg.ProfileFor(rp.key.Mode), timeout: config.DefaultPersistTimeout}
	if d.prof != nil {
		d.timeout = d.prof.Timeout
	}
	if rp.timeout >= 0 {
		d.timeout = rp.timeout
	}
	f.persists, f.pers = true, d
}

// persistSave makes or refreshes d's record for member m of pool.
// hash-algorithm carp keeps no record: the key's hash with the members
// decides.
func (f *flow) persistSave(d persistDecision, pool *state.Pool, m *state.Member) {
	if d.prof != nil && d.prof.CARP {
		return
	}
	s := state.PersistScope(f.snap.Cfg, pool.Name, d.prof)
	f.l.e.env.Persist.Add(d.key, s, m.Cfg.Load().Addr, f.Client.Addr(), d.timeout)
	f.mu.Lock()
	f.madePers, f.madeKey, f.madeScope = true, d.key, s
	f.mu.Unlock()
}

// persistLookup is state.Choose's persisted for this flow: the member the
// client's record points at in the pool being chosen in.
func (f *flow) persistLookup() (*state.Pool, *state.Member) {
	pool := f.choosing
	if prof := f.pers.prof; prof != nil && prof.CARP {
		if m := state.CARPTarget(f.pers.key, pool); m != nil {
			return pool, m
		}
		return nil, nil
	}
	s := state.PersistScope(f.snap.Cfg, pool.Name, f.pers.prof)
	return f.l.e.env.Pools().PersistFind(f.l.e.env.Persist, f.pers.key, s, pool)
}

// RuleKey (irules.PersistFlow) turns a persist command's mode and key into the table's key.
func (f *flow) RuleKey(r rules.Persist) (persist.Key, error) {
	return irules.PersistKey(r, f.Client, f.Local)
}

// RuleScope (irules.PersistFlow) is where a persist add/lookup/delete acts: this virtual and
// the flow's pool (or the one the command names), widened as the command
// or the virtual's profile of the mode says.
func (f *flow) RuleScope(r rules.Persist, k persist.Key) (persist.Scope, error) {
	pool := f.pool
	if f.rs.Pool != nil {
		pool = f.rs.Pool
	}
	if lg := f.curLeg(); lg != nil && lg.pool != nil {
		pool = lg.pool
	}
	name := ""
	if pool != nil {
		name = pool.Name
	}
	return irules.PersistScope(f.snap.Cfg, name, func(n string) (string, bool) {
		if q := f.l.e.env.Pools().Named(f.Virtual, n); q != nil {
			return q.Name, true
		}
		return "", false
	}, r, k)
}

// RuleTimeout implements irules.PersistFlow.
func (f *flow) RuleTimeout(r rules.Persist, k persist.Key) time.Duration {
	return irules.PersistTimeout(f.snap.Cfg, r, k)
}

// Persist implements rules.PersistConn: what the flow's next choices
// persist on. On the server side, the record is made at once for the
// member of the event.
func (f *flow) Persist(r rules.Persist) error {
	rs := f.rs
	if r.Method == rules.PersistNone {
		rs.persist = rulePersistState{set: true, none: true}
		return nil
	}
	k, err := f.RuleKey(r)
	if err != nil {
		return err
	}
	rs.persist = rulePersistState{set: true, key: k, timeout: r.Timeout}
	if lg := rs.cur; lg != nil && lg.member != nil {
		f.persistSave(persistDecision{key: k, prof: f.snap.Cfg.ProfileFor(k.Mode), timeout: f.RuleTimeout(r, k)}, lg.pool, lg.member)
	}
	return nil
}

// PersistAdd implements rules.PersistConn.
func (f *flow) PersistAdd(r rules.Persist) error {
	return irules.PersistAdd(f.l.e.env.Persist, f, r)
}

// PersistLookup implements rules.PersistConn.
func (f *flow) PersistLookup(r rules.Persist) (rules.PersistTarget, bool, error) {
	return irules.PersistLookup(f.l.e.env.Persist, f, r)
}

// PersistDelete implements rules.PersistConn.
func (f *flow) PersistDelete(r rules.Persist) error {
	return irules.PersistDelete(f.l.e.env.Persist, f, r)
}

// ClientAddr implements irules.PersistFlow.
func (f *flow) ClientAddr() netip.Addr { return f.Client.Addr() }
