// Package authn checks a virtual server's clients against the servers an
// `ltm auth profile` names: LDAP (bind and search), RADIUS
// (Access-Request), TACACS+ (a PAP login and an authorization), OCSP,
// CRL distribution points and an LDAP lookup (ssl-cc-ldap) of the
// client certificate. The iRules' AUTH:: commands ask it; each question runs
// on a goroutine of its own while the connection that asked waits
// (rules/commands_auth.go), so no event loop blocks on a server.
//
// A Profile wraps one back end with what the auth profile adds: the
// idle-timeout its successful answers are remembered for, and the
// counters `show ltm auth profile` prints.
package authn

import (
	"context"
	"crypto/sha256"
	"crypto/x509"
	"sync"
	"sync/atomic"
	"time"
)

// Status is an answer as AUTH::status gives it.
type Status int

// The answers, with F5's values for AUTH::status.
const (
	// Success: the credentials are good (LDAP bind, RADIUS
	// Access-Accept, certificate not revoked).
	Success Status = 0
	// Failure: they are not (bad password, unknown user, Access-Reject,
	// revoked certificate, no credentials).
	Failure Status = 1
	// Error: no server could answer (down, timed out, misconfigured).
	Error Status = -1
	// WantCredential: the server asks for more (a RADIUS
	// Access-Challenge); AUTH::wantcredential_prompt says what.
	WantCredential Status = 2
)

func (s Status) String() string {
	switch s {
	case Success:
		return "success"
	case Failure:
		return "failure"
	case WantCredential:
		return "wantcredential"
	}
	return "error"
}

// Request is what a rule gave an auth session before AUTH::authenticate.
type Request struct {
	Username, Password string
	// Cert is the client's certificate, Issuer its issuer's (nil when
	// the client did not send its chain: the back end looks for it
	// among its own CA certificates).
	Cert, Issuer *x509.Certificate
	// State is a RADIUS challenge's State, sent back with the answer to
	// it (AUTH::authenticate_continue).
	State []byte
}

// Attr is one item of AUTH::response_data.
type Attr struct{ Name, Value string }

// Result is a back end's answer.
type Result struct {
	Status Status
	// Data are the attributes the server answered with (the user's
	// LDAP entry, the RADIUS reply's attributes).
	Data []Attr
	// Prompt, PromptStyle and CredType describe what a WantCredential
	// asks (AUTH::wantcredential_*); State goes back with the answer.
	Prompt, PromptStyle, CredType string
	State                         []byte
	// Err says why a Failure or an Error, for the log.
	Err error
}

// Backend answers one request. It returns when ctx is done at the
// latest.
type Backend interface {
	Authenticate(ctx context.Context, r Request) Result
}

// AcctSession is a session a back end let in, as its accounting
// records name it: the user, the port (the virtual server) and the
// client's address; Data are the answer's (the login type used).
type AcctSession struct {
	User, Port, Remote string
	Data               []Attr
}

// Accounter is a back end that keeps accounting records of the
// sessions it let in (TACACS+ accounting). AccountStart records a
// session's start and returns what records its end (nil when it keeps
// none); neither blocks on the servers.
type Accounter interface {
	AccountStart(s AcctSession) (stop func())
}

// AccountStart records the start of a session the profile let in, when
// its back end keeps accounting records; the func returned (nil when
// it keeps none) records its end.
func (p *Profile) AccountStart(s AcctSession) func() {
	if a, ok := p.Backend.(Accounter); ok {
		return a.AccountStart(s)
	}
	return nil
}

// Stats are one auth profile's counters, as `show ltm auth profile`
// prints them.
type Stats struct {
	Current, Max, Total                     int64
	Success, Failure, Error, WantCredential int64
	CacheHits                               int64
}

// Profile is one `ltm auth profile` in service: its back end, the
// remembered successes and its counters. Profiles are rebuilt at each
// commit; a Profile's counters are carried over by the daemon.
type Profile struct {
	// Name is the profile's full path; Type its type (ldap, radius,
	// ssl-ocsp, ssl-crldp).
	Name, Type string
	Backend    Backend
	// IdleTimeout is how long a success is remembered: the same
	// credentials (or certificate) asked again within it are answered
	// without asking the server [M: BIG-IP's idle-timeout ends an auth
	// session that saw no traffic; openltm keeps the answer that long].
	// Zero remembers nothing.
	IdleTimeout time.Duration
	// MaxCache bounds the remembered successes (ssl-cc-ldap's
	// cache-size); zero is maxCache.
	MaxCache int

	counters *counters
	mu       sync.Mutex
	cache    map[[32]byte]cached
}

// cached is a remembered success: until when, and its answer's data
// (the user an ssl-cc-ldap certificate maps to).
type cached struct {
	exp  time.Time
	data []Attr
}

type counters struct {
	current, max, total                atomic.Int64
	success, failure, errs, want, hits atomic.Int64
}

// NewProfile builds a profile; keep, when not nil, is the profile of
// the same name in the configuration before, whose counters go on.
func NewProfile(name, typ string, b Backend, idle time.Duration, keep *Profile) *Profile {
	p := &Profile{Name: name, Type: typ, Backend: b, IdleTimeout: idle, cache: map[[32]byte]cached{}}
	if keep != nil && keep.counters != nil {
		p.counters = keep.counters
	} else {
		p.counters = &counters{}
	}
	return p
}

// maxCache bounds the remembered successes of one profile.
const maxCache = 10000

// key is what a request is remembered by: the credentials, or the
// certificate.
func key(r Request) [32]byte {
	h := sha256.New()
	if r.Cert != nil {
		h.Write([]byte("cert\x00"))
		h.Write(r.Cert.Raw)
	} else {
		h.Write([]byte("user\x00"))
		h.Write([]byte(r.Username))
		h.Write([]byte{0})
		h.Write([]byte(r.Password))
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// Authenticate asks the back end, unless the same request succeeded
// within the idle timeout; it counts the answer.
func (p *Profile) Authenticate(ctx context.Context, r Request) Result {
	c := p.counters
	c.total.Add(1)
	if n := c.current.Add(1); n > c.max.Load() {
		c.max.Store(n)
	}
	defer c.current.Add(-1)
	cacheable := p.IdleTimeout > 0 && r.State == nil && (r.Cert != nil || r.Username != "")
	var k [32]byte
	if cacheable {
		k = key(r)
		p.mu.Lock()
		hit, ok := p.cache[k]
		if ok && time.Now().After(hit.exp) {
			delete(p.cache, k)
			ok = false
		}
		p.mu.Unlock()
		if ok {
			c.hits.Add(1)
			c.success.Add(1)
			return Result{Status: Success, Data: hit.data}
		}
	}
	res := p.Backend.Authenticate(ctx, r)
	switch res.Status {
	case Success:
		c.success.Add(1)
		if cacheable {
			p.mu.Lock()
			limit := p.MaxCache
			if limit <= 0 {
				limit = maxCache
			}
			if len(p.cache) >= limit {
				now := time.Now()
				for k, hit := range p.cache {
					if now.After(hit.exp) {
						delete(p.cache, k)
					}
				}
				if len(p.cache) >= limit {
					clear(p.cache)
				}
			}
			p.cache[k] = cached{time.Now().Add(p.IdleTimeout), res.Data}
			p.mu.Unlock()
		}
	case Failure:
		c.failure.Add(1)
	case WantCredential:
		c.want.Add(1)
	default:
		c.errs.Add(1)
	}
	return res
}

// Stats reads the profile's counters.
func (p *Profile) Stats() Stats {
	c := p.counters
	return Stats{Current: c.current.Load(), Max: c.max.Load(), Total: c.total.Load(),
		Success: c.success.Load(), Failure: c.failure.Load(), Error: c.errs.Load(), WantCredential: c.want.Load(),
		CacheHits: c.hits.Load()}
}

// ResetStats zeroes the counters (reset-stats ltm auth profile).
func (p *Profile) ResetStats() {
	c := p.counters
	c.max.Store(c.current.Load())
	c.total.Store(0)
	c.success.Store(0)
	c.failure.Store(0)
	c.errs.Store(0)
	c.want.Store(0)
	c.hits.Store(0)
}
