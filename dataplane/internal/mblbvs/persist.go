package mblbvs

import (
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"

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
	var buf [48]byte
	b := strconv.AppendInt(buf[:0], int64(mode), 10)
	b = append(b, ' ')
	b = strconv.AppendInt(b, ms, 10)
	b = append(b, ' ')
	b = append(b, key...)
	return string(b) // the one allocation
}

func decodePersist(s string) (mode persist.Mode, timeout time.Duration, key string, ok bool) {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return 0, 0, "", false
	}
	j := strings.IndexByte(s[i+1:], ' ')
	if j < 0 {
		return 0, 0, "", false
	}
	j += i + 1
	m, err1 := strconv.Atoi(s[:i])
	ms, err2 := strconv.ParseInt(s[i+1:j], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	timeout = -1
	if ms >= 0 {
		timeout = time.Duration(ms) * time.Millisecond
	}
	return persist.Mode(m), timeout, s[j+1:], true
}

// persistKeys are the table keys for one message: the rule's `persist`
// for it, else the key of the virtual's default profile; and the
// fallback profile's key, looked up when the first finds no record. n
// is how many there are.
func (mv *VS) persistKeys(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice) (ks [2]config.PersistKey, n int) {
	if c.NoPersist {
		return ks, 0 // a rule's persist none
	}
	base := config.PersistKey{Virtual: snap.Cfg.Name, Pool: pool.Name, Client: c.Client.Addr()}
	if c.Persist != "" {
		mode, to, key, ok := decodePersist(c.Persist)
		if ok {
			ks[n] = base
			ks[n].Mode, ks[n].Key = mode, key
			if to > 0 {
				ks[n].Timeout = to
			}
			n++
		}
	}
	for _, p := range []*config.Persistence{snap.Cfg.Persist, snap.Cfg.FallbackPersist} {
		if p == nil || n == len(ks) || (n > 0 && p != snap.Cfg.FallbackPersist) {
			continue
		}
		k := base
		switch {
		case p.Method == config.PersistSourceAddr && c.Client.IsValid():
			k.Mode, k.Key = persist.SourceAddress, c.Client.Addr().String()
		case p.Method == config.PersistDestAddr:
			f, _ := c.Tag.(*mblbFlow)
			k.Mode, k.Key = persist.DestAddress, reachedAddr(snap, f).String()
		case p.Method == config.PersistSIP && c.SIPKey != "":
			k.Mode, k.Key = persist.SIP, c.SIPKey
		case p.Method == config.PersistSSL && p == snap.Cfg.Persist:
			// The client-ssl session's name (sslSession below).
			f, _ := c.Tag.(*mblbFlow)
			if f == nil || f.sslKey == "" {
				continue
			}
			k.Mode, k.Key = persist.SSLSessionID, f.sslKey
		case p.Method == config.PersistHost:
			// The request's Host header; host names are
			// case-insensitive, so the key is folded [M].
			host := persist.HostKey(c.Msg)
			if host == nil {
				continue
			}
			k.Mode, k.Key = persist.Host, strings.ToLower(string(host))
		case p.Method == config.PersistHash && p.Payload != nil && p == snap.Cfg.Persist:
			// The hash profile's payload key, in each message [M].
			key, _ := p.Payload.Key(c.Msg, false)
			if key == nil {
				continue
			}
			k.Mode, k.Key = persist.Hash, string(key)
		default:
			continue
		}
		if n > 0 && ks[0].Mode == k.Mode {
			continue
		}
		ks[n] = k
		n++
	}
	return ks, n
}

// SSL persistence on a message or HTTP virtual that terminates TLS keys
// each message on the client's session, as a standard virtual ending TLS
// does (internal/l4/tls.go): the session's name, random at its full
// handshake and carried in its tickets (tlsprof.SessionTag), so that a
// client resuming its session on a new connection goes back to the
// member its session's messages went to.

// sslPersists reports whether the virtual's default persistence is ssl
// and it ends the client's TLS (not as a forward proxy).
func sslPersists(cfg *config.Virtual) bool {
	return cfg.Persist != nil && cfg.Persist.Method == config.PersistSSL &&
		cfg.TLS != nil && cfg.TLS.Client != nil && cfg.TLS.Forward == nil
}

// noteSession keeps the name of the client's session, once its
// handshake is done, as the flow's ssl persistence key.
func (f *mblbFlow) noteSession() {
	if f.sslTag == nil {
		return
	}
	if id := f.sslTag.ID(); id != nil {
		f.sslKey = hex.EncodeToString(id)
	}
}

// persistLookup is the persistence table's answer for a message's keys
// (persistKeys): the pool and member, or nil (no key, no record, or a
// member that may not take it: forced offline or down; a disabled member
// still takes persisted messages).
func (mv *VS) persistLookup(ks *[2]config.PersistKey, n int) (*state.Pool, *state.Member) {
	for i := 0; i < n; i++ {
		if q, m := mv.env.PersistFind(ks[i]); m != nil {
			return q, m
		}
	}
	return nil, nil
}

// persistRecord stores the member balanced for a message's keys
// (persistKeys).
func (mv *VS) persistRecord(ks *[2]config.PersistKey, n int, pool *state.Pool, m *state.Member) {
	for i := 0; i < n; i++ {
		mv.env.PersistSave(ks[i], pool.Name, m.Cfg.Load().Addr)
	}
}

// Persist implements rules.PersistConn for message-based virtuals: in
// CLIENT_DATA it sets the key the messages notified after it persist on.
// On an HTTP virtual, `persist none` and `persist cookie` (cookie.go in
// this package) hold for the connection's requests from the current one
// on, as on BIG-IP, and work in CLIENT_ACCEPTED too.
func (r *mblbRules) Persist(p rules.Persist) error {
	set := func(key string) {
		if r.sipPersist != nil {
			r.sipPersist.key, r.sipPersist.set = key, true
			return
		}
		if r.hx != nil {
			r.hx.Persist(key)
		} else {
			r.d.Persist(key)
		}
	}
	httpVS := r.f.mv.cfg.Request.Mode == mblb.HTTP
	switch {
	case r.hx != nil && r.hx.IsResponse():
		return fmt.Errorf("persist on a message-based virtual server applies to requests: use it in HTTP_REQUEST")
	case p.Method == rules.PersistCookie:
		return r.persistCookie(p) // cookie.go
	case httpVS && p.Method == rules.PersistNone && r.connPhase() == phaseAccepted:
		r.f.sess.SetPersist(mblb.PersistRule{None: true})
		return nil
	case p.Method == rules.PersistSIP && r.sipPersist == nil:
		return fmt.Errorf("SIP::persist sets the key of a request of the client, in SIP_REQUEST")
	case r.hx == nil && r.d == nil && r.sipPersist == nil:
		return fmt.Errorf("persist on a message-based virtual server works per message, in CLIENT_DATA (HTTP_REQUEST with an http profile)")
	}
	if httpVS && r.connPhase() == phaseRequest {
		// persist none turns every persistence off; another method
		// leaves the profiles' cookie to act beside its key.
		r.f.sess.SetPersist(mblb.PersistRule{None: p.Method == rules.PersistNone})
	}
	switch p.Method {
	case rules.PersistNone:
		set("")
	case rules.PersistUniversal:
		set(encodePersist(persist.Universal, p.Timeout, p.Key))
	case rules.PersistHash:
		set(encodePersist(persist.Hash, p.Timeout, p.Key))
	case rules.PersistSIP:
		set(encodePersist(persist.SIP, p.Timeout, p.Key))
	case rules.PersistSourceAddr, rules.PersistDestAddr:
		a := r.f.sess.Client().Addr()
		mode := persist.SourceAddress
		if p.Method == rules.PersistDestAddr {
			a, mode = reachedAddr(r.snap, r.f), persist.DestAddress
		}
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
		set(encodePersist(mode, p.Timeout, a.String()))
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
	switch p.Method {
	case rules.PersistSourceAddr:
		k.Mode = persist.SourceAddress
		if k.Key == "" {
			k.Key = r.f.sess.Client().Addr().String()
		}
	case rules.PersistDestAddr:
		k.Mode = persist.DestAddress
		if k.Key == "" {
			k.Key = reachedAddr(r.snap, r.f).String()
		}
	case rules.PersistHash:
		k.Mode = persist.Hash
	case rules.PersistSIP:
		k.Mode = persist.SIP
	default:
		k.Mode = persist.Universal
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

// cookieRecords is the persistence table for cookie persistence's hash
// method: a request's cookie key becomes the message's persistence key
// (mode cookie, the profile's timeout unless a rule's `persist cookie
// hash` gave one), and a response setting the cookie records its member
// under that key. Every HTTP virtual has it, since a rule may ask for the
// hash method whatever the profile's.
func (mv *VS) cookieRecords() *mblb.CookieRecords {
	if mv.cfg.Request.Mode != mblb.HTTP {
		return nil
	}
	return &mblb.CookieRecords{
		Key: func(key []byte, timeout time.Duration) string {
			return encodePersist(persist.Cookie, timeout, string(key))
		},
		Save: func(key []byte, timeout time.Duration, client netip.AddrPort, m mblb.Member) {
			sm, ok := m.Ref.(*state.Member)
			if !ok {
				return
			}
			snap := mv.vs.Snap.Load()
			k := config.PersistKey{Virtual: snap.Cfg.Name, Pool: sm.Pool.Name, Mode: persist.Cookie, Key: string(key), Client: client.Addr()}
			if timeout > 0 {
				k.Timeout = timeout
			}
			mv.env.PersistSave(k, sm.Pool.Name, sm.Cfg.Load().Addr)
		},
	}
}

// persistDown runs PERSIST_DOWN for a message whose persistence record
// names a member that is down or forced offline, when the client's rules
// handle it: a pool, member or node decision there is where the message
// goes (returned as its target), HTTP::respond answers it (an
// *mblb.Answered error), reject and drop end the client (ErrNoMember).
// Without a decision the message is balanced anew and the record
// replaced, so the event runs once per record that went down.
func (mv *VS) persistDown(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice) (mblb.Target, error) {
	f, ok := c.Tag.(*mblbFlow)
	if !ok || f.rr == nil || !f.rr.rules.Handles(config.EventPersistDown) || !mv.persistIsDown(snap, pool, c) {
		return mblb.Target{}, nil
	}
	return f.rr.persistDown()
}

// cookieDown runs PERSIST_DOWN for a request whose persistence cookie
// names a member of pool that cannot take it (down or forced offline), as
// BIG-IP does for cookie persistence: the rule's decision, answer or end
// is taken as in persistDown. Without a rule, or when it decides nothing,
// the returned target is zero and the request is balanced anew.
func (mv *VS) cookieDown(pool *state.Pool, c mblb.Choice) (mblb.Target, bool, error) {
	if !c.Cookie || pool == nil {
		return mblb.Target{}, false, nil
	}
	m := state.MemberAt(pool, c.Target.Member)
	if m == nil || m.Persistable() {
		return mblb.Target{}, false, nil
	}
	f, ok := c.Tag.(*mblbFlow)
	if !ok || f.rr == nil || !f.rr.rules.Handles(config.EventPersistDown) {
		return mblb.Target{}, true, nil
	}
	t, err := f.rr.persistDown()
	return t, true, err
}

// persistDown runs the PERSIST_DOWN event of the message being balanced
// (see VS.persistDown).
func (r *mblbRules) persistDown() (mblb.Target, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var t mblb.Target
	r.pdTarget = &t
	r.lbFailed = true // HTTP::respond answers here as in LB_FAILED
	err := r.run(config.EventPersistDown, nil)
	r.pdTarget, r.lbFailed = nil, false
	if r.http != nil {
		defer r.http.ClearActions()
	}
	if err != nil || r.verdict != irules.GoOn {
		reset := err != nil || r.verdict == irules.Reject
		go r.f.sess.Close(reset)
		return mblb.Target{}, errPersistDown
	}
	if r.http != nil {
		for _, a := range r.http.Actions {
			if a.Kind == rules.HTTPRespond {
				return mblb.Target{}, &mblb.Answered{Response: a.Data, KeepAlive: a.KeepAlive && !a.Reset}
			}
		}
	}
	return t, nil
}

// persistIsDown reports whether the first of a message's keys that has a
// record names a member that is down or forced offline.
func (mv *VS) persistIsDown(snap *state.VirtualSnap, pool *state.Pool, c mblb.Choice) bool {
	if mv.env.PersistDown == nil {
		return false
	}
	ks, n := mv.persistKeys(snap, pool, c)
	for i := 0; i < n; i++ {
		if _, m := mv.env.PersistFind(ks[i]); m != nil {
			return false
		}
		if mv.env.PersistDown(ks[i]) {
			return true
		}
	}
	return false
}

// errPersistDown: PERSIST_DOWN ended the client (reject, drop, an error).
var errPersistDown = fmt.Errorf("%w: PERSIST_DOWN ended the client", mblb.ErrNoMember)

// persistDownEnded reports whether a choice's error is PERSIST_DOWN's
// own outcome (its answer, or the client it ended), which LB_FAILED must
// not run for.
func persistDownEnded(err error) bool {
	var ans *mblb.Answered
	return errors.Is(err, errPersistDown) || errors.As(err, &ans)
}

// reachedAddr is the address dest-addr persistence keys on: the one the
// client reached, as L4 flows key, so a virtual listening on several
// addresses (traffic-matching-criteria) keeps one record per address;
// the virtual's destination when the flow does not know it.
func reachedAddr(snap *state.VirtualSnap, f *mblbFlow) netip.Addr {
	if f != nil && f.Local.Addr().IsValid() {
		return f.Local.Addr().Unmap()
	}
	return snap.Cfg.Destination.Addr()
}
