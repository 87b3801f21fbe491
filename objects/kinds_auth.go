package objects

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// The ltm auth kinds: BIG-IP authenticates the clients of a virtual
// server without APM through an `ltm auth profile` in the virtual's
// `auth` list. The profile names a configuration (`config`) of its
// type's kind (an ldap, radius, ssl-ocsp, ssl-crldp, ssl-cc-ldap or
// tacacs object) and the built-in iRule that drives it (`rule`,
// _sys_auth_ldap for an ldap profile). openltm acts on the ldap, radius,
// tacacs, ssl-ocsp, ssl-crldp and ssl-cc-ldap configurations
// (dataplane/authn); krbdelegate profiles are kept with a warning.
//
// [M] The property lists and defaults are those of F5's tmsh reference
// pages for the kinds as remembered (v13-v17), and the required
// properties those F5's Python SDK asks for at creation (ldap: servers;
// radius-server: server, secret; crldp-server: host; ssl-cc-ldap:
// servers, user-key; tacacs: servers, secret, service; profile:
// defaults-from, config).

// authProfileTypes are the profile types of `ltm auth profile`, as F5's
// built-in parents name them, with the kind of the configuration each
// one's `config` names and the rule that drives it.
var authProfileTypes = []struct {
	parent, typ, config, rule string
	acted                     bool
}{
	{"ldap", "ldap", "ltm auth ldap", "_sys_auth_ldap", true},
	{"radius", "radius", "ltm auth radius", "_sys_auth_radius", true},
	{"tacacs", "tacacs", "ltm auth tacacs", "_sys_auth_tacacs", true},
	{"ssl_cc_ldap", "ssl-cc-ldap", "ltm auth ssl-cc-ldap", "_sys_auth_ssl_cc_ldap", true},
	{"ssl_crldp", "ssl-crldp", "ltm auth ssl-crldp", "_sys_auth_ssl_crldp", true},
	{"ssl_ocsp", "ssl-ocsp", "ltm auth ssl-ocsp", "_sys_auth_ssl_ocsp", true},
	{"krbdelegate", "krbdelegate", "ltm auth kerberos-delegation", "_sys_auth_krbdelegate", false},
}

// AuthProfileType is what one `ltm auth profile` type is: the kind of
// its configuration, the built-in rule that drives it, and whether
// openltm acts on it.
type AuthProfileType struct {
	Type, Config, Rule string
	Acted              bool
}

// AuthTypeOf is the type a built-in auth profile parent (/Common/ldap)
// stands for; ok is false for a name that is none of them.
func AuthTypeOf(parent string) (AuthProfileType, bool) {
	for _, t := range authProfileTypes {
		if parent == "/Common/"+t.parent {
			return AuthProfileType{Type: t.typ, Config: t.config, Rule: "/Common/" + t.rule, Acted: t.acted}, true
		}
	}
	return AuthProfileType{}, false
}

// authLDAPRows are `ltm auth ldap`'s rows (pam_ldap's settings).
const authLDAPRows = `
servers list
port int 389
search-base-dn str none
search-scope enum sub sub|one|base
search-timeout int 30
filter str none
login-attribute str uid
user-template str none
bind-dn str none
bind-pw str none
bind-timeout int 30
check-member-attr ed disabled
group-dn str none
group-member-attribute str none
idle-timeout int 300
ignore-auth-info-unavail yn no
ignore-unknown-user ed disabled
ssl enum disabled disabled|enabled|start-tls
ssl-ca-cert-file ref sys+file+ssl-cert none
ssl-check-peer ed disabled
ssl-ciphers str none
ssl-client-cert ref sys+file+ssl-cert none
ssl-client-key ref sys+file+ssl-key none
version int 3
warnings ed enabled
debug ed disabled
`

// authKinds are the `ltm auth` kinds.
func authKinds() []*Kind {
	vocab := "; property names: F5 tmsh reference as listed in openltm's vocabulary notes"
	src := func(key string) string { return tmshRef(key) + vocab }
	profile := actOn(pk("ltm auth profile", "Auth Profile", "/Common/ldap", src("ltm auth profile")+restDefaults("/Common/ldap"), `
defaults-from ref ltm+auth+profile
config ref ltm+auth+ldap,ltm+auth+radius,ltm+auth+ssl-ocsp,ltm+auth+ssl-crldp,ltm+auth+ssl-cc-ldap,ltm+auth+tacacs,ltm+auth+kerberos-delegation none
cred-source enum http-basic-auth http-basic-auth
mode ed enabled
idle-timeout int 300
rule ref ltm+rule none
type ro none
cookie-name str none
cookie-key str none
`), "F5 ltm auth profile: authenticates a virtual server's clients against its config (an ltm auth ldap, radius, ssl-ocsp or ssl-crldp object) through its rule (the built-in _sys_auth_* of its type), before the request or the handshake goes on",
		"config", "cred-source", "mode", "idle-timeout", "rule", "type")
	profile.Lower = "auth profile"
	ldap := actOn(pk("ltm auth ldap", "LDAP Configuration", "", src("ltm auth ldap"), authLDAPRows),
		"F5 ltm auth ldap: the LDAP servers an ldap auth profile binds to (search for the user under search-base-dn, then bind as the entry found with the client's password)",
		"servers", "port", "search-base-dn", "search-scope", "search-timeout", "filter", "login-attribute", "user-template",
		"bind-dn", "bind-pw", "bind-timeout", "check-member-attr", "group-dn", "group-member-attribute", "idle-timeout",
		"ssl", "ssl-ca-cert-file", "ssl-check-peer", "ssl-ciphers", "ssl-client-cert", "ssl-client-key")
	ldap.Lower = "LDAP configuration"
	radiusServer := actOn(pk("ltm auth radius-server", "RADIUS Server", "", src("ltm auth radius-server"), `
server str -
port int 1812
secret str -
timeout int 3
`), "F5 ltm auth radius-server: one RADIUS server (address, port, shared secret, seconds to wait for an answer) an ltm auth radius object asks",
		"server", "port", "secret", "timeout")
	radiusServer.Lower = "RADIUS server"
	radius := actOn(pk("ltm auth radius", "RADIUS Configuration", "", src("ltm auth radius"), `
servers reflist ltm+auth+radius-server
accounting-bug ed disabled
client-id str none
debug ed disabled
retries int 3
service-type enum default default|authenticate-only|login|framed|callback-login|callback-framed|outbound|administrative|nas-prompt|call-check|callback-administrative
`), "F5 ltm auth radius: the RADIUS servers a radius auth profile sends its Access-Requests to, in order, each tried retries times",
		"servers", "client-id", "retries", "service-type")
	radius.Lower = "RADIUS configuration"
	responder := actOn(pk("ltm auth ocsp-responder", "OCSP Responder", "", src("ltm auth ocsp-responder"), `
url str none
ca-file ref sys+file+ssl-cert none
ca-path str none
allow-certs ed enabled
cert-id-digest enum sha1 md5|sha1
chain ed enabled
check-certs ed enabled
explicit ed enabled
ignore-aia ed disabled
intern ed enabled
nonce ed enabled
sign-digest enum sha1 md5|sha1
sign-key ref sys+file+ssl-key none
sign-key-pass-phrase str none
sign-other str none
signer ref sys+file+ssl-cert none
status-age int 0
trust-other ed disabled
va-file ref sys+file+ssl-cert none
validity-period int 300
verify ed enabled
verify-cert ed enabled
verify-other str none
verify-sig ed enabled
`), "F5 ltm auth ocsp-responder: an OCSP responder (url, else the certificate's AIA) an ssl-ocsp configuration asks about a client certificate; ca-file holds the issuers and the certificates its answers may be signed with",
		"url", "ca-file", "ignore-aia", "nonce", "status-age", "validity-period", "verify", "verify-sig", "va-file", "cert-id-digest")
	responder.Lower = "OCSP responder"
	sslOCSP := actOn(pk("ltm auth ssl-ocsp", "SSL OCSP Configuration", "", src("ltm auth ssl-ocsp"), `
responders reflist ltm+auth+ocsp-responder
max-timeout int 300
`), "F5 ltm auth ssl-ocsp: the OCSP responders an ssl-ocsp auth profile asks, in order, whether a client certificate is revoked",
		"responders", "max-timeout")
	sslOCSP.Lower = "SSL OCSP configuration"
	crldpServer := actOn(pk("ltm auth crldp-server", "CRLDP Server", "", src("ltm auth crldp-server"), `
host str -
port int 389
base-dn str none
reverse-dn ed disabled
`), "F5 ltm auth crldp-server: an LDAP server a CRL distribution point names by DN is read from",
		"host", "port", "base-dn")
	crldpServer.Lower = "CRLDP server"
	sslCRLDP := actOn(pk("ltm auth ssl-crldp", "SSL CRLDP Configuration", "", src("ltm auth ssl-crldp"), `
servers reflist ltm+auth+crldp-server
cache-timeout int 86400
connection-timeout int 15
update-interval int 0
use-issuer ed disabled
`), "F5 ltm auth ssl-crldp: the CRL distribution points of a client certificate (http URLs, or LDAP DNs on the crldp servers) are fetched and the certificate checked against them",
		"servers", "cache-timeout", "connection-timeout", "update-interval")
	sslCRLDP.Lower = "SSL CRLDP configuration"
	ccLDAP := actOn(pk("ltm auth ssl-cc-ldap", "SSL Client Certificate LDAP Configuration", "", src("ltm auth ssl-cc-ldap"), `
servers list
admin-dn str none
admin-password str none
cache-size int 20000
cache-timeout int 300
certmap-base str none
certmap-key str none
certmap-user-serial yn no
group-base str none
group-key str none
group-member-key str none
role-key str none
search-type enum user cert|certmap|user
secure yn no
user-base str none
user-class str none
user-key str none
valid-groups list
valid-roles list
`), "F5 ltm auth ssl-cc-ldap: the LDAP directory an ssl-cc-ldap auth profile looks a client certificate up in (search-type user: the subject's UID or CN as user-key under user-base; cert: the entry holding the certificate; certmap: the certificate map entry under certmap-base naming the issuer in certmap-key, and with certmap-user-serial the serial number and the user), the user then holding one of valid-roles (role-key) and a member of one of valid-groups",
		"servers", "admin-dn", "admin-password", "cache-size", "cache-timeout", "group-base", "group-key", "group-member-key",
		"search-type", "secure", "user-base", "user-class", "user-key", "valid-groups",
		"certmap-base", "certmap-key", "certmap-user-serial", "role-key", "valid-roles")
	ccLDAP.Lower = "SSL client certificate LDAP configuration"
	tacacs := actOn(pk("ltm auth tacacs", "TACACS+ Configuration", "", src("ltm auth tacacs"), `
servers list
secret str -
service str -
protocol str none
encryption ed enabled
authentication enum use-first-server use-first-server|use-all-servers
accounting enum send-to-first-server send-to-first-server|send-to-all-servers
debug ed disabled
`), "F5 ltm auth tacacs: the TACACS+ servers a tacacs auth profile sends the client's user name and password to (a PAP login, RFC 8907, or the ASCII or CHAP login a server asks for instead; obfuscated with the secret unless encryption is disabled), then asks to authorize service (and protocol); the sessions let in are accounted for (START and STOP records) to the first server or to all",
		"servers", "secret", "service", "protocol", "encryption", "authentication", "accounting")
	tacacs.Lower = "TACACS+ configuration"
	krb := pk("ltm auth kerberos-delegation", "Kerberos Delegation", "", src("ltm auth kerberos-delegation"), `
client-principal str none
server-principal str none
debug ed disabled
external-client-principal str none
external-server-principal str none
fwd-enable ed disabled
`)
	return []*Kind{profile, ldap, radiusServer, radius, responder, sslOCSP, crldpServer, sslCRLDP, ccLDAP, tacacs, krb}
}

// authBuiltinText declares the built-in auth profiles, one per type, as
// BIG-IP ships them (`ltm auth profile`: ldap radius tacacs ssl_cc_ldap
// ssl_crldp ssl_ocsp krbdelegate), each with its type's rule.
func authBuiltinText() string {
	var b strings.Builder
	for _, t := range authProfileTypes {
		if text := AuthRuleText(t.parent); text != "" {
			fmt.Fprintf(&b, "ltm rule /Common/%s {%s}\n", t.rule, text)
		}
		if !t.acted {
			// [M] openltm ships no rule for the types it keeps only.
			fmt.Fprintf(&b, "ltm auth profile /Common/%s { type %s }\n", t.parent, t.typ)
			continue
		}
		fmt.Fprintf(&b, "ltm auth profile /Common/%s { rule /Common/%s type %s }\n", t.parent, t.rule, t.typ)
	}
	return b.String()
}

// checkAuth refuses the auth objects BIG-IP refuses: a profile without
// a configuration, or whose configuration is not of its type's kind; an
// LDAP configuration without servers, or with a server that is not an
// address; a RADIUS server without its address or secret; an OCSP
// responder whose url does not read; a CRLDP server without host
// [M: the wording].
func checkAuth(c *Config, s *Schema, o *Object) error {
	switch o.Kind.Key() {
	case "ltm auth profile":
		if o.BuiltIn {
			return nil
		}
		t, ok := authProfileType(c, s, o)
		if !ok {
			return Invalid("The auth profile (%s) must default from one of the built-in auth profiles (ldap, radius, tacacs, ssl_cc_ldap, ssl_crldp, ssl_ocsp, krbdelegate).", o.Name)
		}
		cfgName := o.Str("config")
		if cfgName == "" || cfgName == "none" {
			return Invalid("The auth profile (%s) requires a configuration (config): an %s object.", o.Name, t.Config)
		}
		if k := s.Kind(t.Config); k != nil && c.Get(k, FullPath("/Common", cfgName)) == nil {
			return Invalid("The auth profile (%s) is of type %s: its config %s must be an %s object.", o.Name, t.Type, cfgName, t.Config)
		}
	case "ltm auth ldap":
		v := o.Props["servers"]
		if v == nil || len(v.List) == 0 {
			return Invalid("The LDAP configuration (%s) requires at least one server (servers).", o.Name)
		}
		for _, srv := range v.List {
			if _, err := netip.ParseAddr(srv); err != nil && !validHostName(srv) {
				return Invalid("The LDAP configuration (%s): server %q is neither an IP address nor a host name.", o.Name, srv)
			}
		}
		if p := o.Str("port"); p != "" {
			if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
				return Invalid("The LDAP configuration (%s): port %s: want a port from 1 to 65535.", o.Name, p)
			}
		}
	case "ltm auth radius-server":
		if o.Str("server") == "" {
			return Invalid("The RADIUS server (%s) requires a server address (server).", o.Name)
		}
		if o.Str("secret") == "" {
			return Invalid("The RADIUS server (%s) requires a shared secret (secret).", o.Name)
		}
	case "ltm auth ocsp-responder":
		if u := o.Str("url"); u != "" && u != "none" {
			if pu, err := url.Parse(u); err != nil || (pu.Scheme != "http" && pu.Scheme != "https") || pu.Host == "" {
				return Invalid("The OCSP responder (%s): url %q is not an http or https URL.", o.Name, u)
			}
		}
	case "ltm auth crldp-server":
		if o.Str("host") == "" {
			return Invalid("The CRLDP server (%s) requires a host.", o.Name)
		}
	case "ltm auth tacacs":
		v := o.Props["servers"]
		if v == nil || len(v.List) == 0 {
			return Invalid("The TACACS+ configuration (%s) requires at least one server (servers).", o.Name)
		}
		for _, srv := range v.List {
			h := srv
			if hh, p, err := net.SplitHostPort(srv); err == nil {
				if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
					return Invalid("The TACACS+ configuration (%s): server %q: want a port from 1 to 65535.", o.Name, srv)
				}
				h = hh
			}
			if _, err := netip.ParseAddr(h); err != nil && !validHostName(h) {
				return Invalid("The TACACS+ configuration (%s): server %q is neither an IP address nor a host name.", o.Name, srv)
			}
		}
		if o.Str("secret") == "" {
			return Invalid("The TACACS+ configuration (%s) requires a shared secret (secret).", o.Name)
		}
		if sv := o.Str("service"); sv == "" || sv == "none" {
			return Invalid("The TACACS+ configuration (%s) requires a service (service), the one its users are authorized for (ppp, for example).", o.Name)
		}
	case "ltm auth ssl-cc-ldap":
		if v := o.Props["servers"]; v == nil || len(v.List) == 0 {
			return Invalid("The SSL client certificate LDAP configuration (%s) requires at least one server (servers).", o.Name)
		}
	}
	return nil
}

// authProfileType follows an auth profile's defaults-from chain to the
// built-in parent that gives its type.
func authProfileType(c *Config, s *Schema, o *Object) (AuthProfileType, bool) {
	k := s.Kind("ltm auth profile")
	for i := 0; o != nil && i < 16; i++ {
		if t, ok := AuthTypeOf(o.Name); ok && o.BuiltIn {
			return t, true
		}
		parent := o.Str("defaults-from")
		if parent == "" || parent == "none" {
			parent = k.Parent
		}
		o = c.Get(k, FullPath("/Common", parent))
	}
	return AuthProfileType{}, false
}

// AuthProfileTypeOf is the type of an auth profile in c (its built-in
// ancestor's).
func AuthProfileTypeOf(c *Config, s *Schema, o *Object) (AuthProfileType, bool) {
	return authProfileType(c, s, o)
}

// validHostName: letters, digits, hyphens and dots, as a resolver takes.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return false
		}
	}
	return true
}

// authHTTPRule is the rule of the HTTP basic auth types (ldap, radius,
// tacacs):
// each request's Authorization credentials are checked by the virtual's
// profile of the type (AUTH::start pam default_TYPE); the request waits
// for the answer, then goes on (success) or is answered 401 (failure,
// error, no credentials). With several auth profiles on one virtual,
// the first failure answers (or, when a rule sets
// tmm_auth_http_sufficient_successes, that many successes release the
// request), and the sessions still waiting are aborted; a rule that
// sets tmm_auth_subscription makes AUTH::response_data answer. It is
// the behaviour of F5's _sys_auth_ldap and _sys_auth_radius, whose
// variable names it keeps, so that rules written against those work.
// The request is held without HTTP::collect: AUTH_RESULT runs before
// the request goes anywhere.
const authHTTPRule = `
    when HTTP_REQUEST {
        if {[info exists tmm_auth_http_sids(TYPE)]} {
            set tmm_auth_sid $tmm_auth_http_sids(TYPE)
        } else {
            set tmm_auth_sid [AUTH::start pam default_TYPE]
            set tmm_auth_http_sids(TYPE) $tmm_auth_sid
            if {[info exists tmm_auth_subscription]} {
                AUTH::subscribe $tmm_auth_sid
            }
        }
        AUTH::username_credential $tmm_auth_sid [HTTP::username]
        AUTH::password_credential $tmm_auth_sid [HTTP::password]
        AUTH::authenticate $tmm_auth_sid
        if {[info exists tmm_auth_http_collect_count]} {
            incr tmm_auth_http_collect_count
        } else {
            set tmm_auth_http_successes 0
            set tmm_auth_http_collect_count 1
        }
    }
    when AUTH_RESULT {
        if {![info exists tmm_auth_http_collect_count] || ![info exists tmm_auth_http_sids(TYPE)]} {
            return
        }
        if {$tmm_auth_http_sids(TYPE) != [AUTH::last_event_session_id]} {
            return
        }
        set tmm_auth_ok [expr {[AUTH::status] == 0}]
        if {$tmm_auth_ok} {
            incr tmm_auth_http_successes
        }
        if {[array size tmm_auth_http_sids] > 1 && (![info exists tmm_auth_http_sufficient_successes] || $tmm_auth_http_successes >= $tmm_auth_http_sufficient_successes)} {
            foreach {tmm_auth_type tmm_auth_other} [array get tmm_auth_http_sids] {
                unset tmm_auth_http_sids($tmm_auth_type)
                if {$tmm_auth_type ne "TYPE" && $tmm_auth_other != -1} {
                    AUTH::abort $tmm_auth_other
                    incr tmm_auth_http_collect_count -1
                }
            }
        }
        incr tmm_auth_http_collect_count -1
        if {$tmm_auth_http_collect_count <= 0} {
            unset tmm_auth_http_collect_count
            if {$tmm_auth_ok} {
                HTTP::release
            } else {
                HTTP::respond 401
            }
        }
    }
`

// authCertRule is the rule of the client certificate types (ssl_ocsp,
// ssl_crldp, ssl_cc_ldap): the certificate the client sent (and its issuer, when the
// client sent the chain) is checked by the virtual's profile of the
// type; a revoked certificate, or an error before the handshake ended,
// resets the connection. It is the behaviour of F5's _sys_auth_ssl_ocsp
// and _sys_auth_ssl_crldp, with their variable names. The connection
// waits for the answer in CLIENTSSL_CLIENTCERT, which runs once the
// handshake has read the certificate, so no SSL::handshake hold is
// needed.
const authCertRule = `
    when CLIENT_ACCEPTED {
        set tmm_auth_TYPE_sid 0
        set tmm_auth_TYPE_done 0
    }
    when CLIENTSSL_CLIENTCERT {
        if {[SSL::cert count] == 0} {
            return
        }
        set tmm_auth_TYPE_done 0
        if {$tmm_auth_TYPE_sid == 0} {
            set tmm_auth_TYPE_sid [AUTH::start pam default_TYPE]
            if {[info exists tmm_auth_subscription]} {
                AUTH::subscribe $tmm_auth_TYPE_sid
            }
        }
        AUTH::cert_credential $tmm_auth_TYPE_sid [SSL::cert 0]
        if {[SSL::cert count] > 1} {
            AUTH::cert_issuer_credential $tmm_auth_TYPE_sid [SSL::cert 1]
        }
        AUTH::authenticate $tmm_auth_TYPE_sid
    }
    when CLIENTSSL_HANDSHAKE {
        set tmm_auth_TYPE_done 1
    }
    when AUTH_RESULT {
        if {![info exists tmm_auth_TYPE_sid] || $tmm_auth_TYPE_sid != [AUTH::last_event_session_id]} {
            return
        }
        set tmm_auth_status [AUTH::status]
        if {$tmm_auth_status == 0} {
            set tmm_auth_TYPE_done 1
        } elseif {$tmm_auth_status != -1 || $tmm_auth_TYPE_done == 0} {
            reject
        }
    }
`

// AuthRuleText is the definition of the built-in rule openltm ships for
// an auth profile type (ldap, radius, tacacs, ssl_ocsp, ssl_crldp,
// ssl_cc_ldap); "" for the others.
func AuthRuleText(typ string) string {
	switch typ {
	case "ldap", "radius", "tacacs":
		return strings.ReplaceAll(authHTTPRule, "TYPE", typ)
	case "ssl_ocsp", "ssl_crldp", "ssl_cc_ldap":
		return strings.ReplaceAll(authCertRule, "TYPE", typ)
	}
	return ""
}
