package udp

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
)

// Hash persistence on a payload key (a hash profile's hash-offset,
// hash-length, patterns and hash-buffer-limit) on a UDP virtual: the key
// is looked for in the client's datagram that is being balanced, as the
// client sent it: the flow's first datagram, or every datagram with
// datagram-load-balancing, so that a RADIUS or SIP-like protocol carrying
// an account in each request keeps it on one member. A datagram without
// the key persists as the flow would without the profile (source-addr
// fallback, or none) [M]. A rule's persist command wins over both.

// hashProfile is the virtual's default persistence when it is a hash
// profile with a payload key (the only place one runs); nil otherwise.
func hashProfile(cfg *config.Virtual) *config.Persistence {
	if prof := cfg.Persist; prof != nil && prof.Method == config.PersistHash && prof.Payload != nil {
		return prof
	}
	return nil
}

// hashChoose readies the flow's persistence for datagram b, the client's
// bytes: the hash key when b holds one, else the flow's own decision.
func (f *flow) hashChoose(b []byte) {
	key, _ := f.hash.Payload.Key(b, false)
	if key == nil {
		f.persists, f.pers = f.basePersists, f.basePers
		return
	}
	f.persists = true
	f.pers = persistDecision{key: persist.StringKey(persist.Hash, string(key)), prof: f.hash, timeout: f.hash.Timeout}
	f.persisted = f.persistLookup
}
