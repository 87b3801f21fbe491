package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/starttls"
	"github.com/openltm/openltm/objects"
)

// The smtps, imap, pop3, client-ldap and server-ldap profiles as the
// STARTTLS offload applies them: activation-mode.
var (
	profileSMTPS = schema.MustKind("ltm profile smtps")
	profileIMAP  = schema.MustKind("ltm profile imap")
	profilePOP3  = schema.MustKind("ltm profile pop3")
	// client-ldap is the fourth: the same offload, read message by
	// message (ldap.go in dataplane/starttls).
	profileClientLDAP = schema.MustKind("ltm profile client-ldap")
	profileServerLDAP = schema.MustKind("ltm profile server-ldap")
	mailProfiles      = []struct {
		kind  *objects.Kind
		proto starttls.Protocol
	}{{profileSMTPS, starttls.SMTP}, {profileIMAP, starttls.IMAP}, {profilePOP3, starttls.POP3}, {profileClientLDAP, starttls.LDAP}}
)

// starttls gives a TCP virtual its smtps, imap, pop3 or client-ldap
// profile, and its server-ldap profile (serverLDAP). BIG-IP
// refuses one without a client-ssl profile (whose certificate the
// client's TLS uses) and without a tcp profile; openltm also refuses it
// beside http, ftp or another of the three (they read the same bytes),
// and beside server-ssl (the member's side of the offload is plaintext)
// [M: the messages are openltm's]; client-ldap goes with server-ssl (the
// member's side is then TLS, with or without server-ldap). Where the offload does not run (an
// mblb profile, a stream profile, rules that handle CLIENT_DATA or
// SERVER_DATA) the virtual is left out with a message. It returns false
// when the virtual was left out.
func (t *translator) starttls(o *objects.Object, v *dataplane.Virtual) bool {
	var p *objects.Object
	var proto starttls.Protocol
	for _, mp := range mailProfiles {
		q := t.profile(o, mp.kind)
		if q == nil {
			continue
		}
		if p != nil {
			return t.refuse("profile %s (%s) cannot be used with profile %s (%s) on the virtual server (%s)",
				q.Name, mp.kind.Key()[len("ltm profile "):], p.Name, proto.Kind(), o.Name)
		}
		p, proto = q, mp.proto
	}
	if !t.serverLDAP(o, v, p, proto) {
		return false
	}
	if p == nil {
		return true
	}
	kind := proto.Kind()
	switch {
	case t.profile(o, profileTCP) == nil || v.IsUDP():
		return t.refuse("profile %s (%s) requires a tcp profile on the virtual server (%s)", p.Name, kind, o.Name)
	case t.profile(o, profileClientSSL) == nil:
		return t.refuse("profile %s (%s) requires a client-ssl profile on the virtual server (%s)", p.Name, kind, o.Name)
	}
	others := []*objects.Kind{profileHTTP, profileFTP, profileServerSSL}
	if proto == starttls.LDAP {
		others = others[:2] // the member's side may be TLS: server-ssl, with server-ldap or from the first byte
	}
	for _, other := range others {
		if q := t.profile(o, other); q != nil {
			return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)",
				p.Name, kind, other.Key()[len("ltm profile "):], q.Name, o.Name)
		}
	}
	mode, ok := starttls.ParseMode(mailMode(t, p, proto))
	if !ok {
		t.skip(o, "profile %s: activation-mode %q: want none, allow or require", p.Name, mailMode(t, p, proto))
		return false
	}
	without := func(why string) bool {
		t.skip(o, "profile %s: openltm's STARTTLS offload %s", p.Name, why)
		return false
	}
	switch {
	case v.MBLB != nil:
		return without("does not run on message-based virtuals (an mblb profile)")
	case v.Stream != nil:
		return without("does not run with a stream profile")
	case v.TLS == nil || v.TLS.Client == nil:
		return without("needs the client-ssl profile to be usable")
	}
	if why := rulesReadBytes(v); why != "" { // translate_ftp.go
		return without(why)
	}
	v.STARTTLS = &starttls.Options{Profile: p.Name, Protocol: proto, Mode: mode}
	return true
}

// mailMode is a profile's effective activation-mode.
func mailMode(t *translator, p *objects.Object, proto starttls.Protocol) string {
	k := mailProfiles[proto].kind
	return k.MustProp("activation-mode").Effective(t.cfg, p)
}

// serverLDAP gives a TCP virtual its server-ldap profile: the virtual
// sends StartTLS to the member, then runs the server-ssl handshake.
// BIG-IP refuses one without a server-ssl profile (whose settings the
// member's TLS uses) and without a tcp profile; openltm also refuses it
// beside http, ftp, smtps, imap or pop3, which read other protocols
// [M: the messages are openltm's]. mail is the virtual's STARTTLS
// profile, if any, and proto its protocol. It returns false when the
// virtual was left out.
func (t *translator) serverLDAP(o *objects.Object, v *dataplane.Virtual, mail *objects.Object, proto starttls.Protocol) bool {
	p := t.profile(o, profileServerLDAP)
	if p == nil {
		return true
	}
	const kind = "server-ldap"
	switch {
	case t.profile(o, profileTCP) == nil || v.IsUDP():
		return t.refuse("profile %s (%s) requires a tcp profile on the virtual server (%s)", p.Name, kind, o.Name)
	case t.profile(o, profileServerSSL) == nil:
		return t.refuse("profile %s (%s) requires a server-ssl profile on the virtual server (%s)", p.Name, kind, o.Name)
	case mail != nil && proto != starttls.LDAP:
		return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)", p.Name, kind, proto.Kind(), mail.Name, o.Name)
	}
	for _, other := range []*objects.Kind{profileHTTP, profileFTP} {
		if q := t.profile(o, other); q != nil {
			return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)",
				p.Name, kind, other.Key()[len("ltm profile "):], q.Name, o.Name)
		}
	}
	word := profileServerLDAP.MustProp("activation-mode").Effective(t.cfg, p)
	mode, ok := starttls.ParseMode(word)
	if !ok {
		t.skip(o, "profile %s: activation-mode %q: want none, allow or require", p.Name, word)
		return false
	}
	switch {
	case v.MBLB != nil:
		t.skip(o, "profile %s: openltm's LDAP StartTLS toward members does not run on message-based virtuals (an mblb profile)", p.Name)
		return false
	case v.TLS == nil || v.TLS.Server == nil:
		t.skip(o, "profile %s: openltm's LDAP StartTLS toward members needs the server-ssl profile to be usable", p.Name)
		return false
	}
	v.ServerLDAP = &starttls.ServerLDAP{Profile: p.Name, Mode: mode}
	return true
}
