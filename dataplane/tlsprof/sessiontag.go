package tlsprof

import (
	"crypto/rand"
	"crypto/tls"
)

// SessionTag names one client-ssl session across its resumptions: a new
// random name at a full handshake that issues a ticket, the resumed
// ticket's name otherwise. Go's server resumes by ticket only (it keeps
// no session ID cache, and TLS 1.3 has none), so ssl persistence on a
// virtual that terminates TLS keys on this name where BIG-IP keys on the
// session ID it issued: a client resuming its session comes back to the
// member it had.
type SessionTag struct {
	id  [16]byte
	set bool
}

// ID is the session's name once the handshake is done, nil when the
// session has none (tickets disabled, or none issued).
func (s *SessionTag) ID() []byte {
	if !s.set {
		return nil
	}
	return s.id[:]
}

// sessionTagTag marks the SessionState.Extra entry carrying a SessionTag.
const sessionTagTag = "openltm-session:"

// TagSessions is cfg, for one connection, with the tickets of the
// configuration the hello picks carrying tag's name and a resumed
// ticket's name read into tag. It costs a configuration per handshake:
// use it only where the name is wanted.
func TagSessions(cfg *tls.Config, tag *SessionTag) *tls.Config {
	return &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		chosen := cfg
		if cfg.GetConfigForClient != nil {
			c, err := cfg.GetConfigForClient(h)
			if err != nil {
				return nil, err
			}
			if c != nil {
				chosen = c
			}
		}
		if chosen.SessionTicketsDisabled {
			return chosen, nil
		}
		c := chosen.Clone()
		unwrap, wrap := chosen.UnwrapSession, chosen.WrapSession
		if unwrap == nil {
			unwrap = chosen.DecryptTicket
		}
		if wrap == nil {
			wrap = chosen.EncryptTicket
		}
		c.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
			ss, err := unwrap(identity, cs)
			if err != nil || ss == nil {
				return ss, err
			}
			for _, e := range ss.Extra {
				if len(e) == len(sessionTagTag)+len(tag.id) && string(e[:len(sessionTagTag)]) == sessionTagTag {
					copy(tag.id[:], e[len(sessionTagTag):])
					tag.set = true
				}
			}
			return ss, nil
		}
		c.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
			if !tag.set {
				if _, err := rand.Read(tag.id[:]); err != nil {
					return nil, err
				}
				tag.set = true
			}
			e := make([]byte, len(sessionTagTag)+len(tag.id))
			copy(e, sessionTagTag)
			copy(e[len(sessionTagTag):], tag.id[:])
			extra := ss.Extra[:0:0]
			for _, x := range ss.Extra { // a resumed session's own tag is replaced
				if len(x) < len(sessionTagTag) || string(x[:len(sessionTagTag)]) != sessionTagTag {
					extra = append(extra, x)
				}
			}
			ss.Extra = append(extra, e)
			return wrap(cs, ss)
		}
		return c, nil
	}}
}
