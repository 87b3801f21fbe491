package irules

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/rules"
)

// The persist command's key, scope and timeout, the same on every flow
// (L4, UDP): what differs is only where the flow's addresses and pool
// come from.

// PersistKey turns a persist command's mode and key into the table's key:
// source_addr and dest_addr default to the flow's client and virtual
// addresses.
func PersistKey(r rules.Persist, client, local netip.AddrPort) (persist.Key, error) {
	addr := func(def netip.Addr) (netip.Addr, error) {
		if r.Key == "" {
			return def, nil
		}
		a, err := netip.ParseAddr(r.Key)
		if err != nil {
			return netip.Addr{}, fmt.Errorf("persist: %q is not an address", r.Key)
		}
		return a, nil
	}
	switch r.Method {
	case rules.PersistSourceAddr:
		a, err := addr(client.Addr())
		if err != nil {
			return persist.Key{}, err
		}
		return persist.AddrKey(persist.SourceAddress, a, r.Mask), nil
	case rules.PersistDestAddr:
		a, err := addr(local.Addr())
		if err != nil {
			return persist.Key{}, err
		}
		return persist.AddrKey(persist.DestAddress, a, r.Mask), nil
	case rules.PersistUniversal:
		return persist.StringKey(persist.Universal, r.Key), nil
	case rules.PersistHash:
		return persist.StringKey(persist.Hash, r.Key), nil
	case rules.PersistSIP:
		// SIP::persist: the sip_info records, which the sip profile's
		// Call-ID persistence keys too.
		return persist.StringKey(persist.SIP, r.Key), nil
	case rules.PersistCookie:
		// BIG-IP refuses it on a virtual without an http profile.
		return persist.Key{}, errors.New("persist cookie requires an http profile and a cookie persistence profile on the virtual server")
	}
	return persist.Key{}, errors.New("persist: unsupported mode")
}

// PersistScope is where a persist add/lookup/delete acts: virtual v and
// pool (the flow's, or the one the command names, which named resolves),
// widened by the command's `any virtual|service|pool` or the virtual's
// profile of the key's mode.
func PersistScope(v *config.Virtual, pool string, named func(string) (string, bool), r rules.Persist, k persist.Key) (persist.Scope, error) {
	if r.Pool != "" {
		full, ok := named(r.Pool)
		if !ok {
			return persist.Scope{}, fmt.Errorf("no such pool: %s", r.Pool)
		}
		pool = full
	}
	s := state.PersistScope(v, pool, v.ProfileFor(k.Mode))
	s.AcrossVirtuals = s.AcrossVirtuals || r.AnyVirtual
	s.AcrossServices = s.AcrossServices || r.AnyService
	s.AcrossPools = s.AcrossPools || r.AnyPool
	return s, nil
}

// PersistTimeout is the command's timeout, else the virtual's profile of
// the key's mode, else F5's default.
func PersistTimeout(v *config.Virtual, r rules.Persist, k persist.Key) time.Duration {
	if r.Timeout >= 0 {
		return r.Timeout
	}
	if prof := v.ProfileFor(k.Mode); prof != nil {
		return prof.Timeout
	}
	return config.DefaultPersistTimeout
}

// PersistFlow is what `persist add|lookup|delete` need of a flow: its key,
// scope and timeout for a command (PersistKey, PersistScope and
// PersistTimeout with the flow's addresses and pool), the member chosen so
// far, and its client.
type PersistFlow interface {
	RuleKey(r rules.Persist) (persist.Key, error)
	RuleScope(r rules.Persist, k persist.Key) (persist.Scope, error)
	RuleTimeout(r rules.Persist, k persist.Key) time.Duration
	LBServer() (pool string, member netip.AddrPort, ok bool)
	ClientAddr() netip.Addr
}

// PersistAdd is `persist add`: a record for the key pointing at the flow's
// current (or just selected) member.
func PersistAdd(t *persist.Table, f PersistFlow, r rules.Persist) error {
	k, err := f.RuleKey(r)
	if err != nil {
		return err
	}
	pool, addr, ok := f.LBServer()
	if !ok || pool == "" {
		return errors.New("persist add: no pool member selected yet")
	}
	r.Pool = pool
	s, err := f.RuleScope(r, k)
	if err != nil {
		return err
	}
	t.Add(k, s, addr, f.ClientAddr(), f.RuleTimeout(r, k))
	return nil
}

// PersistLookup is `persist lookup`.
func PersistLookup(t *persist.Table, f PersistFlow, r rules.Persist) (rules.PersistTarget, bool, error) {
	k, err := f.RuleKey(r)
	if err != nil {
		return rules.PersistTarget{}, false, err
	}
	s, err := f.RuleScope(r, k)
	if err != nil {
		return rules.PersistTarget{}, false, err
	}
	rec, ok := t.Lookup(k, s)
	if !ok {
		return rules.PersistTarget{}, false, nil
	}
	return rules.PersistTarget{Pool: rec.Pool, Member: rec.Member}, true, nil
}

// PersistDelete is `persist delete`.
func PersistDelete(t *persist.Table, f PersistFlow, r rules.Persist) error {
	k, err := f.RuleKey(r)
	if err != nil {
		return err
	}
	s, err := f.RuleScope(r, k)
	if err != nil {
		return err
	}
	t.Delete(k, s)
	return nil
}
