package gslb

import (
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
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
	// expires (Unix nanoseconds) is pushed out by each hit, without the
	// table's lock: a reader's memo (persistMemo) holds the record.
	expires atomic.Int64
	// gone is set when the record leaves the table (expired, deleted,
	// replaced), so that a memo holding it looks in the table again.
	gone atomic.Bool
}

// live reports whether r has not expired at now (Unix nanoseconds) and is
// still in the table.
func (r *persistRec) live(now int64) bool {
	return now < r.expires.Load() && !r.gone.Load()
}

// touch pushes r's expiry out to expires when that moves it by a second
// or more (an eighth of the timeout, now to expires, when that is
// shorter). Why: persistence timeouts are whole seconds, and a store per
// query would make the readers of every CPU pass the record's cache line
// between them.
func (r *persistRec) touch(now, expires int64) {
	if expires-r.expires.Load() >= min(int64(time.Second), (expires-now)/8) {
		r.expires.Store(expires)
	}
}

type persistTable struct {
	mu sync.Mutex
	m  map[persistKey]*persistRec
}

// get returns the live record of k, its expiry pushed out to expires.
func (t *persistTable) get(k persistKey, now, expires int64) *persistRec {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.m[k]
	if r == nil {
		return nil
	}
	if now >= r.expires.Load() {
		t.drop(k, r)
		return nil
	}
	r.touch(now, expires)
	return r
}

func (t *persistTable) put(k persistKey, d *decision, expires, now time.Time) {
	r := &persistRec{pool: d.pool.name, member: d.member.name, addr: d.member.vs.addr, created: now}
	r.expires.Store(expires.UnixNano())
	t.mu.Lock()
	if old := t.m[k]; old != nil {
		old.gone.Store(true)
	}
	t.m[k] = r
	t.mu.Unlock()
}

// drop removes k's record r. The caller holds mu.
func (t *persistTable) drop(k persistKey, r *persistRec) {
	r.gone.Store(true)
	delete(t.m, k)
}

// sweep drops expired records.
func (t *persistTable) sweep(now time.Time) {
	ns := now.UnixNano()
	t.mu.Lock()
	for k, r := range t.m {
		if ns >= r.expires.Load() {
			t.drop(k, r)
		}
	}
	t.mu.Unlock()
}

// persistMemo is a UDP reader's memo of the last persistence record it
// used, with the pool and member the record names under the plan that
// resolved them. Why: the queries a reader gets in a row mostly come from
// one LDNS for one wide IP, and a hit then costs two atomic loads instead
// of the table's lock, a map lookup and the search for the member by name.
type persistMemo struct {
	plan *plan
	w    *wideIP
	key  netip.Prefix
	rec  *persistRec
	pl   *pool
	m    *member
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
	now := s.now().UnixNano()
	s.persist.mu.Lock()
	out := make([]PersistRecord, 0, len(s.persist.m))
	for k, r := range s.persist.m {
		if e := r.expires.Load(); now < e {
			out = append(out, PersistRecord{WideIP: k.wideIP, LDNS: k.ldns, Pool: r.pool, Member: r.member, Addr: r.addr, Created: r.created, Expires: time.Unix(0, e)})
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
	for k, r := range s.persist.m {
		if (wideIP == "" || k.wideIP == wideIP) && (!addr.IsValid() || k.ldns.Contains(addr.Unmap())) {
			s.persist.drop(k, r)
			n++
		}
	}
	return n
}
