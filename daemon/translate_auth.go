package daemon

import (
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-ldap/ldap/v3"
	"layeh.com/radius/rfc2865"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/authn"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/objects"
)

// A virtual server's auth profiles (`auth { ... }`) are acted on as
// BIG-IP does: each enabled profile's rule (its `rule`, the built-in
// _sys_auth_* of its type) runs before the virtual's own rules, and
// AUTH::start pam default_TYPE in it reaches the profile's configuration
// (dataplane/authn). A profile with mode disabled adds nothing [M: the
// virtual lets its clients through unchecked]. The type openltm keeps
// only (krbdelegate) is kept with a warning, and the virtual runs
// without it.

var (
	authProfileKind = schema.MustKind("ltm auth profile")
	virtualAuthList = schema.MustKind("ltm virtual").MustProp("auth")
	specAuthProfile = schema.MustSpec("ltm auth profile")
)

// authSpec is one auth profile translated: what rt.start builds an
// authn.Profile from.
type authSpec struct {
	name, typ string
	backend   authn.Backend
	idle      time.Duration
	// maxCache bounds the remembered successes (ssl-cc-ldap's
	// cache-size); zero is authn's default.
	maxCache int
	// key is the profile's settings and its configuration's, as
	// translated: a profile whose key is unchanged keeps its remembered
	// successes across a commit.
	key string
}

// authSet is the translation's auth profiles: by virtual server (in
// the order of its auth list), and by profile name.
type authSet struct {
	byVirtual map[string][]*authSpec
	byName    map[string]*authSpec
}

// virtualAuth translates o's auth list for v: the rules to run before
// the virtual's own, and whether the virtual is kept.
func (t *translator) virtualAuth(o *objects.Object, v *dataplane.Virtual) ([]string, bool) {
	lv := virtualAuthList.Get(o)
	if lv == nil || len(lv.List) == 0 || t.rules == nil {
		return nil, true
	}
	var ruleNames []string
	seen := map[string]bool{}
	for _, n := range lv.List {
		p := t.cfg.Lookup(t.s, specAuthProfile, n)
		if p == nil {
			t.skip(o, "auth profile %s does not exist", n)
			return nil, false
		}
		typ, ok := objects.AuthProfileTypeOf(t.cfg, t.s, p)
		if !ok {
			t.skip(o, "auth profile %s has no type", p.Name)
			return nil, false
		}
		if t.cfg.EffectiveStr(p, "mode") == "disabled" {
			continue
		}
		if seen[typ.Type] {
			return nil, t.refuse("%s", about(o, "two auth profiles of type %s (%s is the second): a virtual server takes one of each type [M]", typ.Type, p.Name))
		}
		seen[typ.Type] = true
		if !typ.Acted {
			t.note(o, "auth profile %s is of type %s, which openltm keeps without acting on: the virtual server runs without it", p.Name, typ.Type)
			continue
		}
		spec, err := t.authSpec(p, typ)
		if err != nil {
			t.skip(o, "auth profile %s: %v", p.Name, err)
			return nil, false
		}
		if t.rules.auth.byVirtual == nil {
			t.rules.auth = authSet{byVirtual: map[string][]*authSpec{}, byName: map[string]*authSpec{}}
		}
		t.rules.auth.byVirtual[v.Name] = append(t.rules.auth.byVirtual[v.Name], spec)
		t.rules.auth.byName[spec.name] = spec
		rule := t.cfg.EffectiveStr(p, "rule")
		if rule == "" || rule == "none" {
			rule = typ.Rule
		}
		ruleNames = append(ruleNames, rule)
	}
	return ruleNames, true
}

// authSpec reads a profile and its configuration into a back end.
func (t *translator) authSpec(p *objects.Object, typ objects.AuthProfileType) (*authSpec, error) {
	cfgName := t.cfg.EffectiveStr(p, "config")
	c := t.cfg.Lookup(t.s, []string{typ.Config}, cfgName)
	if c == nil {
		return nil, fmt.Errorf("config %s is not an %s object", cfgName, typ.Config)
	}
	idle, _ := strconv.Atoi(t.cfg.EffectiveStr(p, "idle-timeout"))
	spec := &authSpec{name: p.Name, typ: typ.Type, idle: time.Duration(idle) * time.Second}
	str := func(o *objects.Object, n string) string { return noneEmpty(t.cfg.EffectiveStr(o, n)) }
	num := func(o *objects.Object, n string) int { i, _ := strconv.Atoi(t.cfg.EffectiveStr(o, n)); return i }
	list := func(o *objects.Object, n string) []string {
		if v := t.cfg.Effective(o, n); v != nil {
			return v.List
		}
		return nil
	}
	var key strings.Builder
	fmt.Fprintf(&key, "%s\x00%s\x00%d\x00%s", p.Name, typ.Type, idle, c.Name)
	switch typ.Type {
	case "ldap":
		l := &authn.LDAP{Servers: list(c, "servers"), Port: num(c, "port"), SSL: str(c, "ssl"),
			BaseDN: str(c, "search-base-dn"), Filter: str(c, "filter"), LoginAttr: str(c, "login-attribute"),
			UserTemplate: str(c, "user-template"), BindDN: str(c, "bind-dn"), BindPW: str(c, "bind-pw"),
			BindTimeout: time.Duration(num(c, "bind-timeout")) * time.Second, SearchTimeout: time.Duration(num(c, "search-timeout")) * time.Second,
			GroupDN: str(c, "group-dn"), GroupMemberAttr: str(c, "group-member-attribute"),
			CheckMemberAttr: str(c, "check-member-attr") == "enabled"}
		switch str(c, "search-scope") {
		case "one":
			l.Scope = ldap.ScopeSingleLevel
		case "base":
			l.Scope = ldap.ScopeBaseObject
		default:
			l.Scope = ldap.ScopeWholeSubtree
		}
		if l.SSL != "" && l.SSL != "disabled" {
			tc := &tls.Config{InsecureSkipVerify: str(c, "ssl-check-peer") != "enabled", MinVersion: tls.VersionTLS12}
			if cs := str(c, "ssl-ciphers"); cs != "" && cs != "DEFAULT" {
				if err := ldapCiphers(tc, cs); err != nil {
					return nil, fmt.Errorf("ldap configuration %s: ssl-ciphers: %v", c.Name, err)
				}
			}
			if ca := str(c, "ssl-ca-cert-file"); ca != "" {
				certs, err := t.authCerts(ca)
				if err != nil {
					return nil, err
				}
				tc.RootCAs = x509.NewCertPool()
				for _, cert := range certs {
					tc.RootCAs.AddCert(cert)
				}
			}
			if crt, k := str(c, "ssl-client-cert"), str(c, "ssl-client-key"); crt != "" && k != "" {
				cp, err := t.authFile(specSSLCert, crt)
				if err != nil {
					return nil, err
				}
				kp, err := t.authFile(specSSLKey, k)
				if err != nil {
					return nil, err
				}
				pair, err := tls.LoadX509KeyPair(cp, kp)
				if err != nil {
					return nil, fmt.Errorf("ssl-client-cert %s: %v", crt, err)
				}
				tc.Certificates = []tls.Certificate{pair}
			}
			l.TLS = tc
		}
		spec.backend = l
		k := *l
		k.TLS = nil
		fmt.Fprintf(&key, "\x00%+v\x00%v", k, l.TLS != nil)
	case "radius":
		r := &authn.RADIUS{Retries: num(c, "retries"), ClientID: str(c, "client-id")}
		if st := str(c, "service-type"); st != "" && st != "default" {
			r.ServiceType = radiusServiceTypes[st]
		}
		for _, sn := range list(c, "servers") {
			so := t.cfg.Lookup(t.s, []string{"ltm auth radius-server"}, sn)
			if so == nil {
				return nil, fmt.Errorf("radius-server %s does not exist", sn)
			}
			port := num(so, "port")
			if port == 0 {
				port = 1812
			}
			r.Servers = append(r.Servers, authn.RADIUSServer{Addr: net.JoinHostPort(str(so, "server"), strconv.Itoa(port)),
				Secret: []byte(t.cfg.EffectiveStr(so, "secret")), Timeout: time.Duration(num(so, "timeout")) * time.Second})
		}
		if len(r.Servers) == 0 {
			return nil, fmt.Errorf("radius configuration %s has no servers", c.Name)
		}
		spec.backend = r
		fmt.Fprintf(&key, "\x00%+v", *r)
	case "ssl-ocsp":
		o := &authn.SSLOCSP{MaxTimeout: time.Duration(num(c, "max-timeout")) * time.Second}
		for _, rn := range list(c, "responders") {
			ro := t.cfg.Lookup(t.s, []string{"ltm auth ocsp-responder"}, rn)
			if ro == nil {
				return nil, fmt.Errorf("ocsp-responder %s does not exist", rn)
			}
			r := &authn.OCSPResponder{Name: ro.Name, URL: str(ro, "url"), IgnoreAIA: str(ro, "ignore-aia") == "enabled",
				VerifySig: str(ro, "verify-sig") != "disabled" && str(ro, "verify") != "disabled",
				StatusAge: time.Duration(num(ro, "status-age")) * time.Second, ValidityPeriod: time.Duration(num(ro, "validity-period")) * time.Second}
			if str(ro, "cert-id-digest") == "md5" {
				r.Hash = crypto.MD5
			}
			if ca := str(ro, "ca-file"); ca != "" {
				certs, err := t.authCerts(ca)
				if err != nil {
					return nil, err
				}
				r.CAs = certs
			}
			if va := str(ro, "va-file"); va != "" {
				certs, err := t.authCerts(va)
				if err != nil {
					return nil, err
				}
				r.Others = certs
			}
			o.Responders = append(o.Responders, r)
			fmt.Fprintf(&key, "\x00%+v", *r)
		}
		if len(o.Responders) == 0 {
			return nil, fmt.Errorf("ssl-ocsp configuration %s has no responders", c.Name)
		}
		spec.backend = o
	case "ssl-crldp":
		d := &authn.SSLCRLDP{CacheTimeout: time.Duration(num(c, "cache-timeout")) * time.Second,
			ConnectTimeout: time.Duration(num(c, "connection-timeout")) * time.Second}
		for _, sn := range list(c, "servers") {
			so := t.cfg.Lookup(t.s, []string{"ltm auth crldp-server"}, sn)
			if so == nil {
				return nil, fmt.Errorf("crldp-server %s does not exist", sn)
			}
			port := num(so, "port")
			if port == 0 {
				port = 389
			}
			d.Servers = append(d.Servers, authn.CRLDPServer{Addr: net.JoinHostPort(str(so, "host"), strconv.Itoa(port)), BaseDN: str(so, "base-dn")})
		}
		spec.backend = d
		fmt.Fprintf(&key, "\x00%+v\x00%v\x00%v", d.Servers, d.CacheTimeout, d.ConnectTimeout)
	case "tacacs":
		tc := &authn.TACACS{Secret: []byte(t.cfg.EffectiveStr(c, "secret")), Encrypt: str(c, "encryption") != "disabled",
			Service: str(c, "service"), Protocol: str(c, "protocol"), UseAll: str(c, "authentication") == "use-all-servers",
			// BIG-IP always accounts for the sessions a tacacs profile
			// lets in; accounting only says to which servers.
			Account: true, AcctAll: str(c, "accounting") == "send-to-all-servers"}
		for _, srv := range list(c, "servers") {
			tc.Servers = append(tc.Servers, tacacsAddr(srv))
		}
		if len(tc.Servers) == 0 {
			return nil, fmt.Errorf("tacacs configuration %s has no servers", c.Name)
		}
		spec.backend = tc
		fmt.Fprintf(&key, "\x00%+v", *tc)
	case "ssl-cc-ldap":
		st := str(c, "search-type")
		l := &authn.SSLCCLDAP{CertmapBase: str(c, "certmap-base"), CertmapKey: str(c, "certmap-key"),
			CertmapUserSerial: str(c, "certmap-user-serial") == "yes", RoleKey: str(c, "role-key"), Secure: str(c, "secure") == "yes", AdminDN: str(c, "admin-dn"), AdminPW: str(c, "admin-password"),
			SearchType: st, UserBase: str(c, "user-base"), UserClass: str(c, "user-class"), UserKey: str(c, "user-key"),
			GroupBase: str(c, "group-base"), GroupKey: str(c, "group-key"), GroupMemberKey: str(c, "group-member-key")}
		port := "389"
		if l.Secure {
			port = "636"
		}
		for _, srv := range list(c, "servers") {
			if _, _, err := net.SplitHostPort(srv); err != nil {
				srv = net.JoinHostPort(strings.Trim(srv, "[]"), port)
			}
			l.Servers = append(l.Servers, srv)
		}
		for _, g := range list(c, "valid-groups") {
			if g != "none" {
				l.ValidGroups = append(l.ValidGroups, g)
			}
		}
		for _, r := range list(c, "valid-roles") {
			if r != "none" {
				l.ValidRoles = append(l.ValidRoles, r)
			}
		}
		// The remembered answers are cache-timeout's and cache-size's
		// [M: BIG-IP's ssl-cc-ldap caches its lookups so].
		spec.idle = time.Duration(num(c, "cache-timeout")) * time.Second
		spec.maxCache = num(c, "cache-size")
		spec.backend = l
		fmt.Fprintf(&key, "\x00%+v\x00%v\x00%d", *l, spec.idle, spec.maxCache)
	default:
		return nil, fmt.Errorf("type %s is not acted on", typ.Type)
	}
	spec.key = key.String()
	return spec, nil
}

// ldapCiphers limits tc to what cipher string cs (OpenSSL's syntax, as
// ssl-ciphers is pam_ldap's tls_ciphers) selects: its TLS 1.2 suites,
// and its protocol versions from TLS 1.2 up [M: openltm speaks no older
// version to a directory]. A string that selects nothing openltm's TLS
// speaks is refused.
func ldapCiphers(tc *tls.Config, cs string) error {
	cl, err := tlsprof.ParseCiphers(cs)
	if err != nil {
		return err
	}
	var vs []uint16
	for _, v := range cl.Versions() {
		if v >= tls.VersionTLS12 {
			vs = append(vs, v)
		}
	}
	if len(vs) == 0 {
		return fmt.Errorf("%q selects no TLS 1.2 or 1.3 cipher", cs)
	}
	tc.MinVersion, tc.MaxVersion = vs[0], vs[len(vs)-1]
	tc.CipherSuites = cl.Suites()
	return nil
}

// tacacsAddr is a tacacs server as host:port: TACACS+'s port 49 unless
// the server is given as ADDRESS:PORT ([ADDRESS]:PORT for IPv6) [M:
// BIG-IP's servers are addresses or names on port 49; openltm also
// reads a port].
func tacacsAddr(s string) string {
	if h, p, err := net.SplitHostPort(s); err == nil {
		return net.JoinHostPort(h, p)
	}
	return net.JoinHostPort(strings.Trim(s, "[]"), "49")
}

// radiusServiceTypes are service-type's values (RFC 2865's numbers).
var radiusServiceTypes = map[string]rfc2865.ServiceType{
	"login": 1, "framed": 2, "callback-login": 3, "callback-framed": 4, "outbound": 5,
	"administrative": 6, "nas-prompt": 7, "authenticate-only": 8, "callback-administrative": 11, "call-check": 10,
}

// authFile is the path of a sys file ssl-cert or ssl-key named n.
func (t *translator) authFile(spec []string, n string) (string, error) {
	o := t.cfg.Lookup(t.s, spec, n)
	if o == nil {
		return "", fmt.Errorf("%s does not exist", n)
	}
	return t.sslFilePath(o)
}

// authCerts reads the certificates of the sys file ssl-cert named n.
func (t *translator) authCerts(n string) ([]*x509.Certificate, error) {
	path, err := t.authFile(specSSLCert, n)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []*x509.Certificate
	for {
		var blk *pem.Block
		blk, b = pem.Decode(b)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", n, err)
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s holds no certificate", n)
	}
	return out, nil
}
