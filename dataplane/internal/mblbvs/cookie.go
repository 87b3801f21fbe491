package mblbvs

import (
	"errors"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/rules"
)

// errCookieProfiles is BIG-IP's refusal of `persist cookie` on a virtual
// that lacks what it acts through.
var errCookieProfiles = errors.New("persist cookie requires an http profile and a cookie persistence profile on the virtual server")

// persistCookie is `persist cookie ...` on a message-based virtual: on an
// HTTP virtual with a cookie persistence profile, the rule's method,
// cookie name, expiration or hash settings replace the profile's for the
// client's requests from the current one on (the profile still gives
// httponly, secure and always-send); BIG-IP refuses it elsewhere.
func (r *mblbRules) persistCookie(p rules.Persist) error {
	mv := r.f.mv
	cfg := r.snap.Cfg
	if mv.cfg.Request.Mode != mblb.HTTP || cfg.ProfileFor(persist.Cookie) == nil {
		return errCookieProfiles
	}
	if r.connPhase() == phaseOther {
		return errors.New("persist cookie works in HTTP_REQUEST, HTTP_REQUEST_DATA and CLIENT_ACCEPTED on this virtual server")
	}
	opts := &mv.cfg.Request.HTTP
	defaultCookie := cfg.Persist != nil && cfg.Persist.Method == config.PersistCookie
	a := p.Cookie
	if a.Method == rules.CookieProfile && defaultCookie {
		r.f.sess.SetPersist(mblb.PersistRule{}) // the profile's own
		return nil
	}
	c := mblb.CookieRule{Spec: opts.Cookie, Mode: opts.CookieMode, Timeout: -1}
	if !defaultCookie {
		// A cookie profile that is only the fallback: BIG-IP's
		// defaults (insert, session cookie, httponly, secure where the
		// client side is TLS).
		c.Spec = httpx.CookieSpec{HTTPOnly: true, Secure: cfg.TLS != nil && cfg.TLS.Client != nil}
		c.Mode = mblb.CookieMode{}
	}
	switch a.Method {
	case rules.CookieInsert:
		c.Mode = mblb.CookieMode{Method: mblb.CookieInsert}
	case rules.CookieRewrite:
		c.Mode = mblb.CookieMode{Method: mblb.CookieRewrite}
	case rules.CookiePassive:
		c.Mode = mblb.CookieMode{Method: mblb.CookiePassive}
	case rules.CookieHash:
		c.Mode = mblb.CookieMode{Method: mblb.CookieHash, HashOffset: a.HashOffset, HashLength: a.HashLength}
		if p.Timeout >= 0 {
			c.Timeout = max(p.Timeout, time.Second)
		}
	}
	if defaultCookie {
		// The profile's cookie-encryption goes on (mblb/persistcrypt.go).
		c.Mode.Crypt = opts.CookieMode.Crypt
	}
	if a.Expiration >= 0 {
		c.Spec.Expiration = a.Expiration
	}
	poolName := httpx.PoolCookieName(cfg.Pool)
	switch {
	case a.Name != "":
		c.Spec.Name = a.Name
	case c.Mode.Method == mblb.CookieHash:
		// The rules package requires the name of hash's cookie.
		return errors.New("persist cookie hash needs the application's cookie name")
	case c.Spec.Name == "" || c.Spec.Name == poolName:
		// Neither the rule nor the profile names it: BIGipServer<pool>
		// of the pool the request goes to.
		c.Spec.Name, c.PoolNamed = poolName, true
	}
	if r.ckRule == nil || *r.ckRule != c {
		r.ckRule = &c // immutable once the engine has it
	}
	r.f.sess.SetPersist(mblb.PersistRule{Cookie: r.ckRule})
	return nil
}

// Where a rule's connection-wide persist setting may be made: before the
// requests (CLIENT_ACCEPTED) or in the request events, which run on the
// client's reader, the only goroutine that reads it
// (mblb.ClientConn.SetPersist).
const (
	phaseOther = iota
	phaseAccepted
	phaseRequest
)

func (r *mblbRules) connPhase() int {
	switch {
	case r.hx != nil && !r.hx.IsResponse() && (r.httpEv == rules.HTTPRequest || r.httpEv == rules.HTTPRequestData):
		return phaseRequest
	case r.hx == nil && r.d == nil && !r.lbFailed && r.pdTarget == nil && r.httpEv == rules.RuleInit && r.ev == config.EventClientAccepted:
		return phaseAccepted
	}
	return phaseOther
}
