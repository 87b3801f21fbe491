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
		chosen, err := configFor(cfg, h)
		if err != nil {
			return nil, err
		}
		if chosen.SessionTicketsDisabled {
			return chosen, nil
		}
		return nameTickets(chosen, sessionTagTag, &tag.id, &tag.set, func([16]byte, bool) bool { return true }), nil
	}}
}

// nameTickets is chosen (cloned) with a session name carried in its
// tickets under tag, in the SessionState's Extra: a resumed ticket's name
// is read into id (set), and accept, told the name found (and whether
// there was one), may refuse the ticket (a full handshake instead); a
// ticket issued carries id, a new random one at a full handshake, in
// place of the name the session's earlier ticket carried. Both the
// strict-resume lineage (ends.go) and ssl persistence's SessionTag name
// sessions this way.
func nameTickets(chosen *tls.Config, tag string, id *[16]byte, set *bool, accept func(name [16]byte, found bool) bool) *tls.Config {
	c := chosen.Clone()
	unwrap, wrap := chosen.UnwrapSession, chosen.WrapSession
	if unwrap == nil {
		unwrap = chosen.DecryptTicket
	}
	if wrap == nil {
		wrap = chosen.EncryptTicket
	}
	isTag := func(e []byte) bool { return len(e) == len(tag)+len(id) && string(e[:len(tag)]) == tag }
	c.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := unwrap(identity, cs)
		if err != nil || ss == nil {
			return ss, err
		}
		var name [16]byte
		found := false
		for _, e := range ss.Extra {
			if isTag(e) {
				copy(name[:], e[len(tag):])
				found = true
			}
		}
		if !accept(name, found) {
			return nil, nil
		}
		if found {
			*id, *set = name, true
		}
		return ss, nil
	}
	c.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		if !*set {
			if _, err := rand.Read(id[:]); err != nil {
				return nil, err
			}
			*set = true
		}
		e := make([]byte, len(tag)+len(id))
		copy(e, tag)
		copy(e[len(tag):], id[:])
		extra := ss.Extra[:0:0]
		for _, x := range ss.Extra {
			if !isTag(x) {
				extra = append(extra, x)
			}
		}
		ss.Extra = append(extra, e)
		return wrap(cs, ss)
	}
	return c
}
