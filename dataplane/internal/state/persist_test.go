package state

import (
	"fmt"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
)

func TestCARPTarget(t *testing.T) {
	up := fixture{mon: MonUp}
	p, ms := pool(up, up, up, up)
	keys := make([]persist.Key, 400)
	for i := range keys {
		keys[i] = persist.StringKey(persist.Hash, fmt.Sprintf("acct-%d", i))
	}
	before := map[persist.Key]*Member{}
	per := map[*Member]int{}
	for _, k := range keys {
		m := CARPTarget(k, p)
		if m == nil || CARPTarget(k, p) != m {
			t.Fatalf("%v: %v, not stable", k, m)
		}
		before[k] = m
		per[m]++
	}
	for i, m := range ms {
		if per[m] < 50 {
			t.Errorf("member %d takes %d of %d keys: not spread", i, per[m], len(keys))
		}
	}
	// Member 2 forced offline: only its keys move, and none to it.
	ms[2].Cfg.Store(&config.Member{Addr: ms[2].Cfg.Load().Addr, State: config.StateUserDown})
	for _, k := range keys {
		m := CARPTarget(k, p)
		switch {
		case m == ms[2]:
			t.Fatalf("%v went to a forced-offline member", k)
		case before[k] != ms[2] && m != before[k]:
			t.Errorf("%v moved from %s to %s though its member stayed", k, before[k].Name, m.Name)
		}
	}
	// Addresses are keys too.
	a := persist.AddrKey(persist.SourceAddress, ms[0].Cfg.Load().Addr.Addr(), ms[0].Cfg.Load().Addr.Addr())
	first := CARPTarget(a, p)
	if first == nil || CARPTarget(a, p) != first {
		t.Error("address key not stable")
	}
}

func TestPersistDown(t *testing.T) {
	p, ms := pool(fixture{mon: MonUp}, fixture{mon: MonDown}, fixture{state: config.StateUserDown}, fixture{session: config.SessionUserDisabled})
	ps := Pools{p.Name: p}
	for i, want := range []bool{false, true, true, false} {
		rec := persist.Record{Pool: p.Name, Member: ms[i].Cfg.Load().Addr}
		if got := ps.PersistDown(&rec, p, false); got != want {
			t.Errorf("member %d: down %v, want %v", i, got, want)
		}
	}
}
