package state

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
)

// PersistScope is where a record of virtual v and pool is made, and how
// far a lookup with prof's settings reaches.
func PersistScope(v *config.Virtual, pool string, prof *config.Persistence) persist.Scope {
	s := persist.Scope{Virtual: v.Name, VirtualAddr: v.Destination, Pool: pool}
	if prof != nil {
		s.AcrossServices, s.AcrossVirtuals, s.AcrossPools = prof.MatchAcrossServices, prof.MatchAcrossVirtuals, prof.MatchAcrossPools
	}
	return s
}

// Persistable reports whether m may take a persisted client: a disabled
// member (or node) still does, a forced-offline or down one does not
// (reference §3.3).
func (m *Member) Persistable() bool { return m.Availability() <= AvailDisabled }

// PersistTarget resolves a record to the member it persists to: in the
// record's pool when match-across-pools lets another pool's record serve,
// else in pool; the exact member when the record names one there, else
// (records of other virtuals, matched across services or virtuals, which
// name a node) a member on the record's node address. nil when the member
// is gone or may not take persisted clients.
func (ps Pools) PersistTarget(rec *persist.Record, pool *Pool, acrossPools bool) (*Pool, *Member) {
	if acrossPools && rec.Pool != pool.Name {
		if q := ps[rec.Pool]; q != nil {
			pool = q
		}
	}
	s := pool.Snap.Load()
	if s == nil {
		return nil, nil
	}
	var node *Member
	for _, m := range s.Members {
		a := m.Cfg.Load().Addr
		if a == rec.Member {
			if m.Persistable() {
				return pool, m
			}
			return nil, nil
		}
		if node == nil && a.Addr() == rec.Member.Addr() && m.Persistable() {
			node = m
		}
	}
	if node == nil {
		return nil, nil
	}
	return pool, node
}

// PersistFind is the member a lookup of k in scope s persists to in
// pool (see PersistTarget). The most recently used matching record
// decides; when it is another virtual's or pool's (a match-across
// setting) and names no member this one may use, the virtual's own record
// in pool decides instead, so that a client is not balanced again (and
// moved) because a record elsewhere, used later, names a node this pool
// lacks. The second lookup runs only then.
func (ps Pools) PersistFind(t *persist.Table, k persist.Key, s persist.Scope, pool *Pool) (*Pool, *Member) {
	rec, ok := t.Lookup(k, s)
	if !ok {
		return nil, nil
	}
	if q, m := ps.PersistTarget(&rec, pool, s.AcrossPools); m != nil {
		return q, m
	}
	if rec.Virtual == s.Virtual && rec.Pool == pool.Name {
		return nil, nil
	}
	own := persist.Scope{Virtual: s.Virtual, VirtualAddr: s.VirtualAddr, Pool: pool.Name}
	if rec, ok = t.Lookup(k, own); !ok {
		return nil, nil
	}
	return ps.PersistTarget(&rec, pool, false)
}

// PersistDown reports whether a record names a member (in the pool
// PersistTarget would look in) that exists and may not take persisted
// clients because it is down or forced offline: iRules' PERSIST_DOWN.
func (ps Pools) PersistDown(rec *persist.Record, pool *Pool, acrossPools bool) bool {
	if acrossPools && rec.Pool != pool.Name {
		if q := ps[rec.Pool]; q != nil {
			pool = q
		}
	}
	s := pool.Snap.Load()
	if s == nil {
		return false
	}
	var node *Member
	for _, m := range s.Members {
		a := m.Cfg.Load().Addr
		if a == rec.Member {
			return m.Availability() >= AvailDown
		}
		if node == nil && a.Addr() == rec.Member.Addr() {
			node = m
		}
	}
	// A record of another virtual names a node.
	return node != nil && node.Availability() >= AvailDown
}

// CARPTarget is hash-algorithm carp's member for key k in pool: among the
// members that may be load balanced to (up and below their limits), the
// one whose hash with the key is highest (rendezvous hashing). The same
// key gives the same member while the pool's members stay, and a member
// that goes away moves only its own keys. nil when none is available.
func CARPTarget(k persist.Key, pool *Pool) *Member {
	s := pool.Snap.Load()
	if s == nil {
		return nil
	}
	kh := keyHash(k)
	var best *Member
	var bestScore uint64
	for _, m := range s.Members {
		if !m.Usable() || m.AtLimit() {
			continue
		}
		a := m.Cfg.Load().Addr
		b := a.Addr().Unmap().As16()
		h := kh
		for _, c := range b {
			h = (h ^ uint64(c)) * fnvPrime
		}
		h = (h ^ uint64(a.Port()>>8)) * fnvPrime
		h = (h ^ uint64(a.Port()&0xff)) * fnvPrime
		if sc := mix(h); best == nil || sc > bestScore {
			best, bestScore = m, sc
		}
	}
	return best
}

// keyHash hashes a persistence key, stable across restarts.
func keyHash(k persist.Key) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(k.Mode)) * fnvPrime
	if k.Addr.IsValid() {
		for _, c := range k.Addr.Unmap().As16() {
			h = (h ^ uint64(c)) * fnvPrime
		}
		return h
	}
	for i := 0; i < len(k.Str); i++ {
		h = (h ^ uint64(k.Str[i])) * fnvPrime
	}
	return h
}
