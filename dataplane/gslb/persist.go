package gslb

import (
	"net/netip"
	"sort"
	"sync"
	"time"
)

// LDNS persistence: wide IP `persistence enabled` keeps an LDNS (masked by
// persist-cidr) on its answer for ttl-persistence seconds after its last
// request.

type persistKey struct {
	wideIP string
	ldns   netip.Prefix
}

type persistRec struct {
	pool    string
	member  string
	addr    netip.Addr
	created time.Time
	expires time.Time
}

type persistTable struct {
	mu sync.Mutex
	m  map[persistKey]*persistRec
}

// get returns the record's pool and member and, when found, pushes its
// expiry to expires.
func (t *persistTable) get(k persistKey, now, expires time.Time) (pool, member string, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.m[k]
	if r == nil {
		return "", "", false
	}
	if !now.Before(r.expires) {
		delete(t.m, k)
		return "", "", false
	}
	r.expires = expires
	return r.pool, r.member, true
}

func (t *persistTable) put(k persistKey, d *decision, expires, now time.Time) {
	t.mu.Lock()
	t.m[k] = &persistRec{pool: d.pool.name, member: d.member.name, addr: d.member.vs.addr, created: now, expires: expires}
	t.mu.Unlock()
}

// sweep drops expired records.
func (t *persistTable) sweep(now time.Time) {
	t.mu.Lock()
	for k, r := range t.m {
		if !now.Before(r.expires) {
			delete(t.m, k)
		}
	}
	t.mu.Unlock()
}

// PersistRecord is one LDNS persistence record (`show gtm persist`).
type PersistRecord struct {
	// WideIP is the wide IP's full path; LDNS the masked LDNS address.
	WideIP string
	LDNS   netip.Prefix
	// Pool and Member (`<server>:<vs>`) the LDNS is kept on; Addr the
	// answer.
	Pool    string
	Member  string
	Addr    netip.Addr
	Created time.Time
	Expires time.Time
}

// PersistRecords lists the unexpired persistence records, by wide IP and
// LDNS.
func (s *Server) PersistRecords() []PersistRecord {
	now := s.now()
	s.persist.mu.Lock()
	out := make([]PersistRecord, 0, len(s.persist.m))
	for k, r := range s.persist.m {
		if now.Before(r.expires) {
			out = append(out, PersistRecord{WideIP: k.wideIP, LDNS: k.ldns, Pool: r.pool, Member: r.member, Addr: r.addr, Created: r.created, Expires: r.expires})
		}
	}
	s.persist.mu.Unlock()
	sort.Slice(out, func(i, j int) bool {
		if out[i].WideIP != out[j].WideIP {
			return out[i].WideIP < out[j].WideIP
		}
		return out[i].LDNS.Addr().Less(out[j].LDNS.Addr())
	})
	return out
}

// DeletePersistRecords removes the records of one wide IP ("" for all)
// whose LDNS prefix holds addr (the zero Addr for all), as `delete gtm
// persist` does, and reports how many went.
func (s *Server) DeletePersistRecords(wideIP string, addr netip.Addr) int {
	s.persist.mu.Lock()
	defer s.persist.mu.Unlock()
	n := 0
	for k := range s.persist.m {
		if (wideIP == "" || k.wideIP == wideIP) && (!addr.IsValid() || k.ldns.Contains(addr.Unmap())) {
			delete(s.persist.m, k)
			n++
		}
	}
	return n
}
