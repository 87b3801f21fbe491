package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

var profileMQTT = schema.MustKind("ltm profile mqtt")

// mqtt gives a TCP virtual its mqtt profile. BIG-IP refuses the profile
// without a tcp profile and beside an http, ftp, sip, smtps, imap or pop3
// profile, which would parse the same bytes [M: the messages are
// openltm's]. Under client-ssl and server-ssl the packet reader runs over
// the plaintext. Where it does not run (an SSL forward proxy, stream,
// mblb, rules that read the flow's bytes in CLIENT_DATA or SERVER_DATA)
// the virtual passes MQTT through as plain TCP, with a warning. It
// returns false when the virtual was left out.
func (t *translator) mqtt(o *objects.Object, v *dataplane.Virtual) bool {
	p := t.profile(o, profileMQTT)
	if p == nil {
		return true
	}
	for _, k := range []*objects.Kind{profileHTTP, profileFTP, profileSIP, profileSMTPS, profileIMAP, profilePOP3} {
		if other := t.profile(o, k); other != nil {
			return t.refuse("profile %s (mqtt) cannot be used with %s profile %s on the virtual server (%s)", p.Name, k.Words[len(k.Words)-1], other.Name, o.Name)
		}
	}
	if t.profile(o, profileTCP) == nil || v.IsUDP() {
		return t.refuse("profile %s (mqtt) requires a tcp profile on the virtual server (%s)", p.Name, o.Name)
	}
	without := func(why string) bool {
		t.keep(o, "profile %s: openltm's MQTT parser %s; the virtual passes MQTT through without it", p.Name, why)
		return true
	}
	if why := gatewayBlocked(v); why != "" { // translate_ftp.go
		return without(why)
	}
	v.MQTT = &mqtt.Options{Profile: p.Name, Max: mqtt.DefaultMax}
	return true
}

// mqttNeeds refuses a rule list whose MQTT_ events need an mqtt profile
// the virtual server lacks (01070394 [M]); an mqtt message-routing
// session profile runs them too (dataplane/internal/l4/mrf.go).
func (t *translator) mqttNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, mrfMQTTSession) != nil {
		return true
	}
	return t.profileNeeds(o, list, profileMQTT, "MQTT", (*rules.Rule).MQTTNeeds) // translate_stream.go
}
