package daemon

import (
	"fmt"
	"strconv"
	"strings"
	"time"

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
	sipVia       = profileSIP.MustProp("insert-via-header")
	sipSecureVia = profileSIP.MustProp("secure-via-header")
	sipUserVia   = profileSIP.MustProp("user-via-header")
	sipRR        = profileSIP.MustProp("insert-record-route-header")
	sipBye       = profileSIP.MustProp("terminate-on-bye")
	sipDialog    = profileSIP.MustProp("dialog-aware")
	sipDialogTO  = profileSIP.MustProp("dialog-establishment-timeout")
	sipSessionTO = profileSIP.MustProp("sip-session-timeout")
	sipMaxRegs   = profileSIP.MustProp("max-registrations")
	sipMaxPerReg = profileSIP.MustProp("max-sessions-per-registration")
	sipRegTO     = profileSIP.MustProp("registration-timeout")
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
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, sp) }
	if v.IsUDP() {
		// Each datagram is a message, balanced by itself
		// (dataplane/internal/udp/sip.go), with the same proxy settings
		// as over TCP (sipproxy.go there).
		var opt mblb.SIPOptions
		if !t.sipProxy(o, sp, &opt) {
			return false
		}
		v.SIP = &dataplane.SIPDatagram{
			Via: opt.Via, SecureVia: opt.SecureVia, RecordRoute: opt.RecordRoute, UserVia: opt.UserVia,
			TerminateOnBye: opt.TerminateOnBye, DialogAware: opt.DialogAware,
			DialogTimeout: opt.DialogTimeout, SessionTimeout: opt.SessionTimeout, RegistrationTimeout: opt.RegistrationTimeout,
			MaxRegistrations: opt.MaxRegistrations, MaxSessionsPerRegistration: opt.MaxSessionsPerRegistration,
		}
		return true
	}
	if t.profile(o, profileTCP) == nil {
		return t.refuse("profile %s (sip) requires a tcp or udp profile on the virtual server (%s)", sp.Name, o.Name)
	}
	if !t.streamElsewhere(o) { // translate_stream.go
		return false
	}
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
	opt := mblb.SIPOptions{MaxHeaderSize: min(size, mblb.DefaultSIPMaxHeader), PerConnection: perConn}
	if !t.sipProxy(o, sp, &opt) {
		return false
	}
	m.Request = mblb.Framing{Mode: mblb.SIP, SIP: opt}
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
// (01070394), a rule list with a SIP_* event on a virtual
// server without a sip profile, where they could never run. BIG-IP
// reports the first such rule; so does this.
func (t *translator) sipNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, profileSIP, mrfSIPSession) != nil { // translate_mrf.go: SIP message routing
		return true
	}
	for _, r := range list {
		for _, ev := range []rules.Event{rules.SIPRequest, rules.SIPResponse, rules.SIPRequestSend, rules.SIPRequestDone, rules.SIPResponseSend, rules.SIPResponseDone} {
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

// sipProxy reads the profile's Via, Record-Route, BYE, dialog and
// registration settings (dataplane/mblb/sipproxy.go); the registration
// limits act with dialog-aware [M]. A user-via-header must be a
// Via's sent-protocol and sent-by ("SIP/2.0/TCP host[:port]"), as the
// proxy inserts it with a branch of its own; anything else leaves the
// virtual out with the reason [M: BIG-IP's check is not known].
func (t *translator) sipProxy(o *objects.Object, sp *objects.Object, opt *mblb.SIPOptions) bool {
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, sp) }
	opt.Via = e(sipVia) == "enabled"
	opt.SecureVia = e(sipSecureVia) == "enabled"
	opt.RecordRoute = e(sipRR) == "enabled"
	opt.TerminateOnBye = e(sipBye) == "enabled"
	opt.DialogAware = e(sipDialog) == "enabled"
	if u := strings.TrimSpace(e(sipUserVia)); u != "" && u != "none" {
		if err := checkUserVia(u); err != nil {
			return t.refuse("profile %s (sip): user-via-header %q %v (virtual server %s)", sp.Name, u, err, o.Name)
		}
		opt.UserVia = u
	}
	for _, x := range []struct {
		p *objects.Prop
		d *time.Duration
		n *int
	}{
		{p: sipDialogTO, d: &opt.DialogTimeout}, {p: sipSessionTO, d: &opt.SessionTimeout}, {p: sipRegTO, d: &opt.RegistrationTimeout},
		{p: sipMaxRegs, n: &opt.MaxRegistrations}, {p: sipMaxPerReg, n: &opt.MaxSessionsPerRegistration},
	} {
		n, err := strconv.Atoi(e(x.p))
		if err != nil || n < 0 {
			t.skip(o, "profile %s: %s %q is not a number", sp.Name, x.p.Name, e(x.p))
			return false
		}
		n = min(n, 1<<31)
		if x.d != nil {
			*x.d = time.Duration(n) * time.Second
		} else {
			*x.n = n
		}
	}
	return true
}

// checkUserVia accepts a Via's sent-protocol and sent-by: "SIP/2.0/" a
// transport token, then a host with an optional port, and no
// parameters (the proxy adds the branch).
func checkUserVia(u string) error {
	proto, by, ok := strings.Cut(u, " ")
	by = strings.TrimSpace(by)
	if !ok || !strings.HasPrefix(strings.ToUpper(proto), "SIP/2.0/") || len(proto) == len("SIP/2.0/") || strings.ContainsAny(proto, ";,") {
		return fmt.Errorf("is not a Via's protocol and address (SIP/2.0/TCP host[:port])")
	}
	if by == "" || strings.ContainsAny(by, " \t;,\r\n") {
		return fmt.Errorf("has %q where a host[:port] alone belongs (the proxy adds the branch)", by)
	}
	return nil
}
