package daemon

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The sip profile and sip_info persistence as the SIP engine applies
// them (dataplane/mblb/sip.go, sipsession.go).
var (
	profileSIP   = schema.MustKind("ltm profile sip")
	sipMaxSize   = profileSIP.MustProp("max-size")
	persistSIPK  = schema.MustKind("ltm persistence sip")
	persistSIPHd = persistSIPK.MustProp("sip-info")
)

// sip makes a virtual with a sip profile a SIP virtual: with an mblb
// profile each SIP request is balanced by itself, without one the
// connection is balanced once and carries all its messages (as BIG-IP
// does) [M]. Either way a message is framed by SIP's rules and bounded by
// the profile's max-size. BIG-IP refuses sip beside http on one virtual
// and needs a transport profile (tcp or udp) [M: the messages are
// openltm's]. Over UDP each datagram is one message, balanced by
// itself. One-connect beside sip is valid on BIG-IP and not run here
// yet: such a virtual is kept with a warning and carries no traffic. It
// returns false when the virtual was left out.
func (t *translator) sip(o *objects.Object, v *dataplane.Virtual, sp *objects.Object) bool {
	if hp := t.profile(o, profileHTTP); hp != nil {
		return t.refuse("profile %s (sip) cannot be used with http profile %s on the virtual server (%s)", sp.Name, hp.Name, o.Name)
	}
	if v.IsUDP() {
		// Each datagram is a message, balanced by itself
		// (dataplane/internal/udp/sip.go).
		v.SIP = &dataplane.SIPDatagram{}
		return true
	}
	if t.profile(o, profileTCP) == nil {
		return t.refuse("profile %s (sip) requires a tcp or udp profile on the virtual server (%s)", sp.Name, o.Name)
	}
	if !t.streamElsewhere(o) { // translate_stream.go
		return false
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, sp) }
	size := atoi(e(sipMaxSize))
	if size <= 0 {
		t.skip(o, "profile %s: max-size %q is not a positive number of bytes", sp.Name, e(sipMaxSize))
		return false
	}
	m := &dataplane.MBLB{Profile: sp.Name}
	perConn := true
	if mp := t.profile(o, profileMBLB); mp != nil {
		s, err := mblbSettings(func(p *objects.Prop) string { return p.Effective(t.cfg, mp) })
		if err != nil {
			t.skip(o, "profile %s: %v", mp.Name, err)
			return false
		}
		if f := mblbFraming.Effective(t.cfg, mp); f != "" && f != "rule" {
			t.skip(o, "profile %s: framing %s cannot be used beside sip profile %s, which frames SIP messages (leave framing rule, the default)", mp.Name, f, sp.Name)
			return false
		}
		m = s
		m.Profile = mp.Name
		perConn = false
	}
	m.MaxMessageSize = size
	m.Request = mblb.Framing{Mode: mblb.SIP, SIP: mblb.SIPOptions{MaxHeaderSize: min(size, mblb.DefaultSIPMaxHeader), PerConnection: perConn}}
	m.Response = mblb.Framing{}
	if oc := t.profile(o, profileOneConnect); oc != nil {
		t.keep(o, "profile %s: openltm's SIP virtuals keep a connection per client and member and do not share them (one-connect)", oc.Name)
		return false
	}
	v.MBLB = m
	return true
}

// sipPersist applies sip_info persistence: the key is the value of the
// profile's sip-info header field, read from every SIP request. Without
// a sip profile there is no SIP message to read it from: kept, with a
// warning, as cookie persistence without http is [M].
func (t *translator) sipPersist(o *objects.Object, v *dataplane.Virtual, prof *objects.Object, p *dataplane.Persistence) bool {
	if v.SIP == nil && (v.MBLB == nil || v.MBLB.Request.Mode != mblb.SIP) {
		t.keep(o, "persistence profile %s: sip persistence needs a sip profile on the virtual server", prof.Name)
		return false
	}
	h := strings.TrimSpace(persistSIPHd.Effective(t.cfg, prof))
	if h == "" || h == "none" || strings.ContainsAny(h, ": \t") {
		t.skip(o, "persistence profile %s: sip-info %q is not a header field name", prof.Name, h)
		return false
	}
	p.Method = dataplane.PersistSIP
	if v.SIP != nil {
		v.SIP.PersistHeader = h
	} else {
		v.MBLB.Request.SIP.PersistHeader = h
	}
	return true
}

// sipNeeds refuses, as BIG-IP refuses an event without its profile
// (01070394), a rule list with SIP_REQUEST or SIP_RESPONSE on a virtual
// server without a sip profile, where they could never run. BIG-IP
// reports the first such rule; so does this.
func (t *translator) sipNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, profileSIP) != nil {
		return true
	}
	for _, r := range list {
		for _, ev := range []rules.Event{rules.SIPRequest, rules.SIPResponse} {
			if r.Handles(ev) {
				msg := fmt.Sprintf("01070394:3: %s event in rule (%s) requires an associated SIP profile on the virtual server (%s).", ev, r.Name, o.Name)
				t.skipped = append(t.skipped, msg)
				t.refused = append(t.refused, msg)
				return false
			}
		}
	}
	return true
}
