package http3

import (
	"crypto/sha256"
	"crypto/tls"
	"net/http"
	"sync"
	"time"
)

// 0-RTT (the client-ssl profile's data-0rtt): which early requests go on
// before the handshake completes, and the single-use tickets of
// enabled-with-anti-replay. See Early.

// earlyRequest reports whether r, on a connection that sent 0-RTT, goes
// on before the handshake completed: it has not completed yet and r is
// safe to repeat (GET, HEAD). Any other request waits here for the
// handshake (counted as held when it came before it), which a replayed
// flight never completes; false too when the connection ended first
// (r's context is done then).
func (cl *client) earlyRequest(r *http.Request) bool {
	select {
	case <-cl.hs:
		return false // done: the request is the client's own
	default:
	}
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	if st := cl.cfg.Stats; st != nil {
		st.EarlyHeld.Add(1)
	}
	select {
	case <-cl.hs:
	case <-r.Context().Done():
	}
	return false
}

// ticketLog remembers the session tickets whose early data was taken,
// for as long as they could be offered again, so that each is taken
// once (RFC 8446 section 8.1).
type ticketLog struct {
	mu    sync.Mutex
	seen  map[[16]byte]struct{}
	order []ticketSeen // in the order seen, for the expiry
}

type ticketSeen struct {
	id [16]byte
	at time.Time
}

// ticketLogLife is how long a ticket's use is remembered: crypto/tls
// resumes no ticket older than 7 days (its maxSessionTicketLifetime), so
// a ticket cannot come back after that.
const ticketLogLife = 7 * 24 * time.Hour

// ticketLogMax bounds the log: when it is full, no new ticket is taken
// for 0-RTT (its connection resumes in one round trip) until older
// entries expire [M: refusing early data is the side that stays safe].
const ticketLogMax = 1 << 17

// first records identity's use at now and reports whether it is the
// first (false: seen already, or the log is full).
func (t *ticketLog) first(identity []byte, now time.Time) bool {
	id := [16]byte{}
	sum := sha256.Sum256(identity)
	copy(id[:], sum[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seen == nil {
		t.seen = map[[16]byte]struct{}{}
	}
	n := 0
	for n < len(t.order) && now.Sub(t.order[n].at) > ticketLogLife {
		delete(t.seen, t.order[n].id)
		n++
	}
	if n > 0 {
		t.order = append(t.order[:0], t.order[n:]...)
	}
	if _, ok := t.seen[id]; ok || len(t.seen) >= ticketLogMax {
		return false
	}
	t.seen[id] = struct{}{}
	t.order = append(t.order, ticketSeen{id, now})
	return true
}

// singleUse is a copy of q (a client-ssl configuration for QUIC) with
// each ticket's early data taken once: a ticket offered again resumes
// without 0-RTT, counted as replayed; so is the configuration q's
// server name choice (SNI) picks. The ticket is read as the profile
// reads it (its own UnwrapSession: session-ticket-timeout, invalidated
// sessions) or, when it has none, with the listener's keys, which sealed
// it.
func (l *Listener) singleUse(q *tls.Config) *tls.Config {
	unwrap := q.UnwrapSession
	if unwrap == nil {
		unwrap = l.outer.DecryptTicket
	}
	q = q.Clone()
	if pick := q.GetConfigForClient; pick != nil {
		q.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			chosen, err := pick(h)
			if chosen == nil || err != nil || chosen.SessionTicketsDisabled {
				return chosen, err
			}
			return l.singleUse(chosen), nil
		}
	}
	q.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := unwrap(identity, cs)
		if err != nil || ss == nil || !ss.EarlyData {
			return ss, err
		}
		if !l.seen.first(identity, time.Now()) {
			ss.EarlyData = false
			if st := l.cfg.Load().QUICStats; st != nil {
				st.Replayed.Add(1)
			}
		}
		return ss, nil
	}
	return q
}
