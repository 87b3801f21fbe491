package dataplane

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/persist"
)

// ---- For shows and message-based load balancing ----

// PersistRecords calls fn for each persistence record that passes f
// (show ltm persistence persist-records); fn returns false to stop.
func (p *Plane) PersistRecords(f persist.Filter, fn func(*persist.Record) bool) int {
	return p.persist.Walk(f, fn)
}

// DeletePersistRecords removes the records that pass f and returns how
// many went (delete ltm persistence persist-records).
func (p *Plane) DeletePersistRecords(f persist.Filter) int {
	return p.persist.DeleteMatching(f)
}

func (p *Plane) persistArgs(k PersistKey) (persist.Key, persist.Scope, time.Duration, *state.Pool, error) {
	cfg := p.running.Load()
	var v *Virtual
	if cfg != nil {
		v = cfg.Virtuals[k.Virtual]
	}
	if v == nil {
		return persist.Key{}, persist.Scope{}, 0, nil, fmt.Errorf("no such virtual server: %s", k.Virtual)
	}
	pool := p.rulePools()[k.Pool]
	if pool == nil {
		return persist.Key{}, persist.Scope{}, 0, nil, fmt.Errorf("no such pool: %s", k.Pool)
	}
	prof := v.ProfileFor(k.Mode)
	key := persist.StringKey(k.Mode, k.Key)
	if k.Mode == persist.SourceAddress || k.Mode == persist.DestAddress {
		a, err := netip.ParseAddr(k.Key)
		if err != nil {
			return persist.Key{}, persist.Scope{}, 0, nil, fmt.Errorf("persistence key %q is not an address", k.Key)
		}
		var mask netip.Addr
		if prof != nil {
			mask = prof.Mask
		}
		key = persist.AddrKey(k.Mode, a, mask)
		if prof != nil && k.Mode == persist.SourceAddress {
			key = prof.SourceKey(a)
		}
	}
	to := DefaultPersistTimeout
	if prof != nil {
		to = prof.Timeout
	}
	if k.Timeout > 0 {
		to = k.Timeout
	}
	return key, state.PersistScope(v, k.Pool, prof), to, pool, nil
}

// PersistLookup returns the member a record sends k to: the pool (another
// one only under match-across-pools) and the member's address. ok is false
// when there is no record, or its member is gone, forced offline or down
// (a disabled member still takes persisted clients); the caller then load
// balances and calls PersistSave.
func (p *Plane) PersistLookup(k PersistKey) (pool string, member netip.AddrPort, ok bool) {
	q, m := p.persistFind(k)
	if m == nil {
		return "", netip.AddrPort{}, false
	}
	return q.Name, m.Cfg.Load().Addr, true
}

// persistFind is PersistLookup's answer as runtimes: the pool and the
// member, nil when there is none.
func (p *Plane) persistFind(k PersistKey) (*state.Pool, *state.Member) {
	key, s, _, prt, err := p.persistArgs(k)
	if err != nil {
		return nil, nil
	}
	if prof := p.running.Load().Virtuals[k.Virtual].ProfileFor(k.Mode); prof != nil && prof.CARP {
		if m := state.CARPTarget(key, prt); m != nil {
			return prt, m
		}
		return nil, nil
	}
	return p.rulePools().PersistFind(&p.persist, key, s, prt)
}

// PersistSave makes or refreshes the record for k pointing at member of
// pool, after the caller's load-balancing decision (or a PersistLookup
// hit, to refresh it).
func (p *Plane) PersistSave(k PersistKey, pool string, member netip.AddrPort) error {
	key, s, to, _, err := p.persistArgs(k)
	if err != nil {
		return err
	}
	if pool != "" {
		s.Pool = pool
	}
	if prof := p.running.Load().Virtuals[k.Virtual].ProfileFor(k.Mode); prof != nil && prof.CARP {
		return nil // carp keeps no records
	}
	p.persist.Add(key, s, member, k.Client, to)
	return nil
}

// PersistDelete removes the records PersistLookup would find for k.
func (p *Plane) PersistDelete(k PersistKey) {
	key, s, _, _, err := p.persistArgs(k)
	if err == nil {
		p.persist.Delete(key, s)
	}
}

// persistDown reports whether k's record names a member that is down or
// forced offline: the case iRules' PERSIST_DOWN is raised for.
func (p *Plane) persistDown(k PersistKey) bool {
	key, s, _, prt, err := p.persistArgs(k)
	if err != nil {
		return false
	}
	rec, found := p.persist.Lookup(key, s)
	return found && p.rulePools().PersistDown(&rec, prt, s.AcrossPools)
}
