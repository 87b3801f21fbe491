package flows

import (
	"net/netip"
	"time"
)

// Record is one line of `show sys connection`: a client flow with one of its
// server legs, or with none yet (SSClient and SSServer invalid, printed as
// any6.any). It is a plain value so shows can format it without touching
// live state.
type Record struct {
	ID                 uint64
	CSClient, CSServer netip.AddrPort
	SSClient, SSServer netip.AddrPort
	Protocol           string
	Virtual            string
	Pool, Member       string
	Age                time.Duration
	Idle               time.Duration
	IdleTimeout        time.Duration
	// Client side and server side counters, from the proxy's view: In is
	// what it received on that side.
	CSBytesIn, CSBytesOut, CSPktsIn, CSPktsOut uint64
	SSBytesIn, SSBytesOut, SSPktsIn, SSPktsOut uint64
}

// Filter selects records like `show sys connection`'s options; a zero
// field matches anything.
type Filter struct {
	CSClientAddr, CSServerAddr, SSClientAddr, SSServerAddr netip.Addr
	CSClientPort, CSServerPort, SSClientPort, SSServerPort uint16
	Protocol                                               string
	// Virtual, Pool and Member narrow by owner (used by the dataplane, not
	// by tmsh options).
	Virtual, Pool, Member string
}

// IsZero reports whether f matches every record.
func (f Filter) IsZero() bool { return f == Filter{} }

func matchEnd(a netip.Addr, p uint16, ap netip.AddrPort) bool {
	if a.IsValid() && (!ap.IsValid() || ap.Addr().Unmap() != a.Unmap()) {
		return false
	}
	if p != 0 && (!ap.IsValid() || ap.Port() != p) {
		return false
	}
	return true
}

// Match reports whether r passes the filter.
func (f *Filter) Match(r *Record) bool {
	return matchEnd(f.CSClientAddr, f.CSClientPort, r.CSClient) &&
		matchEnd(f.CSServerAddr, f.CSServerPort, r.CSServer) &&
		matchEnd(f.SSClientAddr, f.SSClientPort, r.SSClient) &&
		matchEnd(f.SSServerAddr, f.SSServerPort, r.SSServer) &&
		(f.Protocol == "" || f.Protocol == r.Protocol) &&
		(f.Virtual == "" || f.Virtual == r.Virtual) &&
		(f.Pool == "" || f.Pool == r.Pool) &&
		(f.Member == "" || f.Member == r.Member)
}

// records fills out with f's lines (one per leg, or one without a server
// side) and returns it.
func (f *Flow) records(now int64, out []Record) []Record {
	base := Record{
		ID:          f.id,
		CSClient:    f.Client,
		CSServer:    f.Local,
		Protocol:    f.Protocol,
		Virtual:     f.Virtual,
		Age:         time.Duration(now - f.created),
		Idle:        time.Duration(now - f.lastActive.Load()),
		IdleTimeout: f.IdleTimeout(),
		CSBytesIn:   f.BytesIn.Load(),
		CSBytesOut:  f.BytesOut.Load(),
		CSPktsIn:    f.PktsIn.Load(),
		CSPktsOut:   f.PktsOut.Load(),
	}
	if base.Idle < 0 {
		base.Idle = 0
	}
	legs := f.Legs()
	if len(legs) == 0 {
		return append(out, base)
	}
	for _, l := range legs {
		r := base
		r.SSClient, r.SSServer = l.Client, l.Server
		r.Pool, r.Member = l.Pool, l.Member
		r.SSBytesIn, r.SSBytesOut = l.BytesIn.Load(), l.BytesOut.Load()
		r.SSPktsIn, r.SSPktsOut = l.PktsIn.Load(), l.PktsOut.Load()
		out = append(out, r)
	}
	return out
}

// Walk calls fn with every record that passes the filter, streaming: only
// one flow's records exist at a time. It stops when fn returns false and
// returns how many records fn saw.
func (t *Table) Walk(filter Filter, fn func(*Record) bool) int {
	now := time.Now().UnixNano()
	n := 0
	buf := make([]Record, 0, 4)
	t.Each(func(f *Flow) bool {
		buf = f.records(now, buf[:0])
		for i := range buf {
			if !filter.Match(&buf[i]) {
				continue
			}
			n++
			if !fn(&buf[i]) {
				return false
			}
		}
		return true
	})
	return n
}

// Matching returns the flows having at least one record that passes the
// filter (for `delete sys connection` and service-down-action).
func (t *Table) Matching(filter Filter) []*Flow {
	var out []*Flow
	now := time.Now().UnixNano()
	buf := make([]Record, 0, 4)
	t.Each(func(f *Flow) bool {
		buf = f.records(now, buf[:0])
		for i := range buf {
			if filter.Match(&buf[i]) {
				out = append(out, f)
				break
			}
		}
		return true
	})
	return out
}
