package monitor

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// LDAPCheck is the ldap monitor's settings. A directory that accepts
// connections can still refuse binds or have lost its data; binding and
// searching proves that the directory serves what its clients ask of it.
type LDAPCheck struct {
	Base, Filter        string // the search's base DN and filter; "" means none (BIG-IP's none)
	Username, Password  string // the bind DN and password; "" means an anonymous bind
	Security            string // "none", "ssl" (LDAPS from the first byte) or "tls" (StartTLS); "" means none
	MandatoryAttributes bool   // mandatory-attributes yes
	ChaseReferrals      bool   // chase-referrals yes (BIG-IP's default)
}

// ldapDefaults is what a nil Spec.LDAP means: BIG-IP's defaults, of which
// only chase-referrals differs from the zero value.
var ldapDefaults = LDAPCheck{ChaseReferrals: true}

// ldapAnyFilter is the filter sent when none is set: it matches any entry.
const ldapAnyFilter = "(objectClass=*)"

func (l *LDAPCheck) equal(o *LDAPCheck) bool {
	if l == nil || o == nil {
		return l == o
	}
	return *l == *o
}

// check refuses settings every probe would fail on before it reached the
// server: an unknown security mode and a filter that cannot be encoded.
func (l *LDAPCheck) check() error {
	if l == nil {
		return nil
	}
	switch l.Security {
	case "", "none", "ssl", "tls":
	default:
		return fmt.Errorf("security %q is not none, ssl or tls", l.Security)
	}
	if l.Filter != "" {
		if _, err := ldap.CompileFilter(l.Filter); err != nil {
			var le *ldap.Error
			if errors.As(err, &le) && le.Err != nil {
				err = le.Err
			}
			return fmt.Errorf("filter %q: %v", l.Filter, err)
		}
	}
	return nil
}

// Errors of the ldap monitor, worded like BIG-IP's.
var (
	errLDAPNoEntries    = errors.New("No entries matched the filter")
	errLDAPNoAttributes = errors.New("The entry has no attributes")
	errLDAPReferral     = errors.New("Search returned a referral and chase-referrals is disabled")
)

// probeLDAP runs the ldap monitor: connect (LDAPS or StartTLS when set),
// bind, search for one entry below the base, unbind.
func probeLDAP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	l := spec.LDAP
	if l == nil {
		l = &ldapDefaults
	}
	if err := l.check(); err != nil {
		return Outcome{}, err
	}
	tc, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer tc.Close()
	defer bound(ctx, tc)()

	var c net.Conn = tc
	if l.Security == "ssl" {
		sc := tls.Client(tc, ldapTLS())
		if err := sc.HandshakeContext(ctx); err != nil {
			if expired(ctx) {
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, fmt.Errorf("SSL handshake failed; %v", unwrapSyscall(err))
		}
		c = sc
	}
	lc := ldap.NewConn(c, l.Security == "ssl")
	if dl, ok := ctx.Deadline(); ok {
		// Bounds go-ldap's own waits (for a response, and in Close) even
		// if the connection's deadline were lost.
		lc.SetTimeout(max(time.Until(dl), time.Millisecond))
	}
	lc.Start()
	defer lc.Close()
	// Unbind is the polite end; on a broken connection it returns at once.
	defer lc.Unbind()

	if l.Security == "tls" {
		if err := lc.StartTLS(ldapTLS()); err != nil {
			return Outcome{}, ldapFailed(ctx, "StartTLS failed", err)
		}
	}
	// [M] A username with an empty password is sent as it is, an
	// unauthenticated bind (RFC 4513 §5.1.2), and the server decides; most
	// refuse it, which marks the member down with the server's reason.
	bind := &ldap.SimpleBindRequest{Username: l.Username, Password: l.Password, AllowEmptyPassword: true}
	if _, err := lc.SimpleBind(bind); err != nil {
		return Outcome{}, ldapFailed(ctx, "Bind failed", err)
	}

	res, err := lc.Search(ldapSearch(ctx, l))
	entries, referred := 0, false
	if res != nil {
		entries, referred = len(res.Entries), len(res.Referrals) > 0
	}
	switch {
	case err == nil:
	case expired(ctx):
		return Outcome{}, ErrNoResponse
	case ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) && entries > 0:
		// The size limit of 1 cut the answer short after an entry.
	case ldap.IsErrorWithCode(err, ldap.LDAPResultReferral):
		referred = true
	default:
		return Outcome{}, ldapFailed(ctx, "Search failed", err)
	}
	if entries == 0 {
		if !referred {
			return Outcome{}, errLDAPNoEntries
		}
		// [M] openltm does not follow referrals: with chase-referrals, a
		// server that refers the search elsewhere answered it and is up
		// (mandatory-attributes is not applied, there is no entry to
		// judge); without, a referral is no answer.
		if !l.ChaseReferrals {
			return Outcome{}, errLDAPReferral
		}
		return Outcome{Up: true}, nil
	}
	if l.MandatoryAttributes {
		// [M] One entry with an attribute is enough; with the size limit
		// of 1 there is normally just the one.
		has := false
		for _, e := range res.Entries {
			has = has || len(e.Attributes) > 0
		}
		if !has {
			return Outcome{}, errLDAPNoAttributes
		}
	}
	return Outcome{Up: true}, nil
}

// ldapSearch is the monitor's search: at most one entry, matching the
// filter, within the probe's remaining time.
func ldapSearch(ctx context.Context, l *LDAPCheck) *ldap.SearchRequest {
	filter := l.Filter
	if filter == "" {
		filter = ldapAnyFilter
	}
	// [M] BIG-IP's monitors reference describes mandatory-attributes no
	// as a one-level search below the base and yes as a subtree search;
	// unverified against a BIG-IP.
	scope := ldap.ScopeSingleLevel
	if l.MandatoryAttributes {
		scope = ldap.ScopeWholeSubtree
	}
	if l.Base == "" {
		// [M] Base none reads the root DSE, the one entry every server
		// has without a base: a base-object search of the empty DN.
		scope = ldap.ScopeBaseObject
	}
	limit := 0 // no deadline: no time limit
	if dl, ok := ctx.Deadline(); ok {
		limit = max(int(time.Until(dl)/time.Second), 1)
	}
	// [M] No attributes are named, so the server returns all user
	// attributes, which is what mandatory-attributes judges.
	return ldap.NewSearchRequest(l.Base, scope, ldap.NeverDerefAliases, 1, limit, false, filter, nil, nil)
}

// ldapTLS is the TLS client configuration of ssl and tls security: the
// https monitor's defaults (F5 DEFAULT ciphers, no server name, the
// member's certificate not verified, as BIG-IP does not verify members).
func ldapTLS() *tls.Config {
	cfg, err := (*TLS)(nil).config("")
	if err != nil {
		// DEFAULT always selects suites; this is a safe fallback only.
		return &tls.Config{InsecureSkipVerify: true}
	}
	return cfg
}

// ldapFailed words a failed LDAP operation; the deadline passing is
// BIG-IP's "no response".
func ldapFailed(ctx context.Context, doing string, err error) error {
	if expired(ctx) {
		return ErrNoResponse
	}
	// go-ldap ends its text with ": " when the server sent no diagnostic
	// message.
	return fmt.Errorf("%s; %s", doing, strings.TrimSuffix(err.Error(), ": "))
}

// expired reports whether ctx is done or its deadline has passed. go-ldap
// flattens the connection's deadline error into text, and the connection's
// deadline can fire just before ctx's own timer does.
func expired(ctx context.Context) bool {
	if ctx.Err() != nil {
		return true
	}
	dl, ok := ctx.Deadline()
	return ok && !time.Now().Before(dl)
}
