package daemon

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The iiop profile as IIOP virtuals apply it (dataplane/mblb,
// iiopsession.go).
var (
	profileIIOP      = schema.MustKind("ltm profile iiop")
	iiopAbort        = profileIIOP.MustProp("abort-on-timeout")
	iiopPersistKey   = profileIIOP.MustProp("persist-object-key")
	iiopPersistReqID = profileIIOP.MustProp("persist-request-id")
	iiopTimeout      = profileIIOP.MustProp("timeout")
)

// iiop makes a TCP virtual with an iiop profile an IIOP one: each GIOP
// Request and LocateRequest is balanced by itself, and each reply goes
// back to its client by request id. BIG-IP needs a tcp profile for it
// and refuses it beside a profile that reads the same bytes as another
// protocol (http, fasthttp, ftp, sip, mqtt, fix, diameter, rtsp) [M: the
// messages are openltm's]. An mblb profile beside it gives its
// max-message-size and max-in-flight (its framing must stay rule, the
// default: GIOP frames itself); without one the engine's defaults apply
// [M]. One-connect beside iiop shares member connections among the
// virtual's clients (its settings as for any mblb virtual; each request
// under an id of its own on the connection, dataplane/mblb iiopshare.go);
// an mblb min-conn beside them opens that many shared connections to
// each member ahead of need, as for any mblb virtual with one-connect
// (dataplane/mblb mincon.go); without one-connect it is kept with a
// warning and not passed on (an IIOP client dials its own member
// connections as it needs them, taking none opened ahead). Rules
// handling CLIENT_DATA or
// SERVER_DATA are kept with a warning: those events do not run on GIOP
// messages. It returns false when the virtual was left out.
func (t *translator) iiop(o *objects.Object, v *dataplane.Virtual, ip *objects.Object) bool {
	for _, k := range []*objects.Kind{profileHTTP, profileFastHTTP, profileFTP, profileSIP, profileMQTT, profileFIX, profileDiameter, profileRTSP} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (iiop) cannot be used with %s profile %s on the virtual server (%s)", ip.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if v.IsUDP() || t.profile(o, profileTCP) == nil {
		return t.refuse("profile %s (iiop) requires a tcp profile on the virtual server (%s); IIOP runs over TCP", ip.Name, o.Name)
	}
	if !t.streamElsewhere(o) { // translate_stream.go
		return false
	}
	e := func(p *objects.Prop) string { return p.Effective(t.cfg, ip) }
	secs, err := strconv.ParseUint(e(iiopTimeout), 10, 32)
	if err != nil {
		return t.refuse("profile %s (iiop): timeout %q is not a number of seconds from 0 to 4294967295 (virtual server %s)", ip.Name, e(iiopTimeout), o.Name)
	}
	opt := mblb.IIOPOptions{
		PersistObjectKey: e(iiopPersistKey) == "enabled",
		PersistRequestID: e(iiopPersistReqID) == "enabled",
		Timeout:          time.Duration(secs) * time.Second,
		AbortOnTimeout:   e(iiopAbort) == "enabled",
	}
	m := &dataplane.MBLB{Profile: ip.Name}
	mp := t.profile(o, profileMBLB)
	if mp != nil {
		s, err := mblbSettings(func(p *objects.Prop) string { return p.Effective(t.cfg, mp) })
		if err != nil {
			t.skip(o, "profile %s: %v", mp.Name, err)
			return false
		}
		if f := mblbFraming.Effective(t.cfg, mp); f != "" && f != "rule" {
			return t.refuse("profile %s: framing %s cannot be used beside iiop profile %s, which frames GIOP messages (leave framing rule, the default)", mp.Name, f, ip.Name)
		}
		m = s
		m.Profile = ip.Name
	}
	m.Request = mblb.Framing{Mode: mblb.IIOP, IIOP: opt}
	m.Response = mblb.Framing{}
	oc, ok := t.mblbOneConnect(o)
	if !ok {
		return false
	}
	if m.OneConnect = oc; oc == nil && mp != nil && m.MinConn > 0 {
		t.keep(o, "profile %s: min-conn %d is kept, and not acted on beside iiop profile %s without a one-connect profile (an IIOP client's own member connections are dialled as it needs them; add one-connect to open shared ones ahead)", mp.Name, m.MinConn, ip.Name)
		m.MinConn = 0
	}
	v.MBLB = m
	return true
}

// iiopRules warns of rules that handle CLIENT_DATA or SERVER_DATA on a
// virtual with an iiop profile: those events do not run there (the
// profile frames and balances each GIOP message itself); the virtual is
// still made.
func (t *translator) iiopRules(o *objects.Object, list []*rules.Rule) {
	ip := t.profile(o, profileIIOP)
	if ip == nil {
		return
	}
	for _, r := range list {
		if r.Handles(rules.ClientData) || r.Handles(rules.ServerData) {
			t.keep(o, "profile %s: rule %s: CLIENT_DATA and SERVER_DATA events do not run on an IIOP virtual, whose GIOP messages the profile frames and balances itself", ip.Name, r.Name)
		}
	}
}
