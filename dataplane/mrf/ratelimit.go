package mrf

import (
	"sync"
	"time"
)

// RateLimits bound the requests of one connection a second: past Major
// a request is answered "too busy" by the virtual (the protocol's
// LostAnswer, busy), past Critical it is dropped (0: no bound).
type RateLimits struct {
	Major, Critical int
}

func (l RateLimits) set() bool { return l.Major > 0 || l.Critical > 0 }

// RateLimiter is a protocol whose session profile bounds the request
// rate of each client connection (Ingress: the requests a client sends)
// and of each peer connection (Egress: the requests leaving on it) (a
// Diameter session profile's ingress- and egress-major- and
// -critical-message-rate-limit). Answers and the messages the protocol
// handles by itself (capabilities exchanges, watchdogs) are never
// limited.
type RateLimiter interface {
	RateLimits() (ingress, egress RateLimits)
}

// rateWindow counts a connection's requests in the current second.
type rateWindow struct {
	mu  sync.Mutex
	sec int64
	n   int
}

// verdict counts one more request now: 0 it goes, 1 past the major
// limit, 2 past the critical one.
func (w *rateWindow) verdict(l RateLimits) int {
	now := time.Now().Unix()
	w.mu.Lock()
	if w.sec != now {
		w.sec, w.n = now, 0
	}
	w.n++
	n := w.n
	w.mu.Unlock()
	switch {
	case l.Critical > 0 && n > l.Critical:
		return 2
	case l.Major > 0 && n > l.Major:
		return 1
	}
	return 0
}

// limited applies the rate limit of one side (ingress, else egress)
// to request m counted in w: true when m goes no further, answered "too
// busy" (past the major limit) or dropped (past the critical one).
func (s *Session) limited(m *Message, w *rateWindow, ingress bool) bool {
	rl, ok := s.r.cfg.Proto.(RateLimiter)
	if !ok || !m.Request {
		return false
	}
	in, out := rl.RateLimits()
	l := out
	if ingress {
		l = in
	}
	if !l.set() {
		return false
	}
	switch w.verdict(l) {
	case 1:
		if la, ok := s.r.cfg.Proto.(LostAnswerer); ok {
			if ans := la.LostAnswer(m, true); ans != nil {
				m.Status = StatusDropped
				s.r.C.FailAnswered.Add(1)
				m.origin.deliver(&Message{Data: ans, Status: m.Status, Peer: m.Peer, origin: m.origin, Instance: -1, Answer: true, Store: m.Store})
				return true
			}
		}
		fallthrough
	case 2:
		m.Status = StatusDropped
		s.r.C.Dropped.Add(1)
		return true
	}
	return false
}
