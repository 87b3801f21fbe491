package mrfdiam

import (
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// DynamicRoutes are the profile's dynamic-route settings, for the
// router (mrf.DynamicRouter).
func (s *Session) DynamicRoutes() (insert, lookup bool, ttl time.Duration) {
	return s.DynInsert, s.DynLookup, s.DynTTL
}

// Identity is the Origin-Host and Origin-Realm of a client's CER (lower
// case: a DiameterIdentity is a domain name), the names its connection's
// dynamic route answers to.
func (s *Session) Identity(data []byte) (host, realm string, ok bool) {
	m, err := diammsg.Parse(data)
	if err != nil || !m.Request() || m.Code() != diammsg.CmdCapabilitiesExchange {
		return "", "", false
	}
	return strings.ToLower(string(m.Get(diammsg.AVPOriginHost))), strings.ToLower(string(m.Get(diammsg.AVPOriginRealm))), true
}

// Dest is a request's Destination-Host and Destination-Realm.
func (s *Session) Dest(data []byte) (host, realm []byte) {
	m, err := diammsg.Parse(data)
	if err != nil || !m.Request() {
		return nil, nil
	}
	return m.Get(diammsg.AVPDestinationHost), m.Get(diammsg.AVPDestinationRealm)
}
