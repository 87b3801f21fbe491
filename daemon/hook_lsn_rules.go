package daemon

import (
	"errors"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/rules"
)

// lsnTables gives the rules the running lsn pools' tables
// (rules.LSNTables: LSN::inbound-entry, LSN::persistence-entry,
// XLAT::listen, XLAT::src_endpoint_reservation) of the attached
// dataplane; before one is attached, nothing is found.
type lsnTables struct{ flows *flowSwitch }

var errNoLSNPool = errors.New("no lsn pool of that name")

func (t lsnTables) set() *lsn.Set {
	if p := t.flows.p.Load(); p != nil {
		return p.LSNSet()
	}
	return &lsn.Set{}
}

// AddEntry implements rules.LSNTables.
func (t lsnTables) AddEntry(pool string, e rules.LSNEntry) (netip.AddrPort, error) {
	p := t.set().Lookup(pool)
	if p == nil {
		return netip.AddrPort{}, errNoLSNPool
	}
	return p.AddEntry(lsn.EntrySpec{Kind: lsn.EntryKind(e.Kind), Client: e.Client, At: e.At, UDP: e.UDP, Life: e.Life,
		Loose: e.Loose, Override: e.Override, Allow: e.Allow, Single: e.Single, NoPersist: e.NoPersist})
}

// Entry implements rules.LSNTables.
func (t lsnTables) Entry(at netip.AddrPort, udp bool) (rules.LSNEntryInfo, bool) {
	e, _, ok := t.set().Entry(at, udp)
	return rules.LSNEntryInfo{Kind: int(e.Kind), Pool: e.Pool, At: e.At, Client: e.Client, Left: e.Left}, ok
}

// SetEntryLife implements rules.LSNTables.
func (t lsnTables) SetEntryLife(at netip.AddrPort, udp bool, life time.Duration) bool {
	if _, p, ok := t.set().Entry(at, udp); ok {
		return p.SetEntryLife(at, udp, life)
	}
	return false
}

// Inbound implements rules.LSNTables.
func (t lsnTables) Inbound(at netip.AddrPort, udp bool) (netip.AddrPort, bool) {
	return t.set().Inbound(at, udp)
}

// DeleteInbound implements rules.LSNTables.
func (t lsnTables) DeleteInbound(at netip.AddrPort, udp bool) bool {
	return t.set().DeleteInbound(at, udp)
}

// PersistEntry implements rules.LSNTables.
func (t lsnTables) PersistEntry(pool string, client, to netip.AddrPort, ttl time.Duration, override bool) (netip.AddrPort, error) {
	p := t.set().Lookup(pool)
	if p == nil {
		return netip.AddrPort{}, errNoLSNPool
	}
	return p.PersistEntry(client, to, ttl, override)
}

// Persistence implements rules.LSNTables.
func (t lsnTables) Persistence(client netip.AddrPort) (netip.AddrPort, bool) {
	return t.set().Persistence(client)
}

// DeletePersistence implements rules.LSNTables.
func (t lsnTables) DeletePersistence(client netip.AddrPort) bool {
	return t.set().DeletePersistence(client)
}
