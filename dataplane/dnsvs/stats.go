package dnsvs

import "sync/atomic"

// ProfileStats are a dns profile's counters, summed over the virtuals
// using it: which step answered the queries, so that an operator sees
// how much the GSLB, the zones and the cache spare the pool. They live
// across commits by the profile's name.
type ProfileStats struct {
	// Queries counts the queries the profile's steps saw.
	Queries atomic.Uint64
	// Malformed counts those answered NOTIMP or FORMERR.
	Malformed atomic.Uint64
	// GSLB counts the answers of a wide IP or a static zone
	// (enable-gtm, enable-dns-express).
	GSLB atomic.Uint64
	// CacheHits counts the answers the cache gave.
	CacheHits atomic.Uint64
	// Allow, Drop, Reject, Hint and NoError count the queries
	// unhandled-query-action took.
	Allow, Drop, Reject, Hint, NoError atomic.Uint64
	// PoolAnswers counts the queries a member answered, NoAnswer those
	// none did.
	PoolAnswers, NoAnswer atomic.Uint64
	// Deleted counts the UDP queries delete sys connection ended while
	// they waited for a member (their exchange closed, no answer sent).
	Deleted atomic.Uint64
	// DNS64 counts the AAAA answers synthesized from A records.
	DNS64 atomic.Uint64
	// RapidAnswers counts the UDP queries Rapid Response answered from
	// DNS Express; the others count the rapid-response-last-action each
	// query it did not answer got.
	RapidAnswers, RapidAllow, RapidDrop, RapidNoError, RapidNXDomain, RapidRefuse, RapidTruncate atomic.Uint64
}

// ProfileCounts are ProfileStats read at once, for show ltm profile dns.
type ProfileCounts struct {
	Queries, Malformed, GSLB, CacheHits uint64
	Allow, Drop, Reject, Hint, NoError  uint64
	PoolAnswers, NoAnswer, DNS64        uint64
	Deleted                             uint64

	RapidAnswers, RapidAllow, RapidDrop, RapidNoError, RapidNXDomain, RapidRefuse, RapidTruncate uint64
}

// Counts reads the counters.
func (st *ProfileStats) Counts() ProfileCounts {
	return ProfileCounts{
		Queries: st.Queries.Load(), Malformed: st.Malformed.Load(), GSLB: st.GSLB.Load(), CacheHits: st.CacheHits.Load(),
		Allow: st.Allow.Load(), Drop: st.Drop.Load(), Reject: st.Reject.Load(), Hint: st.Hint.Load(), NoError: st.NoError.Load(),
		PoolAnswers: st.PoolAnswers.Load(), NoAnswer: st.NoAnswer.Load(), DNS64: st.DNS64.Load(), Deleted: st.Deleted.Load(),
		RapidAnswers: st.RapidAnswers.Load(), RapidAllow: st.RapidAllow.Load(), RapidDrop: st.RapidDrop.Load(),
		RapidNoError: st.RapidNoError.Load(), RapidNXDomain: st.RapidNXDomain.Load(), RapidRefuse: st.RapidRefuse.Load(),
		RapidTruncate: st.RapidTruncate.Load(),
	}
}

// Reset zeroes the counters (reset-stats ltm profile dns).
func (st *ProfileStats) Reset() {
	for _, c := range []*atomic.Uint64{&st.Queries, &st.Malformed, &st.GSLB, &st.CacheHits, &st.Allow, &st.Drop, &st.Reject,
		&st.Hint, &st.NoError, &st.PoolAnswers, &st.NoAnswer, &st.Deleted, &st.DNS64, &st.RapidAnswers, &st.RapidAllow, &st.RapidDrop,
		&st.RapidNoError, &st.RapidNXDomain, &st.RapidRefuse, &st.RapidTruncate} {
		c.Store(0)
	}
}

// ProfileStats are the named profile's counters; nil when no virtual
// uses it.
func (e *Engine) ProfileStats(name string) *ProfileStats {
	e.mu.Lock()
	defer e.mu.Unlock()
	if st := e.stats[name]; st != nil {
		return st
	}
	return e.lstats[name]
}
