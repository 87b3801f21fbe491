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
//     inetOrgPerson keeps it), its name the entry's user-key;
//   - certmap [M: BIG-IP's reference names the settings, not the
//     directory's layout]: the certificate map is the subtree under
//     certmap-base, whose entries name a certificate's issuer DN (RFC
//     4514, as the certificate has it) in their certmap-key attribute
//     (cn by default). Without certmap-user-serial the map entry of the
//     certificate's issuer admits the issuer's certificates, and the
//     user name is the subject's, as for search-type user; with it, the
//     map entry must also name the certificate's serial number
//     (serialNumber, in decimal or in hex) and names the user in its
//     user-key attribute. The user is then the entry of class
//     user-class under user-base whose user-key is that name.
//
// The user must then be a member of one of the valid groups, when any
// are given, and hold one of the valid roles, when any are given: its
// entry's role-key attribute (nsRole in the Netscape directories;
// any attribute elsewhere) holding a valid role, or a DN whose first
// value is one [M].
//
// The answer's data carry the user name (AUTH::ssl_cc_ldap_username),
// its DN, its groups and its roles.
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
	// CertmapBase and CertmapKey are where search-type certmap finds
	// the certificate map and the attribute naming an issuer;
	// CertmapUserSerial makes a map entry stand for one certificate
	// (its issuer and serial number) and name its user.
	CertmapBase, CertmapKey string
	CertmapUserSerial       bool
	// RoleKey is the user entry's attribute holding its roles;
	// ValidRoles, when any, are those of which the user must hold one.
	RoleKey    string
	ValidRoles []string
	Timeout    time.Duration
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
	var roles []string
	userAttrs := []string{"dn"}
	if l.RoleKey != "" {
		userAttrs = []string{l.RoleKey}
	}
	switch l.SearchType {
	case "cert":
		attr := "userCertificate;binary"
		res, err := conn.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 0, 0, false,
			"(&(objectClass="+ldap.EscapeFilter(class)+")("+attr+"=*))", append([]string{key, attr}, userAttrs...), nil))
		if err != nil {
			return l.searchErr(server, err)
		}
		for _, e := range res.Entries {
			for _, v := range e.GetRawAttributeValues(attr) {
				if bytes.Equal(v, cert.Raw) {
					dn, user = e.DN, e.GetAttributeValue(key)
					if l.RoleKey != "" {
						roles = e.GetAttributeValues(l.RoleKey)
					}
				}
			}
		}
		if dn == "" {
			return Result{Status: Failure, Err: fmt.Errorf("no entry of class %s under %q holds the certificate of %s", class, l.UserBase, cert.Subject)}
		}
	default:
		if l.SearchType == "certmap" {
			var res Result
			if user, res = l.certmap(conn, server, key, cert); user == "" {
				return res
			}
		} else {
			user = CertUserName(cert)
		}
		if user == "" {
			return Result{Status: Failure, Err: fmt.Errorf("certificate subject %s names no user", cert.Subject)}
		}
		filter := "(&(objectClass=" + ldap.EscapeFilter(class) + ")(" + key + "=" + ldap.EscapeFilter(user) + "))"
		res, err := conn.Search(ldap.NewSearchRequest(l.UserBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 2, 0, false, filter, userAttrs, nil))
		if err != nil {
			return l.searchErr(server, err)
		}
		if len(res.Entries) != 1 {
			return Result{Status: Failure, Err: fmt.Errorf("%d entries match %s under %q", len(res.Entries), filter, l.UserBase)}
		}
		dn = res.Entries[0].DN
		if l.RoleKey != "" {
			roles = res.Entries[0].GetAttributeValues(l.RoleKey)
		}
	}
	out := Result{Status: Success, Data: []Attr{{"ssl_cc_ldap:username", user}, {"ssl_cc_ldap:dn", dn}}}
	for _, r := range roles {
		out.Data = append(out.Data, Attr{"ssl_cc_ldap:role", r})
	}
	if len(l.ValidRoles) > 0 && !hasRole(roles, l.ValidRoles) {
		return Result{Status: Failure, Err: fmt.Errorf("%s holds none of the valid roles %v (%s: %v)", dn, l.ValidRoles, l.RoleKey, roles)}
	}
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

// certmap finds the certificate's map entry under CertmapBase and
// gives the user name it stands for; "" and the answer when there is
// none.
func (l *SSLCCLDAP) certmap(conn *ldap.Conn, server, userKey string, cert *x509.Certificate) (string, Result) {
	mk := l.CertmapKey
	if mk == "" {
		mk = "cn"
	}
	issuer := cert.Issuer.String()
	filter := "(" + mk + "=" + ldap.EscapeFilter(issuer) + ")"
	if l.CertmapUserSerial {
		n := cert.SerialNumber
		hex := strings.ToUpper(n.Text(16))
		forms := []string{n.String(), hex}
		if len(hex)%2 == 1 {
			forms = append(forms, "0"+hex) // as openssl prints it
		}
		var f strings.Builder
		f.WriteString("(&" + filter + "(|")
		for _, s := range forms {
			f.WriteString("(serialNumber=" + ldap.EscapeFilter(s) + ")")
		}
		f.WriteString("))")
		filter = f.String()
	}
	res, err := conn.Search(ldap.NewSearchRequest(l.CertmapBase, ldap.ScopeWholeSubtree, ldap.NeverDerefAliases, 2, 0, false, filter, []string{userKey}, nil))
	if err != nil {
		return "", l.searchErr(server, err)
	}
	if len(res.Entries) != 1 {
		return "", Result{Status: Failure, Err: fmt.Errorf("%d certificate map entries match %s under %q", len(res.Entries), filter, l.CertmapBase)}
	}
	if !l.CertmapUserSerial {
		if u := CertUserName(cert); u != "" {
			return u, Result{}
		}
		return "", Result{Status: Failure, Err: fmt.Errorf("certificate subject %s names no user", cert.Subject)}
	}
	if u := res.Entries[0].GetAttributeValue(userKey); u != "" {
		return u, Result{}
	}
	return "", Result{Status: Failure, Err: fmt.Errorf("certificate map entry %s names no user (%s)", res.Entries[0].DN, userKey)}
}

// hasRole: one of roles is a valid one, itself or as a DN's first
// value (cn=admins,ou=roles,... holds admins).
func hasRole(roles, valid []string) bool {
	for _, r := range roles {
		first := r
		if d, err := ldap.ParseDN(r); err == nil && len(d.RDNs) > 0 && len(d.RDNs[0].Attributes) > 0 {
			first = d.RDNs[0].Attributes[0].Value
		}
		for _, v := range valid {
			if strings.EqualFold(r, v) || strings.EqualFold(first, v) {
				return true
			}
		}
	}
	return false
}

// searchErr: a base that does not exist is a failure (nothing found);
// anything else an error (the next server is asked).
func (l *SSLCCLDAP) searchErr(server string, err error) Result {
	if ldap.IsErrorWithCode(err, ldap.LDAPResultNoSuchObject) {
		return Result{Status: Failure, Err: fmt.Errorf("LDAP server %s: %w", server, err)}
	}
	return Result{Status: Error, Err: fmt.Errorf("LDAP server %s: %w", server, err)}
}
