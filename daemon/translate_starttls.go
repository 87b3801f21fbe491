package daemon

import (
	"fmt"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/starttls"
	"github.com/openltm/openltm/objects"
)

// The smtps, imap and pop3 profiles as the STARTTLS offload applies
// them: activation-mode.
var (
	profileSMTPS = schema.MustKind("ltm profile smtps")
	profileIMAP  = schema.MustKind("ltm profile imap")
	profilePOP3  = schema.MustKind("ltm profile pop3")
	mailProfiles = []struct {
		kind  *objects.Kind
		proto starttls.Protocol
	}{{profileSMTPS, starttls.SMTP}, {profileIMAP, starttls.IMAP}, {profilePOP3, starttls.POP3}}
)

// starttls gives a TCP virtual its smtps, imap or pop3 profile. BIG-IP
// refuses one without a client-ssl profile (whose certificate the
// client's TLS uses) and without a tcp profile; openltm also refuses it
// beside http, ftp or another of the three (they read the same bytes),
// and beside server-ssl (the member's side of the offload is plaintext)
// [M: the messages are openltm's]. Where the offload does not run (an
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
	for _, other := range []*objects.Kind{profileHTTP, profileFTP, profileServerSSL} {
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
	if v.Rules != nil {
		for _, ev := range ftpRuleDataEvents {
			if v.Rules.Handles(ev) {
				return without(fmt.Sprintf("does not run on virtuals whose rules handle %s", ev))
			}
		}
	}
	v.STARTTLS = &starttls.Options{Profile: p.Name, Protocol: proto, Mode: mode}
	return true
}

// mailMode is a profile's effective activation-mode.
func mailMode(t *translator, p *objects.Object, proto starttls.Protocol) string {
	k := mailProfiles[proto].kind
	return k.MustProp("activation-mode").Effective(t.cfg, p)
}
