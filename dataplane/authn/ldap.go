package authn

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// LDAP is an `ltm auth ldap` configuration: the user's entry is found
// (user-template names it, else a search under search-base-dn for
// login-attribute=USER, as bind-dn when one is given), then bound to
// with the client's password; with group-dn, the user must also be a
// member of that group.
type LDAP struct {
	// Servers are tried in order; one that cannot be reached moves to
	// the next.
	Servers []string
	Port    int
	// SSL is disabled, enabled (LDAPS) or start-tls; TLS is the client
	// configuration for both (ssl-ca-cert-file, ssl-check-peer,
	// ssl-client-cert and -key).
	SSL string
	TLS *tls.Config

	BaseDN string
	// Scope is ldap.ScopeWholeSubtree (sub), ScopeSingleLevel (one) or
	// ScopeBaseObject (base).
	Scope int
	// Filter is ANDed with LoginAttr=USER.
	Filter, LoginAttr string
	// UserTemplate, with %s for the user name, names the user's entry
	// without a search [M: pam_ldap's template user; openltm reads %s].
	UserTemplate   string
	BindDN, BindPW string
	BindTimeout    time.Duration
	SearchTimeout  time.Duration
	// GroupDN, when set, is a group the user must be in: with
	// CheckMemberAttr, the user's own memberOf names it; else the
	// group's GroupMemberAttr (member by default) holds the user's DN.
	GroupDN, GroupMemberAttr string
	CheckMemberAttr          bool
}

// errNoCredentials is the answer to a request without user or password:
// an LDAP bind with an empty password is an anonymous one, which
// succeeds and proves nothing.
var errNoCredentials = errors.New("no user name or password")

// Authenticate implements Backend.
func (l *LDAP) Authenticate(ctx context.Context, r Request) Result {
	if r.Username == "" || r.Password == "" {
		return Result{Status: Failure, Err: errNoCredentials}
	}
	var last error
	for _, s := range l.Servers {
		if ctx.Err() != nil {
			break
		}
		conn, err := l.dial(ctx, s)
		if err != nil {
			last = err
			continue
		}
		res := l.check(ctx, conn, r)
		conn.Close()
		if res.Status == Error {
			last = res.Err
			continue
		}
		return res
	}
	if last == nil {
		last = ctx.Err()
	}
	return Result{Status: Error, Err: last}
}

func (l *LDAP) dial(ctx context.Context, server string) (*ldap.Conn, error) {
	port := l.Port
	if port == 0 {
		port = 389
	}
	addr := net.JoinHostPort(server, strconv.Itoa(port))
	d := &net.Dialer{Timeout: l.bindTimeout()}
	if dl, ok := ctx.Deadline(); ok {
		d.Deadline = dl
	}
	scheme := "ldap://"
	if l.SSL == "enabled" {
		scheme = "ldaps://"
	}
	opts := []ldap.DialOpt{ldap.DialWithDialer(d)}
	if l.TLS != nil {
		opts = append(opts, ldap.DialWithTLSConfig(l.tlsFor(server)))
	}
	conn, err := ldap.DialURL(scheme+addr, opts...)
	if err != nil {
		return nil, err
	}
	conn.SetTimeout(l.bindTimeout())
	if l.SSL == "start-tls" {
		if err := conn.StartTLS(l.tlsFor(server)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("StartTLS: %w", err)
		}
	}
	return conn, nil
}

func (l *LDAP) tlsFor(server string) *tls.Config {
	c := &tls.Config{InsecureSkipVerify: true}
	if l.TLS != nil {
		c = l.TLS.Clone()
	}
	if c.ServerName == "" {
		c.ServerName = server
	}
	return c
}

func (l *LDAP) bindTimeout() time.Duration {
	if l.BindTimeout > 0 {
		return l.BindTimeout
	}
	return 30 * time.Second
}

// check finds and binds the user on one connection. Error means the
// server could not answer (the next one is tried).
func (l *LDAP) check(ctx context.Context, conn *ldap.Conn, r Request) Result {
	var dn string
	var entry *ldap.Entry
	if l.UserTemplate != "" && l.UserTemplate != "none" {
		dn = strings.ReplaceAll(l.UserTemplate, "%s", ldap.EscapeDN(r.Username))
	} else {
		if l.BindDN != "" && l.BindDN != "none" {
			if err := conn.Bind(l.BindDN, l.BindPW); err != nil {
				return Result{Status: Error, Err: fmt.Errorf("bind as %s: %w", l.BindDN, err)}
			}
		}
		attr := l.LoginAttr
		if attr == "" || attr == "none" {
			attr = "uid"
		}
		filter := "(" + attr + "=" + ldap.EscapeFilter(r.Username) + ")"
		if f := strings.TrimSpace(l.Filter); f != "" && f != "none" {
			if !strings.HasPrefix(f, "(") {
				f = "(" + f + ")"
			}
			filter = "(&" + f + filter + ")"
		}
		secs := int(l.SearchTimeout / time.Second)
		res, err := conn.Search(ldap.NewSearchRequest(l.BaseDN, l.Scope, ldap.NeverDerefAliases, 2, secs, false, filter, nil, nil))
		if err != nil && !ldap.IsErrorWithCode(err, ldap.LDAPResultSizeLimitExceeded) {
			if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
				return Result{Status: Failure, Err: fmt.Errorf("search base %s does not exist", l.BaseDN)}
			}
			return Result{Status: Error, Err: fmt.Errorf("search %s: %w", filter, err)}
		}
		if res == nil || len(res.Entries) != 1 {
			n := 0
			if res != nil {
				n = len(res.Entries)
			}
			return Result{Status: Failure, Err: fmt.Errorf("%d entries match %s under %q", n, filter, l.BaseDN)}
		}
		entry = res.Entries[0]
		dn = entry.DN
	}
	if err := conn.Bind(dn, r.Password); err != nil {
		if ldap.IsErrorAnyOf(err, ldap.LDAPResultInvalidCredentials, ldap.LDAPResultInappropriateAuthentication,
			ldap.LDAPResultInsufficientAccessRights, ldap.LDAPResultNoSuchObject, ldap.LDAPResultUnwillingToPerform, ldap.LDAPResultInvalidDNSyntax) {
			return Result{Status: Failure, Err: fmt.Errorf("bind as %s: %w", dn, err)}
		}
		return Result{Status: Error, Err: fmt.Errorf("bind as %s: %w", dn, err)}
	}
	if l.GroupDN != "" && l.GroupDN != "none" {
		ok, err := l.member(conn, dn, entry)
		if err != nil {
			return Result{Status: Error, Err: err}
		}
		if !ok {
			return Result{Status: Failure, Err: fmt.Errorf("%s is not a member of %s", dn, l.GroupDN)}
		}
	}
	out := Result{Status: Success, Data: []Attr{{"ldap:attr:dn", dn}}}
	if entry != nil {
		for _, a := range entry.Attributes {
			if strings.EqualFold(a.Name, "userPassword") {
				continue
			}
			for _, v := range a.Values {
				out.Data = append(out.Data, Attr{"ldap:attr:" + a.Name, v})
			}
		}
	}
	return out
}

// member says whether dn is in the group.
func (l *LDAP) member(conn *ldap.Conn, dn string, entry *ldap.Entry) (bool, error) {
	if l.CheckMemberAttr {
		if entry == nil {
			res, err := conn.Search(ldap.NewSearchRequest(dn, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false, "(objectClass=*)", []string{"memberOf"}, nil))
			if err != nil || len(res.Entries) == 0 {
				return false, err
			}
			entry = res.Entries[0]
		}
		for _, g := range entry.GetAttributeValues("memberOf") {
			if strings.EqualFold(g, l.GroupDN) {
				return true, nil
			}
		}
		return false, nil
	}
	attr := l.GroupMemberAttr
	if attr == "" || attr == "none" {
		attr = "member"
	}
	res, err := conn.Search(ldap.NewSearchRequest(l.GroupDN, ldap.ScopeBaseObject, ldap.NeverDerefAliases, 1, 0, false,
		"("+attr+"="+ldap.EscapeFilter(dn)+")", []string{"dn"}, nil))
	if err != nil {
		if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
			return false, nil
		}
		return false, fmt.Errorf("group %s: %w", l.GroupDN, err)
	}
	return len(res.Entries) > 0, nil
}
