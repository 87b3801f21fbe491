package authn

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
)

// SSLCCLDAP is an `ltm auth ssl-cc-ldap` configuration: the client's
// certificate is looked up in an LDAP directory, and the user it
// belongs to must be in one of the valid groups. By search-type:
//
//   - user: the user name is the certificate subject's UID (its CN when
//     it has none) [M], and the user is the entry of class user-class
//     under user-base whose user-key is that name;
//   - cert: the user is the entry of class user-class under user-base
//     that holds the certificate itself (userCertificate;binary, as
//     inetOrgPerson keeps it), its name the entry's user-key.
//
// The answer's data carry the user name (AUTH::ssl_cc_ldap_username).
type SSLCCLDAP struct {
	// Servers are host:port, tried in order; Secure dials LDAPS.
	Servers []string
	Secure  bool
	// AdminDN and AdminPW bind before the searches; none searches
	// anonymously.
	AdminDN, AdminPW string
	// SearchType is user or cert.
	SearchType                   string
	UserBase, UserClass, UserKey string
	// ValidGroups, when any, are the groups (their GroupKey, cn by
	// default) under GroupBase of which the user must be a member
	// (GroupMemberKey, member by default, holding the user's DN).
	ValidGroups                         []string
	GroupBase, GroupKey, GroupMemberKey string
	Timeout                             time.Duration
}

// oidUID is the subject attribute userid (RFC 4519).
var oidUID = asn1.ObjectIdentifier{0, 9, 2342, 19200300, 100, 1, 1}

// CertUserName is the user name a certificate's subject gives: its UID,
// else its CN.
func CertUserName(c *x509.Certificate) string {
	for _, a := range c.Subject.Names {
		if a.Type.Equal(oidUID) {
			if s, ok := a.Value.(string); ok && s != "" {
				return s
			}
		}
	}
	return c.Subject.CommonName
}

// Authenticate implements Backend.
func (l *SSLCCLDAP) Authenticate(ctx context.Context, r Request) Result {
	if r.Cert == nil {
		return Result{Status: Failure, Err: errors.New("no client certificate")}
	}
	var last error = errors.New("no LDAP server configured")
	for _, s := range l.Servers {
		if ctx.Err() != nil {
			last = ctx.Err()
			break
		}
		res := l.ask(ctx, s, r.Cert)
		if res.Status != Error {
			return res
		}
		last = res.Err
	}
	return Result{Status: Error, Err: last}
}

func (l *SSLCCLDAP) timeout() time.Duration {
	if l.Timeout > 0 {
		return l.Timeout
	}
	return 30 * time.Second
}

// ask looks the certificate up on one server.
func (l *SSLCCLDAP) ask(ctx context.Context, server string, cert *x509.Certificate) Result {
	d := &net.Dialer{Timeout: l.timeout()}
	if dl, ok := ctx.Deadline(); ok {
		d.Deadline = dl
	}
	scheme := "ldap://"
	opts := []ldap.DialOpt{ldap.DialWithDialer(d)}
	if l.Secure {
		scheme = "ldaps://"
		host, _, _ := net.SplitHostPort(server)
		// [M] secure yes encrypts; BIG-IP names no CA to check the
		// directory's certificate against.
		opts = append(opts, ldap.DialWithTLSConfig(&tls.Config{ServerName: host, InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}))
	}
	conn, err := ldap.DialURL(scheme+server, opts...)
	if err != nil {
		return Result{Status: Error, Err: fmt.Errorf("LDAP server %s: %w", server, err)}
	}
	defer conn.Close()
	conn.SetTimeout(l.timeout())
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	if l.AdminDN != "" {
		if err := conn.Bind(l.AdminDN, l.AdminPW); err != nil {
			return Result{Status: Error, Err: fmt.Errorf("LDAP server %s: bind as %s: %w", server, l.AdminDN, err)}
		}
	}
	class := l.UserClass
	if class == "" {
		class = "person"
	}
	key := l.UserKey
	if key == "" {
		key = "uid"
	}
	var dn, user string
	switch l.SearchType {
	case "cert":
		attr := "userCertificate;binary"
		res, err := conn.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
			"(&(objectClass="+ldap.EscapeFilter(class)+")("+attr+"=*))", []string{key, attr}, nil))
		if err != nil {
			return l.searchErr(server, err)
		}
		for _, e := range res.Entries {
			for _, v := range e.GetRawAttributeValues(attr) {
				if bytes.Equal(v, cert.Raw) {
					dn, user = e.DN, e.GetAttributeValue(key)
				}
			}
		}
		if dn == "" {
			return Result{Status: Failure, Err: fmt.Errorf("no entry of class %s under %q holds the certificate of %s", class, l.UserBase, cert.Subject)}
		}
	default:
		user = CertUserName(cert)
		if user == "" {
			return Result{Status: Failure, Err: fmt.Errorf("certificate subject %s names no user", cert.Subject)}
		}
		filter := "(&(objectClass=" + ldap.EscapeFilter(class) + ")(" + key + "=" + ldap.EscapeFilter(user) + "))"
		res, err := conn.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 2, 0, false, filter, []string{"dn"}, nil))
		if err != nil {
			return l.searchErr(server, err)
		}
		if len(res.Entries) != 1 {
			return Result{Status: Failure, Err: fmt.Errorf("%d entries match %s under %q", len(res.Entries), filter, l.UserBase)}
		}
		dn = res.Entries[0].DN
	}
	out := Result{Status: Success, Data: []Attr{{"ssl_cc_ldap:username", user}, {"ssl_cc_ldap:dn", dn}}}
	if len(l.ValidGroups) == 0 {
		return out
	}
	gk, mk := l.GroupKey, l.GroupMemberKey
	if gk == "" {
		gk = "cn"
	}
	if mk == "" {
		mk = "member"
	}
	var f strings.Builder
	f.WriteString("(&(|")
	for _, g := range l.ValidGroups {
		f.WriteString("(" + gk + "=" + ldap.EscapeFilter(g) + ")")
	}
	f.WriteString(")(" + mk + "=" + ldap.EscapeFilter(dn) + "))")
	res, err := conn.Search(ldap.NewSearchRequest(l.GroupBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false, f.String(), []string{gk}, nil))
	if err != nil {
		return l.searchErr(server, err)
	}
	if len(res.Entries) == 0 {
		return Result{Status: Failure, Err: fmt.Errorf("%s is in none of the valid groups %v", dn, l.ValidGroups)}
	}
	for _, e := range res.Entries {
		out.Data = append(out.Data, Attr{"ssl_cc_ldap:group", e.GetAttributeValue(gk)})
	}
	return out
}

// searchErr: a base that does not exist is a failure (nothing found);
// anything else an error (the next server is asked).
func (l *SSLCCLDAP) searchErr(server string, err error) Result {
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return Result{Status: Failure, Err: fmt.Errorf("LDAP server %s: %w", server, err)}
	}
	return Result{Status: Error, Err: fmt.Errorf("LDAP server %s: %w", server, err)}
}
