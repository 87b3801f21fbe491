package daemon

import (
	"crypto"
	"crypto/tls"
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/grammar"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The TLS kinds the translation reads.
var (
	sysSSLCert        = schema.MustKind("sys file ssl-cert")
	sysSSLKey         = schema.MustKind("sys file ssl-key")
	sysSSLCRL         = schema.MustKind("sys file ssl-crl")
	specSSLCRL        = schema.MustSpec("sys file ssl-crl")
	sslSourcePath     = common("source-path", sysSSLCert, sysSSLKey)
	sslCachePath      = common("cache-path", sysSSLCert, sysSSLKey)
	sslRevision       = common("revision", sysSSLCert, sysSSLKey)
	sslChecksum       = common("checksum", sysSSLCert, sysSSLKey)
	sslKeyPassphrase  = sysSSLKey.MustProp("passphrase")
	specSSLCert       = schema.MustSpec("sys file ssl-cert")
	specSSLKey        = schema.MustSpec("sys file ssl-key")
	profileClientSSL  = schema.MustKind("ltm profile client-ssl")
	profileServerSSL  = schema.MustKind("ltm profile server-ssl")
	sslProfiles       = []*objects.Kind{profileClientSSL, profileServerSSL}
	sslCert           = common("cert", sslProfiles...)
	sslKey            = common("key", sslProfiles...)
	sslChain          = common("chain", sslProfiles...)
	sslCAFile         = common("ca-file", sslProfiles...)
	sslCiphers        = common("ciphers", sslProfiles...)
	sslCipherGroup    = common("cipher-group", sslProfiles...)
	sslOptions        = common("options", sslProfiles...)
	sslServerName     = common("server-name", sslProfiles...)
	sslSNIDefault     = common("sni-default", sslProfiles...)
	sslSNIRequire     = common("sni-require", sslProfiles...)
	sslRenegotiation  = common("renegotiation", sslProfiles...)
	sslSessionTicket  = common("session-ticket", sslProfiles...)
	sslPeerCertMode   = common("peer-cert-mode", sslProfiles...)
	sslAuthDepth      = common("authenticate-depth", sslProfiles...)
	sslAuthFreq       = common("authenticate", sslProfiles...)
	sslHandshake      = common("handshake-timeout", sslProfiles...)
	sslAlertTimeout   = common("alert-timeout", sslProfiles...)
	sslPassphrase     = common("passphrase", sslProfiles...)
	sslMode           = common("mode", sslProfiles...)
	sslProfileSpec    = []string{profileClientSSL.Key(), profileServerSSL.Key()}
	sslCacheSize      = profileServerSSL.MustProp("cache-size")
	sslAuthName       = profileServerSSL.MustProp("authenticate-name")
	sslCRLFile        = common("crl-file", sslProfiles...)
	sslCRL            = common("crl", sslProfiles...)
	sslAllowExpired   = common("allow-expired-crl", sslProfiles...)
	sslClientCertCA   = profileClientSSL.MustProp("client-cert-ca")
	sslAllowNonSSL    = profileClientSSL.MustProp("allow-non-ssl")
	sslRetainCert     = common("retain-certificate", sslProfiles...)
	sslCacheTimeout   = common("cache-timeout", sslProfiles...)
	sslTicketTimeout  = profileClientSSL.MustProp("session-ticket-timeout")
	sslExpireControl  = profileServerSSL.MustProp("expire-cert-response-control")
	sslUntrusted      = profileServerSSL.MustProp("untrusted-cert-response-control")
	sslRevokedControl = profileServerSSL.MustProp("revoked-cert-status-response-control")
	sslCertKeyChain   = profileClientSSL.MustProp("cert-key-chain")
	sslSecureReneg    = common("secure-renegotiation", sslProfiles...)
	sslDynamicRecords = profileClientSSL.MustProp("allow-dynamic-record-sizing")
	virtualUseSNI     = ltmVirtual.MustProp("serverssl-use-sni")
	sslOCSPStapling   = profileClientSSL.MustProp("ocsp-stapling")
	sslMaxHandshakes  = common("max-active-handshakes", sslProfiles...)
	sslUnclean        = common("unclean-shutdown", sslProfiles...)
	sslStrictResume   = common("strict-resume", sslProfiles...)
	sslSignHash       = common("ssl-sign-hash", sslProfiles...)
	sslLogPublisher   = common("log-publisher", sslProfiles...)
	sslMaxRecord      = profileClientSSL.MustProp("maximum-record-size")
	sslNotifyStatus   = profileClientSSL.MustProp("notify-cert-status-to-virtual-server")
	sslInheritCA      = profileClientSSL.MustProp("inherit-ca-certkeychain")
	sslOCSP           = profileServerSSL.MustProp("ocsp")
	sslUnknownControl = profileServerSSL.MustProp("unknown-cert-status-response-control")
	certValidators    = sysSSLCert.MustProp("cert-validators")
	certValidation    = sysSSLCert.MustProp("cert-validation-options")
	certIssuer        = sysSSLCert.MustProp("issuer-cert")
	ocspValidator     = schema.MustKind("sys crypto cert-validator ocsp")
	defaultCertName   = "/Common/default.crt"
	defaultKeyName    = "/Common/default.key"
	filestoreDir      = "filestore"
	tlsHandshakeLimit = 10 * time.Second
)

// tls fills the virtual's TLS from its client-ssl profiles (several, with
// SNI choosing) and its server-ssl profile. It returns false when the
// virtual was left out (t.skip or t.keep says why).
func (t *translator) tls(o *objects.Object, v *dataplane.Virtual) bool {
	var clients []*objects.Object
	var server *objects.Object
	if pv := virtualProfiles.Get(o); pv != nil {
		for _, it := range pv.Items {
			if p := t.cfg.Lookup(t.s, sslProfileSpec, it.Name); p != nil && sslMode.Effective(t.cfg, p) == "disabled" {
				continue // mode disabled: the profile does no TLS
			}
			if p := t.cfg.Lookup(t.s, []string{profileClientSSL.Key()}, it.Name); p != nil {
				clients = append(clients, p)
			} else if p := t.cfg.Lookup(t.s, []string{profileServerSSL.Key()}, it.Name); p != nil {
				if server != nil {
					t.skip(o, "server-ssl profiles %s and %s: a virtual server takes one server-ssl profile", server.Name, p.Name)
					return false
				}
				server = p
			}
		}
	}
	for _, ev := range []rules.Event{rules.ClientSSLHandshake, rules.ClientSSLClientCert, rules.ServerSSLHandshake, rules.ClientSSLData, rules.ServerSSLData,
		rules.ClientSSLServerHelloSend, rules.ClientSSLPassthrough, rules.ServerSSLServerHello, rules.ServerSSLServerCert} {
		serverSide := ev == rules.ServerSSLHandshake || ev == rules.ServerSSLData || ev == rules.ServerSSLServerHello || ev == rules.ServerSSLServerCert
		need := len(clients) > 0
		if serverSide {
			need = server != nil
		}
		if !need && t.rulesHandle(v, ev) {
			// BIG-IP refuses the rule on such a virtual.
			t.skip(o, "01070394:3: %s event in a rule requires an associated %s profile on the virtual server", ev, map[bool]string{true: "SERVERSSL", false: "CLIENTSSL"}[serverSide])
			return false
		}
		if (ev == rules.ClientSSLData || ev == rules.ServerSSLData) && v.MBLB != nil && t.rulesHandle(v, ev) {
			// Only standard virtual servers hand decrypted bytes to
			// rules (SSL::collect); an http or message-based one
			// would keep the rule and never run it.
			t.skip(o, "%s event in a rule: openltm raises it on standard virtual servers without an http or message-routing profile; use HTTP::collect or TCP::collect here", ev)
			return false
		}
	}
	if len(clients) == 0 && server == nil {
		return true
	}
	tc := &dataplane.TLS{}
	var built []*tlsprof.Built
	for _, p := range clients {
		cs, err := t.clientSSL(p)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		b, err := cs.Build()
		if err == nil {
			b.Log, err = t.failureLog(p)
		}
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		built = append(built, b)
		tc.ClientBuilt = append(tc.ClientBuilt, b)
		tc.ClientProfiles = append(tc.ClientProfiles, p.Name)
		tc.Warnings = append(tc.Warnings, t.chosenWarnings(p, b.Warnings)...)
		tc.HandshakeTimeout = max(tc.HandshakeTimeout, t.handshake(p))
		tc.ClientAlert = max(tc.ClientAlert, t.alertTimeout(p))
		if m := b.RecordLimit(); m > 0 && (tc.ClientMaxRecord == 0 || m < tc.ClientMaxRecord) {
			tc.ClientMaxRecord = m // the smallest of several profiles [M]
		}
		tc.AllowNonSSL = tc.AllowNonSSL || sslAllowNonSSL.Effective(t.cfg, p) == "enabled"
	}
	if len(built) > 0 {
		cfg, err := tlsprof.ForVirtual(o.Name, built)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		tc.Client = cfg
		tc.ClientGate = built[tlsprof.Pick(built, "")].Gate // the sni-default profile's [M]
		tc.ClientEnds = tlsprof.WatchesEnds(built...)
	}
	if server != nil {
		ss, err := t.serverSSL(server)
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		b, err := ss.Build()
		if err == nil {
			b.Log, err = t.failureLog(server)
		}
		if err != nil {
			t.skip(o, "%v", err)
			return false
		}
		tc.Server, tc.ServerProfile, tc.ServerGate = b, server.Name, b.Gate
		tc.ServerUseSNI = virtualUseSNI.Str(o) == "enabled"
		tc.Warnings = append(tc.Warnings, t.chosenWarnings(server, b.Warnings)...)
		tc.HandshakeTimeout = max(tc.HandshakeTimeout, t.handshake(server))
		tc.ServerAlert = t.alertTimeout(server)
	}
	if !t.sslForward(o, v, clients, built, server, tc) || !t.sslC3D(o, clients, server, tc) { // translate_sslfwd.go, translate_c3d.go
		return false
	}
	if t.choosesProfile(v) {
		tc.Choosable = t.choosable(o.Name)
	}
	v.TLS = tc
	return true
}

// choosesProfile reports whether a rule of v says SSL::profile.
func (t *translator) choosesProfile(v *dataplane.Virtual) bool {
	if dataplane.Program(v.Rules).ChoosesSSLProfile() {
		return true
	}
	if t.rules != nil {
		for _, r := range t.rules.pending[v].list {
			if r.ChoosesSSLProfile() {
				return true
			}
		}
	}
	return false
}

// choosable builds every client-ssl and server-ssl profile of the
// configuration for SSL::profile on the virtual named vs: BIG-IP lets a
// rule name any profile of the running configuration, attached to the
// virtual or not. A profile that does not build is kept with its error,
// which the rule that names it gets.
func (t *translator) choosable(vs string) map[string]*dataplane.Choosable {
	out := map[string]*dataplane.Choosable{}
	for _, p := range t.cfg.Of(profileServerSSL) {
		c := &dataplane.Choosable{Server: true, Tag: profileTag(p.Name)}
		out[p.Name] = c
		if sslMode.Effective(t.cfg, p) == "disabled" {
			c.Err = errModeDisabled
			continue
		}
		ss, err := t.serverSSL(p)
		var b *tlsprof.Built
		if err == nil {
			b, err = ss.Build()
		}
		if err == nil {
			b.Log, err = t.failureLog(p)
		}
		if c.Err = err; err == nil {
			c.TLS = &dataplane.TLS{Server: b, ServerProfile: p.Name, ServerGate: b.Gate, HandshakeTimeout: t.handshake(p), ServerAlert: t.alertTimeout(p)}
		}
	}
	for _, p := range t.cfg.Of(profileClientSSL) {
		c := &dataplane.Choosable{}
		out[p.Name] = c
		if sslMode.Effective(t.cfg, p) == "disabled" {
			c.Err = errModeDisabled
			continue
		}
		cs, err := t.clientSSL(p)
		var b *tlsprof.Built
		if err == nil {
			b, err = cs.Build()
		}
		if err == nil {
			b.Log, err = t.failureLog(p)
		}
		var cfg *tls.Config
		if err == nil {
			cfg, err = tlsprof.ForVirtual(vs, []*tlsprof.Built{b})
		}
		if c.Err = err; err == nil {
			c.TLS = &dataplane.TLS{Client: cfg, ClientProfiles: []string{p.Name}, ClientBuilt: []*tlsprof.Built{b}, ClientGate: b.Gate,
				HandshakeTimeout: t.handshake(p), ClientAlert: t.alertTimeout(p), ClientMaxRecord: b.RecordLimit(),
				ClientEnds: tlsprof.WatchesEnds(b), AllowNonSSL: sslAllowNonSSL.Effective(t.cfg, p) == "enabled"}
		}
	}
	return out
}

// profileTag is the mark a server-ssl profile chosen by SSL::profile
// puts on the member IDs of its connections (mblbvs): a hash of its
// name in the low 62 bits, never 0.
func profileTag(name string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(name))
	return max(h.Sum64()&(1<<62-1), 1)
}

// failureLog is a profile's log-publisher, which its failed handshakes
// are told to; nil when it names none. The publisher must exist.
func (t *translator) failureLog(p *objects.Object) (*tlsprof.FailureLog, error) {
	name := noneEmpty(sslLogPublisher.Effective(t.cfg, p))
	if name == "" {
		return nil, nil
	}
	pub := t.cfg.Lookup(t.s, []string{logPublisher.Key()}, objects.FullPath(folderOf(p.Name), name))
	if pub == nil {
		return nil, fmt.Errorf("profile %s: log-publisher %s: no such sys log-config publisher", p.Name, name)
	}
	l := &tlsprof.FailureLog{Publisher: pub.Name}
	if t.rules != nil && t.rules.e != nil {
		l.Send = t.rules.e.rules.rt.hsl.sendPublisher // the running configuration's publishers
	}
	return l, nil
}

// handshake is a profile's handshake-timeout (seconds, or indefinite:
// kept at BIG-IP's default bound, so a silent client cannot hold a
// connection open for ever).
func (t *translator) handshake(p *objects.Object) time.Duration {
	s := sslHandshake.Effective(t.cfg, p)
	if s == "" || s == "indefinite" || atoi(s) <= 0 {
		return tlsHandshakeLimit
	}
	return seconds(s)
}

// alertTimeout is a profile's alert-timeout: seconds to wait for the
// peer's close_notify after the proxy's; indefinite (and 0) wait for ever,
// BIG-IP's default, and cost nothing.
func (t *translator) alertTimeout(p *objects.Object) time.Duration {
	s := sslAlertTimeout.Effective(t.cfg, p)
	if s == "" || atoi(s) <= 0 {
		return 0
	}
	return seconds(s)
}

// common profile settings, for both sides.
func (t *translator) sslCommon(p *objects.Object) (ciphers string, group *tlsprof.CipherGroup, options []string, err error) {
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	ciphers = e(sslCiphers)
	if g := noneEmpty(e(sslCipherGroup)); g != "" {
		if group, err = t.cipherGroup(p, g); err != nil {
			return "", nil, nil, err
		}
	}
	if v := t.cfg.Effective(p, sslOptions.Name); v != nil {
		for _, w := range v.List {
			if w != "none" {
				options = append(options, w)
			}
		}
	}
	return ciphers, group, options, nil
}

// clientSSL reads a client-ssl profile, its certificates and keys loaded.
func (t *translator) clientSSL(p *objects.Object) (*tlsprof.ClientSSL, error) {
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	ciphers, group, options, err := t.sslCommon(p)
	if err != nil {
		return nil, err
	}
	cs := &tlsprof.ClientSSL{Name: p.Name, Ciphers: ciphers, CipherGroup: group, Options: options,
		ServerName:          noneEmpty(e(sslServerName)),
		SNIDefault:          e(sslSNIDefault) == "true",
		SNIRequire:          e(sslSNIRequire) == "true",
		Renegotiation:       e(sslRenegotiation) == "enabled",
		SessionTicket:       e(sslSessionTicket) == "enabled",
		PeerCertMode:        e(sslPeerCertMode),
		DynamicRecordSizing: e(sslDynamicRecords) == "enabled",
		ForgetCertificate:   e(sslRetainCert) == "false",
		AllowExpiredCRL:     e(sslAllowExpired) == "enabled",
		TicketLifetime:      secondsOf(int64(firstPositive(atoi(e(sslTicketTimeout)), atoi(e(sslCacheTimeout))))),
		OCSPStapling:        e(sslOCSPStapling) == "enabled",
		MaxActiveHandshakes: max(atoi(e(sslMaxHandshakes)), 0),
		CleanShutdown:       e(sslUnclean) == "disabled",
		StrictResume:        e(sslStrictResume) == "enabled",
		SignHash:            e(sslSignHash),
		MaxRecordSize:       atoi(e(sslMaxRecord)),
		NotifyCertStatus:    e(sslNotifyStatus) == "enabled",
	}
	cs.AuthenticateDepth = atoi(e(sslAuthDepth))
	cs.AuthenticateAlways = e(sslAuthFreq) == "always"
	cs.SecureRenegotiation = e(sslSecureReneg)
	pass := noneEmpty(e(sslPassphrase))
	chains, err := t.certKeyChain(p)
	if err != nil {
		return nil, err
	}
	for _, ck := range chains {
		if ck.ca {
			continue // the forward proxy's CA (caKeyChain)
		}
		entry := tlsprof.CertKeyChain{Name: ck.name}
		if entry.Cert, err = t.loadCert(p, ck.cert); err != nil {
			return nil, err
		}
		if entry.Key, err = t.loadKey(p, ck.key, firstNonEmpty(ck.passphrase, pass)); err != nil {
			return nil, err
		}
		if ck.chain != "" {
			if entry.Chain, err = t.loadCert(p, ck.chain); err != nil {
				return nil, err
			}
		}
		if cs.OCSPStapling && ck.params != "" { // translate_tlsold.go
			if err = t.paramsOCSP(p, ck, &entry); err != nil {
				return nil, err
			}
		} else if cs.OCSPStapling {
			if entry.OCSP, entry.Issuer, err = t.certOCSP(p, ck.cert); err != nil {
				return nil, err
			}
		}
		cs.CertKeyChain = append(cs.CertKeyChain, entry)
	}
	if ca := noneEmpty(e(sslCAFile)); ca != "" {
		if cs.CAFile, err = t.loadCert(p, ca); err != nil {
			return nil, err
		}
	}
	if ca := noneEmpty(e(sslClientCertCA)); ca != "" {
		if cs.ClientCertCA, err = t.loadCert(p, ca); err != nil {
			return nil, err
		}
	}
	if cs.CRL, err = t.profileCRL(p); err != nil {
		return nil, err
	}
	if cs.C3DOCSP, err = t.c3dOCSP(p); err != nil { // translate_c3d.go
		return nil, err
	}
	return cs, nil
}

// profileCRL is the revocation list a profile names: crl-file, else crl
// (BIG-IP's newer name for the same reference [M]); nil when none.
func (t *translator) profileCRL(p *objects.Object) (*tlsprof.CRL, error) {
	name := firstNonEmpty(noneEmpty(sslCRLFile.Effective(t.cfg, p)), noneEmpty(sslCRL.Effective(t.cfg, p)))
	if name == "" {
		return nil, nil
	}
	o := t.cfg.Lookup(t.s, specSSLCRL, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, fmt.Errorf("profile %s: sys file ssl-crl %s was not found", p.Name, name)
	}
	path, err := t.sslFilePath(o)
	if err != nil {
		return nil, err
	}
	return tlsCache.crl(o.Name, path)
}

// serverSSL reads a server-ssl profile.
func (t *translator) serverSSL(p *objects.Object) (*tlsprof.ServerSSL, error) {
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	ciphers, group, options, err := t.sslCommon(p)
	if err != nil {
		return nil, err
	}
	ss := &tlsprof.ServerSSL{Name: p.Name, Ciphers: ciphers, CipherGroup: group, Options: options,
		ServerName:       noneEmpty(e(sslServerName)),
		Renegotiation:    e(sslRenegotiation) == "enabled",
		SessionTicket:    e(sslSessionTicket) == "enabled",
		CacheSize:        atoi(e(sslCacheSize)),
		PeerCertMode:     e(sslPeerCertMode),
		AuthenticateName: noneEmpty(e(sslAuthName)),
		CacheTimeout:     secondsOf(int64(max(atoi(e(sslCacheTimeout)), 0))),
		AllowExpiredCRL:  e(sslAllowExpired) == "enabled",
		ExpireControl:    e(sslExpireControl),
		UntrustedControl: e(sslUntrusted),
		RevokedControl:   e(sslRevokedControl),
		UnknownControl:   e(sslUnknownControl),
		// indefinite (atoi 0) or a count.
		MaxActiveHandshakes: max(atoi(e(sslMaxHandshakes)), 0),
		CleanShutdown:       e(sslUnclean) == "disabled",
		StrictResume:        e(sslStrictResume) == "enabled",
		SignHash:            e(sslSignHash),
	}
	if v := noneEmpty(e(sslOCSP)); v != "" {
		if ss.OCSP, err = t.ocspValidator(p, v); err != nil {
			return nil, err
		}
	}
	ss.AuthenticateDepth = atoi(e(sslAuthDepth))
	ss.AuthenticateAlways = e(sslAuthFreq) == "always"
	ss.SecureRenegotiation = e(sslSecureReneg)
	if c := noneEmpty(e(sslCert)); c != "" {
		if ss.Cert, err = t.loadCert(p, c); err != nil {
			return nil, err
		}
		if ss.Key, err = t.loadKey(p, noneEmpty(e(sslKey)), noneEmpty(e(sslPassphrase))); err != nil {
			return nil, err
		}
		if ch := noneEmpty(e(sslChain)); ch != "" {
			if ss.Chain, err = t.loadCert(p, ch); err != nil {
				return nil, err
			}
		}
	}
	if ca := noneEmpty(e(sslCAFile)); ca != "" {
		if ss.CAFile, err = t.loadCert(p, ca); err != nil {
			return nil, err
		}
	}
	if ss.CRL, err = t.profileCRL(p); err != nil {
		return nil, err
	}
	return ss, nil
}

// certOCSP is the OCSP validator of the ssl-cert a client-ssl profile's
// cert-key-chain names, with its issuer-cert: the first ocsp validator
// of its cert-validators, when its cert-validation-options hold ocsp;
// nil when it has none.
func (t *translator) certOCSP(p *objects.Object, name string) (*tlsprof.OCSP, *tlsprof.Cert, error) {
	o := t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, nil, fmt.Errorf("profile %s: sys file ssl-cert %s was not found", p.Name, name)
	}
	opts, vals := o.Props[certValidation.Name], o.Props[certValidators.Name]
	if opts == nil || !slices.Contains(opts.List, "ocsp") || vals == nil {
		return nil, nil, nil
	}
	var v *tlsprof.OCSP
	for _, n := range vals.List {
		if n == "none" {
			continue
		}
		vo := t.cfg.Lookup(t.s, []string{ocspValidator.Key()}, objects.FullPath(folderOf(o.Name), n))
		if vo == nil {
			if t.cfg.Lookup(t.s, []string{"sys crypto cert-validator crl"}, objects.FullPath(folderOf(o.Name), n)) != nil {
				continue // a CRL validator: not for stapling
			}
			return nil, nil, fmt.Errorf("sys file ssl-cert %s: cert-validator %s was not found (sys crypto cert-validator ocsp)", o.Name, n)
		}
		var err error
		if v, err = t.ocspValidator(o, vo.Name); err != nil {
			return nil, nil, err
		}
		break
	}
	if v == nil {
		return nil, nil, nil
	}
	var issuer *tlsprof.Cert
	if in := noneEmpty(certIssuer.Str(o)); in != "" {
		if t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(o.Name), in)) == nil {
			return nil, nil, fmt.Errorf("sys file ssl-cert %s: issuer-cert %s was not found", o.Name, in)
		}
		var err error
		if issuer, err = t.loadCert(o, in); err != nil {
			return nil, nil, err
		}
	}
	return v, issuer, nil
}

// ocspValidator reads the `sys crypto cert-validator ocsp` name that p
// (a profile or a certificate) refers to.
func (t *translator) ocspValidator(p *objects.Object, name string) (*tlsprof.OCSP, error) {
	o := t.cfg.Lookup(t.s, []string{ocspValidator.Key()}, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, fmt.Errorf("%s %s: sys crypto cert-validator ocsp %s was not found", p.Kind.Key(), p.Name, name)
	}
	return t.ocspOf(ocspValidator, o)
}

// ocspOf reads o, a `sys crypto cert-validator ocsp` or an `ltm profile
// ocsp-stapling-params` (k, its kind: the two share their settings'
// names; a setting k lacks reads as its default).
func (t *translator) ocspOf(k *objects.Kind, o *objects.Object) (*tlsprof.OCSP, error) {
	what := k.Key() + " " + o.Name
	str := func(prop string) string {
		if pr := k.Prop(prop); pr != nil {
			return pr.Str(o)
		}
		return ""
	}
	secs := func(prop string, indefinite time.Duration) time.Duration {
		v := str(prop)
		if v == "indefinite" || v == "" {
			return indefinite
		}
		return secondsOf(int64(max(atoi(v), 0)))
	}
	v := &tlsprof.OCSP{Name: o.Name, ResponderURL: noneEmpty(str("responder-url")), Params: k != ocspValidator,
		// timeout indefinite: bounded at 30 s, so that a responder that
		// never answers does not hold handshakes for ever [M].
		Timeout:           secs("timeout", 30*time.Second),
		CacheTimeout:      secs("cache-timeout", 0),
		CacheErrorTimeout: secs("cache-error-timeout", 0),
		ClockSkew:         secs("clock-skew", 0),
		SignHash:          crypto.SHA256,
		StatusAge:         secs("status-age", 0),
		// strict-resp-cert-check: a trusted responder must be marked for
		// OCSP signing too.
		StrictRespCertCheck: str("strict-resp-cert-check") == "enabled",
		ConcurrentLimit:     max(atoi(str("concurrent-connections-limit")), 0),
	}
	if v.ResponderURL != "" {
		if u, err := url.Parse(v.ResponderURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: responder-url %q is not an http:// or https:// URL", what, v.ResponderURL)
		}
	}
	if str("sign-hash") == "sha1" {
		v.SignHash = crypto.SHA1
	}
	if tr := noneEmpty(str("trusted-responders")); tr != "" {
		var err error
		if v.TrustedResponders, err = t.loadCert(o, tr); err != nil {
			return nil, err
		}
	}
	if sc, sk := noneEmpty(str("signer-cert")), noneEmpty(str("signer-key")); sc != "" || sk != "" {
		if sc == "" || sk == "" {
			return nil, fmt.Errorf("%s: signer-cert and signer-key go together (signed requests need both)", what)
		}
		var err error
		if v.Signer, err = t.loadCert(o, sc); err != nil {
			return nil, fmt.Errorf("%s: signer-cert: %v", what, err)
		}
		if v.SignerKey, err = t.loadKey(o, sk, noneEmpty(str("signer-key-passphrase"))); err != nil {
			return nil, fmt.Errorf("%s: signer-key: %v", what, err)
		}
		if _, err := tlsprof.Pair(o.Name, v.Signer, v.SignerKey, nil); err != nil {
			return nil, fmt.Errorf("%s: signer-cert and signer-key: %v", what, err)
		}
	}
	if name := noneEmpty(str("dns-resolver")); name != "" {
		r := t.cfg.Lookup(t.s, specDNSResolver, objects.FullPath(folderOf(o.Name), name))
		if r == nil {
			return nil, fmt.Errorf("%s: dns-resolver: net dns-resolver %s was not found", what, name)
		}
		rc, err := t.resolverOf(r)
		if err != nil {
			return nil, err
		}
		v.Resolver, v.ResolverName = ocspResolvers.get(rc), r.Name
	}
	// ocsp-stapling-params uses its proxy-server-pool only with
	// use-proxy-server enabled; a cert-validator whenever it names one.
	if name := noneEmpty(str("proxy-server-pool")); name != "" && (k == ocspValidator || str("use-proxy-server") == "enabled") {
		// The pool's members are HTTP proxies the responder is reached
		// through; they resolve its name, so a dns-resolver named too
		// is not used [M].
		pool := t.cfg.Lookup(t.s, specPool, objects.FullPath(folderOf(o.Name), name))
		if pool == nil {
			return nil, fmt.Errorf("%s: proxy-server-pool: ltm pool %s was not found", what, name)
		}
		v.ProxyPool, v.Proxies = pool.Name, t.poolAvailable(pool.Name)
		v.Resolver, v.ResolverName = nil, ""
	}
	return v, nil
}

// poolAvailable is the members of pool that may take connections when
// it is called, from the running dataplane (none before one is
// attached): an OCSP validator's proxy-server-pool asks it at each
// exchange, so monitors and member states apply as for traffic.
func (t *translator) poolAvailable(pool string) func() []netip.AddrPort {
	var e *Engine
	if t.rules != nil {
		e = t.rules.e
	}
	return func() []netip.AddrPort {
		if e == nil {
			return nil
		}
		p := e.rules.rt.flows.p.Load()
		if p == nil {
			return nil
		}
		m, _ := p.PoolAvailable(pool)
		return m
	}
}

// ocspResolvers keeps one resolver (and its answers' cache) per net
// dns-resolver configuration across commits, for the OCSP validators
// that name it.
var ocspResolvers resolverCache

type resolverCache struct {
	mu sync.Mutex
	m  map[string]*fwdproxy.Resolver
}

// get is the resolver of rc (its name and settings: a changed resolver
// is a new one, with an empty cache).
func (c *resolverCache) get(rc fwdproxy.ResolverConfig) *fwdproxy.Resolver {
	k := fmt.Sprintf("%+v", rc)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r := c.m[k]; r != nil {
		return r
	}
	if c.m == nil || len(c.m) >= 256 {
		c.m = map[string]*fwdproxy.Resolver{}
	}
	r := fwdproxy.NewResolver(rc)
	c.m[k] = r
	return r
}

// ckEntry is one entry of a cert-key-chain block.
type ckEntry struct {
	name, cert, key, chain, passphrase string
	params                             string // ocsp-stapling-params (BIG-IP 11.6 to 13.0)
	ca                                 bool   // usage CA: a forward proxy's CA, not a certificate to serve
}

// certKeyChain reads the profile's cert-key-chain: its own block, else its
// own cert and key (the form before BIG-IP 11.5), else what it inherits,
// in the same order.
func (t *translator) certKeyChain(p *objects.Object) ([]ckEntry, error) {
	for cur, depth := p, 0; cur != nil && depth < 16; depth++ {
		if v := cur.Props[sslCertKeyChain.Name]; v != nil && strings.TrimSpace(strings.Trim(strings.TrimSpace(v.Str), "{}")) != "" {
			return parseCertKeyChain(cur.Name, v.Str)
		}
		if c := cur.Props[sslCert.Name]; c != nil && noneEmpty(c.Str) != "" {
			e := ckEntry{name: "default", cert: c.Str}
			if k := cur.Props[sslKey.Name]; k != nil {
				e.key = noneEmpty(k.Str)
			}
			if ch := cur.Props[sslChain.Name]; ch != nil {
				e.chain = noneEmpty(ch.Str)
			}
			return []ckEntry{e}, nil
		}
		cur = t.tlsParent(p, cur)
	}
	return nil, nil
}

// tlsParent is the profile cur inherits from (its defaults-from, else
// its kind's built-in parent), looked up among p's kind; nil at the top.
func (t *translator) tlsParent(p, cur *objects.Object) *objects.Object {
	parent := ""
	if d := cur.Props[defaultsFrom]; d != nil {
		parent = d.Str
	} else if cur.Kind != nil && cur.Name != cur.Kind.Parent {
		parent = cur.Kind.Parent
	}
	if parent == "" || parent == "none" {
		return nil
	}
	return t.cfg.Lookup(t.s, []string{p.Kind.Key()}, parent)
}

// caKeyChain is the profile's CA cert-key-chain (the entries with usage
// CA, which give the SSL forward proxy its CA): its own block's; when its
// own block has none and inherit-ca-certkeychain is true, its parent's,
// as the parent would use them [M]. A profile with no block of its own
// inherits the whole chain, CA entries with it (certKeyChain).
func (t *translator) caKeyChain(p *objects.Object) ([]ckEntry, error) {
	for cur, depth := p, 0; cur != nil && depth < 16; depth++ {
		chain, err := t.certKeyChain(cur)
		if err != nil {
			return nil, err
		}
		var cas []ckEntry
		for _, e := range chain {
			if e.ca {
				cas = append(cas, e)
			}
		}
		if len(cas) > 0 || sslInheritCA.Effective(t.cfg, cur) != "true" {
			return cas, nil
		}
		cur = t.tlsParent(p, cur)
	}
	return nil, nil
}

// parseCertKeyChain reads `{ name { cert C key K chain H passphrase P } ... }`.
func parseCertKeyChain(profile, raw string) ([]ckEntry, error) {
	f, err := grammar.Parse("cert-key-chain", []byte("x "+raw))
	if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
		return nil, fmt.Errorf("profile %s: cert-key-chain is not a { name { cert C key K } } block", profile)
	}
	b, ok := f.Statements[0].Items[1].(*grammar.Block)
	if !ok {
		return nil, fmt.Errorf("profile %s: cert-key-chain is not a { } block", profile)
	}
	var out []ckEntry
	for i := 0; i < len(b.Items); i++ {
		w, ok := b.Items[i].(*grammar.Word)
		if !ok {
			return nil, fmt.Errorf("profile %s: cert-key-chain: an entry name must come before { }", profile)
		}
		e := ckEntry{name: w.Text}
		if i+1 < len(b.Items) {
			if body, ok := b.Items[i+1].(*grammar.Block); ok {
				i++
				ws := grammar.Texts(body.Items)
				for j := 0; j+1 < len(ws); j += 2 {
					val := noneEmpty(ws[j+1])
					switch ws[j] {
					case "cert":
						e.cert = val
					case "key":
						e.key = val
					case "chain":
						e.chain = val
					case "passphrase":
						e.passphrase = val
					case "ocsp-stapling-params":
						e.params = val
					case "usage":
						switch strings.ToUpper(ws[j+1]) {
						case "SERVER":
						case "CA":
							e.ca = true
						default:
							return nil, fmt.Errorf("profile %s: cert-key-chain entry %s: usage %s is not valid (SERVER or CA)", profile, e.name, ws[j+1])
						}
					}
				}
			}
		}
		if e.cert == "" || e.key == "" {
			return nil, fmt.Errorf("profile %s: cert-key-chain entry %s needs both cert and key", profile, e.name)
		}
		out = append(out, e)
	}
	return out, nil
}

// firstPositive is the first of ns above 0, else 0: session-ticket-timeout
// 0 means the session cache's cache-timeout [M].
func firstPositive(ns ...int) int {
	for _, n := range ns {
		if n > 0 {
			return n
		}
	}
	return 0
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// loadCert finds and reads the ssl-cert object a profile names.
func (t *translator) loadCert(p *objects.Object, name string) (*tlsprof.Cert, error) {
	o := t.cfg.Lookup(t.s, specSSLCert, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, fmt.Errorf("profile %s: sys file ssl-cert %s was not found", p.Name, name)
	}
	path, err := t.sslFilePath(o)
	if err != nil {
		return nil, err
	}
	return tlsCache.cert(o.Name, path)
}

// loadKey finds and reads the ssl-key object a profile names.
func (t *translator) loadKey(p *objects.Object, name, pass string) (*tlsprof.Key, error) {
	if name == "" {
		return nil, fmt.Errorf("profile %s: a certificate needs its key", p.Name)
	}
	o := t.cfg.Lookup(t.s, specSSLKey, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, fmt.Errorf("profile %s: sys file ssl-key %s was not found", p.Name, name)
	}
	path, err := t.sslFilePath(o)
	if err != nil {
		return nil, err
	}
	if kp := noneEmpty(sslKeyPassphrase.Str(o)); kp != "" && pass == "" {
		pass = kp
	}
	return tlsCache.key(o.Name, path, pass)
}

func folderOf(name string) string {
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		return name[:i]
	}
	return "/Common"
}

// sslFilePath is where an ssl-cert or ssl-key object's PEM is: openltm's
// stored copy (cache-path), else its source-path; the built-in
// default.crt and default.key are the engine's own pair (made at first
// use, as a BIG-IP makes its own at install); the built-in ca-bundle.crt
// is the system's CA bundle (cabundle.go).
func (t *translator) sslFilePath(o *objects.Object) (string, error) {
	if c := noneEmpty(sslCachePath.Str(o)); c != "" {
		if _, err := os.Stat(c); err == nil {
			return c, nil
		}
	}
	if s := noneEmpty(sslSourcePath.Str(o)); s != "" {
		return strings.TrimPrefix(s, "file:"), nil
	}
	if o.BuiltIn && (o.Name == defaultCertName || o.Name == defaultKeyName) && t.rules != nil && t.rules.e != nil {
		crt, key, err := defaultPair(filepath.Join(t.rules.e.StateDir(), filestoreDir))
		if err != nil {
			return "", fmt.Errorf("%s %s: %v", o.Kind.Key(), o.Name, err)
		}
		if o.Name == defaultCertName {
			return crt, nil
		}
		return key, nil
	}
	if o.BuiltIn && o.Name == caBundleName { // cabundle.go
		p, err := systemCABundle()
		if err != nil {
			return "", fmt.Errorf("%s %s: %v", o.Kind.Key(), o.Name, err)
		}
		return p, nil
	}
	return "", fmt.Errorf("%s %s has no file (set source-path file:PATH)", o.Kind.Key(), o.Name)
}

// tlsFileCache keeps parsed certificates and keys by path, size and
// modification time, so that a commit does not parse every file again.
type tlsFileCache struct {
	mu    sync.Mutex
	certs map[string]*tlsprof.Cert
	keys  map[string]*tlsprof.Key
	crls  map[string]*tlsprof.CRL
}

var tlsCache = &tlsFileCache{}

// maxCachedFiles bounds the cache; past it, it starts again.
const maxCachedFiles = 4096

func stamp(name, path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%s\x00%s\x00%d\x00%d", name, path, fi.Size(), fi.ModTime().UnixNano()), nil
}

func (c *tlsFileCache) cert(name, path string) (*tlsprof.Cert, error) {
	k, err := stamp(name, path)
	if err != nil {
		return nil, fmt.Errorf("sys file ssl-cert %s: cannot read %s: %v", name, path, unwrapPathErr(err))
	}
	c.mu.Lock()
	if x := c.certs[k]; x != nil {
		c.mu.Unlock()
		return x, nil
	}
	c.mu.Unlock()
	x, err := tlsprof.LoadCert(name, path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.certs == nil || len(c.certs) > maxCachedFiles {
		c.certs = map[string]*tlsprof.Cert{}
	}
	c.certs[k] = x
	c.mu.Unlock()
	return x, nil
}

func (c *tlsFileCache) key(name, path, pass string) (*tlsprof.Key, error) {
	k, err := stamp(name, path)
	if err != nil {
		return nil, fmt.Errorf("sys file ssl-key %s: cannot read %s: %v", name, path, unwrapPathErr(err))
	}
	k += "\x00" + pass
	c.mu.Lock()
	if x := c.keys[k]; x != nil {
		c.mu.Unlock()
		return x, nil
	}
	c.mu.Unlock()
	x, err := tlsprof.LoadKey(name, path, pass)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.keys == nil || len(c.keys) > maxCachedFiles {
		c.keys = map[string]*tlsprof.Key{}
	}
	c.keys[k] = x
	c.mu.Unlock()
	return x, nil
}

func (c *tlsFileCache) crl(name, path string) (*tlsprof.CRL, error) {
	k, err := stamp(name, path)
	if err != nil {
		return nil, fmt.Errorf("sys file ssl-crl %s: cannot read %s: %v", name, path, unwrapPathErr(err))
	}
	c.mu.Lock()
	if x := c.crls[k]; x != nil {
		c.mu.Unlock()
		return x, nil
	}
	c.mu.Unlock()
	x, err := tlsprof.LoadCRL(name, path)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.crls == nil || len(c.crls) > maxCachedFiles {
		c.crls = map[string]*tlsprof.CRL{}
	}
	c.crls[k] = x
	c.mu.Unlock()
	return x, nil
}

func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// tlsWarnings are the TLS settings of dc's virtuals that are applied
// otherwise than BIG-IP would (Go's limits), one line each, sorted.
func tlsWarnings(dc *dataplane.Config) []string {
	seen := map[string]bool{}
	var out []string
	for _, v := range dc.Virtuals {
		if v.TLS == nil {
			continue
		}
		for _, w := range v.TLS.Warnings {
			if !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	sort.Strings(out)
	return out
}

// warnTLS tells of the TLS settings a commit newly applies otherwise than
// BIG-IP would.
func warnTLS(old *objects.Config, h *planeHook, tr *ltmTranslation, warn func(string)) {
	had := map[string]bool{}
	if old != nil {
		if runCfg, runTr := h.running(); runCfg == old && runTr != nil {
			for _, w := range tlsWarnings(runTr.dc) {
				had[w] = true
			}
		}
	}
	for _, w := range tlsWarnings(tr.dc) {
		if !had[w] {
			warn(w)
		}
	}
}

// rulesHandle reports whether v's rules (attached or pending) handle ev.
func (t *translator) rulesHandle(v *dataplane.Virtual, ev rules.Event) bool {
	if p := dataplane.Program(v.Rules); p != nil && p.Handles(ev) {
		return true
	}
	if t.rules != nil {
		for _, r := range t.rules.pending[v].list {
			if r.Handles(ev) {
				return true
			}
		}
	}
	return false
}

// chosenWarnings keeps the warnings about settings a user chose: BIG-IP's
// defaults (the DEFAULT cipher string, renegotiation enabled) name suites
// and a renegotiation Go does not do on every profile, and saying so on
// every commit would bury what matters.
func (t *translator) chosenWarnings(p *objects.Object, warns []string) []string {
	var out []string
	for _, w := range warns {
		switch {
		case strings.Contains(w, `cipher string "DEFAULT"`) && !t.userSet(p, sslCiphers.Name):
		case strings.Contains(w, "renegotiation enabled") && !t.userSet(p, sslRenegotiation.Name):
		default:
			out = append(out, w)
		}
	}
	return out
}

// userSet reports whether p, or a parent that is not built in, sets prop.
func (t *translator) userSet(p *objects.Object, prop string) bool {
	for cur, depth := p, 0; cur != nil && !cur.BuiltIn && depth < 16; depth++ {
		if cur.Props[prop] != nil {
			return true
		}
		d := cur.Props[defaultsFrom]
		if d == nil || d.Str == "" || d.Str == "none" {
			return false
		}
		cur = t.cfg.Lookup(t.s, []string{p.Kind.Key()}, d.Str)
	}
	return false
}

var (
	cipherRuleKind  = schema.MustKind("ltm cipher rule")
	cipherRuleStr   = cipherRuleKind.MustProp("cipher")
	cipherGroupKind = schema.MustKind("ltm cipher group")
	cipherRuleDH    = cipherRuleKind.MustProp("dh-groups")
	cipherGroupOrd  = cipherGroupKind.MustProp("ordering")
)

// cipherGroup reads the `ltm cipher group` a profile names, with its
// rules (the user's, or BIG-IP's built-in f5-default, f5-ecc, f5-secure).
func (t *translator) cipherGroup(p *objects.Object, name string) (*tlsprof.CipherGroup, error) {
	o := t.cfg.Lookup(t.s, []string{cipherGroupKind.Key()}, objects.FullPath(folderOf(p.Name), name))
	if o == nil {
		return nil, fmt.Errorf("profile %s: ltm cipher group %s was not found", p.Name, name)
	}
	g := &tlsprof.CipherGroup{Name: o.Name, Ordering: cipherGroupOrd.Str(o)}
	for _, part := range []struct {
		prop string
		to   *[]*tlsprof.CipherRule
	}{{"allow", &g.Allow}, {"require", &g.Restrict}, {"exclude", &g.Exclude}} {
		v := o.Props[part.prop]
		if v == nil || strings.TrimSpace(v.Str) == "" || v.Str == "none" {
			continue
		}
		f, err := grammar.Parse(part.prop, []byte("x "+v.Str))
		if err != nil || len(f.Statements) != 1 || len(f.Statements[0].Items) != 2 {
			return nil, fmt.Errorf("ltm cipher group %s: %s is not a { rule { } ... } block", o.Name, part.prop)
		}
		b, ok := f.Statements[0].Items[1].(*grammar.Block)
		if !ok {
			return nil, fmt.Errorf("ltm cipher group %s: %s is not a { rule { } ... } block", o.Name, part.prop)
		}
		for _, it := range b.Items {
			w, ok := it.(*grammar.Word)
			if !ok {
				continue // a rule's { } body
			}
			r, err := t.cipherRule(o, w.Text)
			if err != nil {
				return nil, err
			}
			*part.to = append(*part.to, r)
		}
	}
	return g, nil
}

func (t *translator) cipherRule(g *objects.Object, name string) (*tlsprof.CipherRule, error) {
	full := objects.FullPath(folderOf(g.Name), name)
	if o := t.cfg.Lookup(t.s, []string{cipherRuleKind.Key()}, full); o != nil {
		r := &tlsprof.CipherRule{Name: o.Name, Cipher: cipherRuleStr.Str(o), DHGroups: cipherRuleDH.Str(o)}
		if err := tlsprof.CheckDHGroups(r.DHGroups); err != nil {
			return nil, fmt.Errorf("ltm cipher rule %s: %w", o.Name, err)
		}
		return r, nil
	}
	if r := tlsprof.BuiltinRules[full]; r != nil {
		return r, nil
	}
	return nil, fmt.Errorf("ltm cipher group %s: ltm cipher rule %s was not found (built in: f5-aes, f5-default, f5-ecc, f5-hw_keys, f5-secure)", g.Name, name)
}

// errModeDisabled is SSL::profile's error for a profile with mode
// disabled, which does no TLS.
var errModeDisabled = errors.New("the profile's mode is disabled")
