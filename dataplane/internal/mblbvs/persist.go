package mblbvs

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"

	"github.com/openltm/openltm/dataplane/internal/state"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/rules"
)

// A message's persistence key travels through the MBLB engine as one
// string (mblb.Choice.Persist): the mode letter, the rule's timeout in
// milliseconds (-1 for the profile's), and the key, so the engine stays
// ignorant of persistence.
func encodePersist(mode persist.Mode, timeout time.Duration, key string) string {
	ms := int64(-1)
	if timeout >= 0 {
		ms = timeout.Milliseconds()
	}
	return fmt.Sprintf("%d %d %s", mode, ms, key)
}

func decodePersist(s string) (mode persist.Mode, timeout time.Duration, key string, ok bool) {
	f := strings.SplitN(s, " ", 3)
	if len(f) != 3 {
		return 0, 0, "", false
	}
	m, err1 := strconv.Atoi(f[0])
	ms, err2 := strconv.ParseInt(f[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	timeout = -1
	if ms >= 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	return persist.Mode(m), timeout, f[2], true
}

// persistKey is the table key for one message: the rule's `persist` for
// it, else the virtual's source-address profile keyed on the client.
func (mv *VS) persistKey(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice) (config.PersistKey, bool) {
	k := config.PersistKey{Virtual: snap.Cfg.Name, Pool: pool.Name, Client: c.Client.Addr()}
	if c.Persist != "" {
		mode, to, key, ok := decodePersist(c.Persist)
		if !ok {
			return k, false
		}
		k.Mode, k.Key = mode, key
		if to > 0 {
			k.Timeout = to
		}
		return k, true
	}
	for _, p := range []*config.Persistence{snap.Cfg.Persist, snap.Cfg.FallbackPersist} {
		if p != nil && p.Method == config.PersistSourceAddr && c.Client.IsValid() {
			k.Mode, k.Key = persist.SourceAddress, c.Client.Addr().String()
			return k, true
		}
	}
	return k, false
}

// persistLookup is the persistence table's answer for a message's key:
// the pool and member, or nil (no key, no record, or a member that may
// not take it: forced offline or down; a disabled member still takes
// persisted messages).
func (mv *VS) persistLookup(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice) (*state.Pool, *state.Member) {
	k, ok := mv.persistKey(snap, pool, c)
	if !ok {
		return nil, nil
	}
	return mv.env.PersistFind(k)
}

// persistRecord stores the member balanced for a message's key.
func (mv *VS) persistRecord(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice, m *state.Member) {
	if k, ok := mv.persistKey(snap, pool, c); ok {
		mv.env.PersistSave(k, pool.Name, m.Cfg.Load().Addr)
	}
}

// Persist implements rules.PersistConn for message-based virtuals: in
// CLIENT_DATA it sets the key the messages notified after it persist on.
func (r *mblbRules) Persist(p rules.Persist) error {
	set := func(key string) {
		if r.hx != nil {
			r.hx.Persist(key)
		} else {
			r.d.Persist(key)
		}
	}
	switch {
	case r.hx != nil && r.hx.IsResponse():
		return fmt.Errorf("persist on a message-based virtual server applies to requests: use it in HTTP_REQUEST")
	case r.hx == nil && r.d == nil:
		return fmt.Errorf("persist on a message-based virtual server works per message, in CLIENT_DATA (HTTP_REQUEST with an http profile)")
	}
	switch p.Method {
	case rules.PersistNone:
		set("")
	case rules.PersistUniversal:
		set(encodePersist(persist.Universal, p.Timeout, p.Key))
	case rules.PersistSourceAddr:
		a := r.f.sess.Client().Addr()
		if p.Key != "" {
			var err error
			if a, err = netip.ParseAddr(p.Key); err != nil {
				return fmt.Errorf("persist source_addr: %q is not an address", p.Key)
			}
		}
		if p.Mask.IsValid() {
			if pre, err := a.Prefix(maskBits(p.Mask)); err == nil {
				a = pre.Addr()
			}
		}
		set(encodePersist(persist.SourceAddress, p.Timeout, a.String()))
	}
	return nil
}

// maskBits counts a netmask's leading ones.
func maskBits(m netip.Addr) int {
	n := 0
	for _, b := range m.AsSlice() {
		for i := 7; i >= 0; i-- {
			if b&(1<<i) == 0 {
				return n
			}
			n++
		}
	}
	return n
}

func (r *mblbRules) persistArgs(p rules.Persist) config.PersistKey {
	pool := p.Pool
	if pool == "" {
		pool = r.snap.Cfg.Pool
	}
	k := config.PersistKey{Virtual: r.snap.Cfg.Name, Pool: pool, Key: p.Key, Client: r.f.sess.Client().Addr()}
	k.Mode = persist.Universal
	if p.Method == rules.PersistSourceAddr {
		k.Mode = persist.SourceAddress
		if k.Key == "" {
			k.Key = r.f.sess.Client().Addr().String()
		}
	}
	if p.Timeout > 0 {
		k.Timeout = p.Timeout
	}
	return k
}

// PersistAdd implements rules.PersistConn. A message-based flow has no
// single selected member to record; the record is made per message when
// `persist uie` is set in CLIENT_DATA.
func (r *mblbRules) PersistAdd(p rules.Persist) error {
	return fmt.Errorf("persist add is not available on a message-based virtual server: use persist uie in CLIENT_DATA, which records each message's member")
}

// PersistLookup implements rules.PersistConn.
func (r *mblbRules) PersistLookup(p rules.Persist) (rules.PersistTarget, bool, error) {
	pool, m, ok := r.f.mv.env.PersistLookup(r.persistArgs(p))
	return rules.PersistTarget{Pool: pool, Member: m}, ok, nil
}

// PersistDelete implements rules.PersistConn.
func (r *mblbRules) PersistDelete(p rules.Persist) error {
	r.f.mv.env.PersistDelete(r.persistArgs(p))
	return nil
}
