package daemon

import (
	"fmt"

	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// A standard virtual server with an ssl persistence profile and no
// client-ssl profile passes TLS through, and reads each client's
// ClientHello before choosing a member, as BIG-IP does: its rules'
// CLIENTSSL_CLIENTHELLO runs over that hello, and its policies read the
// hello's server name at ssl-client-hello (SNI routing without
// decrypting; dataplane/internal/l4/sslpersist.go). With neither profile
// no hello is ever read, and such rules and policies are refused.

// passesTLS reports whether o reads the hellos of TLS it passes through:
// its default persistence is an ssl profile and it has no client-ssl
// profile.
func (t *translator) passesTLS(o *objects.Object) bool {
	if t.profile(o, profileClientSSL) != nil {
		return false
	}
	name := defaultPersistName(o)
	if name == "" {
		return false
	}
	p := t.cfg.Lookup(t.s, specPersistence, name)
	return p != nil && p.Kind == persistSSL
}

// helloNeeds refuses, as BIG-IP refuses an SSL event without its profile
// (01070394), a rule list whose CLIENTSSL_CLIENTHELLO could never run: on
// a virtual server with neither a client-ssl profile nor an ssl
// persistence profile. BIG-IP reports the first such rule; so does this.
func (t *translator) helloNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, profileClientSSL) != nil || t.passesTLS(o) {
		return true
	}
	for _, r := range list {
		if r.Handles(rules.ClientSSLClientHello) {
			msg := fmt.Sprintf("01070394:3: CLIENTSSL_CLIENTHELLO event in rule (%s) requires an associated CLIENTSSL profile, or an SSL persistence profile to read the hello of TLS passed through, on the virtual server (%s).", r.Name, o.Name)
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return false
		}
	}
	return true
}
