package rtsp

import (
	"net/netip"
	"sync"
	"time"
)

// An RTSP session outlives the control connection that set it up: a
// client may SETUP on one connection and PLAY or TEARDOWN on others
// (RFC 2326 1.1). The gateway keeps, per virtual server, which member
// each session is on, so that later connections naming it go there, and
// its data channels, which TEARDOWN closes.

// Session is one member session the gateway saw set up.
type Session struct {
	Member   netip.AddrPort
	channels []*Channel
	seen     time.Time
}

// Table is a virtual server's sessions, by Session identifier.
type Table struct {
	mu   sync.Mutex
	m    map[string]*Session
	idle time.Duration
}

var tables sync.Map // the virtual's listening address → *Table

// TableFor is the session table of the virtual listening at key; idle
// is how long a session without data channels is kept.
func TableFor(key string, idle time.Duration) *Table {
	if t, ok := tables.Load(key); ok {
		return t.(*Table)
	}
	if idle <= 0 {
		idle = DefaultIdle
	}
	t, _ := tables.LoadOrStore(key, &Table{m: map[string]*Session{}, idle: idle})
	return t.(*Table)
}

// Member is the member session id is on.
func (t *Table) Member(id string) (netip.AddrPort, bool) {
	if id == "" {
		return netip.AddrPort{}, false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s, ok := t.m[id]
	if !ok {
		return netip.AddrPort{}, false
	}
	s.seen = time.Now()
	return s.Member, true
}

// Add records session id on member, with ch (nil: none, an interleaved
// transport) among its data channels. Sessions idle for the table's
// idle time with no channel left are forgotten meanwhile.
func (t *Table) Add(id string, member netip.AddrPort, ch *Channel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	for k, s := range t.m {
		if len(s.channels) == 0 && now.Sub(s.seen) > t.idle {
			delete(t.m, k)
		}
	}
	s := t.m[id]
	if s == nil {
		s = &Session{Member: member}
		t.m[id] = s
	}
	s.seen = now
	if ch != nil {
		s.channels = append(s.channels, ch)
		ch.peerMu.Lock()
		ch.onDone = func() { t.drop(id, ch) }
		ch.peerMu.Unlock()
	}
}

// drop forgets a channel that closed on its own (idle).
func (t *Table) drop(id string, ch *Channel) {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := t.m[id]
	if s == nil {
		return
	}
	for i, c := range s.channels {
		if c == ch {
			s.channels = append(s.channels[:i], s.channels[i+1:]...)
			break
		}
	}
}

// Teardown ends session id: its data channels close and it is
// forgotten. It returns how many channels were closed.
func (t *Table) Teardown(id string) int {
	t.mu.Lock()
	s := t.m[id]
	delete(t.m, id)
	t.mu.Unlock()
	if s == nil {
		return 0
	}
	chs := s.channels
	for _, ch := range chs {
		ch.Close()
	}
	return len(chs)
}

// Channels is how many data channels are open, for show and tests.
func (t *Table) Channels() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, s := range t.m {
		n += len(s.channels)
	}
	return n
}
