package daemon

import (
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The diameter profile as TCP virtuals apply it
// (dataplane/internal/l4/diameter.go).
var (
	profileDiameter       = schema.MustKind("ltm profile diameter")
	diamPrime             = profileDiameter.MustProp("connection-prime")
	diamDestRealm         = profileDiameter.MustProp("destination-realm")
	diamHostIPRewrite     = profileDiameter.MustProp("host-ip-rewrite")
	diamHostToClient      = profileDiameter.MustProp("origin-host-to-client")
	diamHostToServer      = profileDiameter.MustProp("origin-host-to-server")
	diamRealmToClient     = profileDiameter.MustProp("origin-realm-to-client")
	diamRealmToServer     = profileDiameter.MustProp("origin-realm-to-server")
	diamOverwriteDestHost = profileDiameter.MustProp("overwrite-destination-host")
	diamParentAVP         = profileDiameter.MustProp("parent-avp")
	diamPersistAVP        = profileDiameter.MustProp("persist-avp")
	diamRetransmitTimeout = profileDiameter.MustProp("retransmit-timeout")
	diamMaxRetransmit     = profileDiameter.MustProp("max-retransmit-attempts")
	diamResetOnTimeout    = profileDiameter.MustProp("reset-on-timeout")
	diamWatchdogTimeout   = profileDiameter.MustProp("watchdog-timeout")
	diamMaxWatchdogFail   = profileDiameter.MustProp("max-watchdog-failure")
	diamHandshakeTimeout  = profileDiameter.MustProp("handshake-timeout")
)

// diameter gives a TCP virtual its diameter profile. BIG-IP refuses the
// profile without a tcp profile and beside an http, ftp, sip, mqtt, fix,
// smtps, imap or pop3 profile, which would parse the same bytes;
// persist-avp and parent-avp must be AVP codes (or a base protocol AVP's
// name). Under client-ssl and server-ssl the message reader runs over
// the plaintext (Diameter over TLS, RFC 6733 13). Where it does not run
// (an SSL forward proxy, stream, mblb, rules that read the flow's bytes
// in CLIENT_DATA or SERVER_DATA) the virtual passes Diameter through as
// plain TCP, one member per connection, with a warning. It returns false
// when the virtual was left out.
func (t *translator) diameter(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileDiameter)
	if p == nil {
		return true
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileMQTT, profileFIX, profileSMTPS, profileIMAP, profilePOP3} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (diameter) cannot be used with %s profile %s on the virtual server (%s)", p.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (diameter) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	e := func(pr *objects.Prop) string { return pr.Effective(t.cfg, p) }
	str := func(pr *objects.Prop) string {
		if s := e(pr); s != "none" {
			return s
		}
		return ""
	}
	opt := &diameter.Options{Profile: p.Name, Max: diammsg.DefaultMax,
		OriginHostToClient:  str(diamHostToClient),
		OriginRealmToClient: str(diamRealmToClient),
		OriginHostToServer:  str(diamHostToServer),
		OriginRealmToServer: str(diamRealmToServer),
		DestinationRealm:    str(diamDestRealm),
		OverwriteDestHost:   e(diamOverwriteDestHost) == "enabled",
		HostIPRewrite:       e(diamHostIPRewrite) == "enabled",
		ConnectionPrime:     e(diamPrime) == "enabled",
		ResetOnTimeout:      e(diamResetOnTimeout) == "enabled",
	}
	var secs, wd, hs int
	for _, a := range []struct {
		prop *objects.Prop
		dst  *int
	}{{diamRetransmitTimeout, &secs}, {diamMaxRetransmit, &opt.MaxRetransmit}, {diamWatchdogTimeout, &wd}, {diamMaxWatchdogFail, &opt.MaxWatchdogFailure},
		{diamHandshakeTimeout, &hs}} {
		n, err := strconv.Atoi(e(a.prop))
		if err != nil || n < 0 {
			return t.refuse("profile %s (diameter): %s %s is not a count (0 or more)", p.Name, a.prop.Name, strconv.Quote(e(a.prop)))
		}
		*a.dst = n
	}
	opt.RetransmitTimeout = time.Duration(secs) * time.Second
	opt.WatchdogTimeout = time.Duration(wd) * time.Second
	opt.HandshakeTimeout = time.Duration(hs) * time.Second
	for _, a := range []struct {
		prop *objects.Prop
		dst  *uint32
	}{{diamPersistAVP, &opt.PersistAVP}, {diamParentAVP, &opt.ParentAVP}} {
		s := str(a.prop)
		if s == "" {
			continue
		}
		code, ok := rules.AVPCode(s)
		if !ok || code == 0 {
			return t.refuse("profile %s (diameter): %s %s is not an AVP code (a number, or a base protocol AVP such as Session-Id)", p.Name, a.prop.Name, strconv.Quote(s))
		}
		*a.dst = code
	}
	if opt.ParentAVP != 0 && opt.PersistAVP == 0 {
		return t.refuse("profile %s (diameter): parent-avp needs a persist-avp", p.Name)
	}
	without := func(why string) bool {
		t.keep(o, "profile %s: openltm's Diameter message balancing %s; the virtual passes Diameter through one member per connection", p.Name, why)
		return true
	}
	if why := gatewayBlocked(v); why != "" { // translate_ftp.go
		return without(why)
	}
	v.Diameter = opt
	return true
}

// diameterNeeds refuses a rule list whose DIAMETER_ events need a
// diameter profile the virtual server lacks (01070394 [M]).
func (t *translator) diameterNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, mrfDiamSession) != nil { // translate_mrf.go: Diameter message routing
		return true
	}
	return t.profileNeeds(o, list, profileDiameter, "DIAMETER", (*rules.Rule).DiameterNeeds) // translate_stream.go
}
