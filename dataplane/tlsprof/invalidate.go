package tlsprof

import (
	"crypto/tls"
	"slices"
	"sync"
	"time"
)

// SessionControl is one client-ssl connection's hold on its TLS session,
// for virtuals whose rules name SSL::session or SSL::sessionticket: the
// ticket its handshake issued or resumed with (SSL::sessionticket), and
// the session's name carried in its tickets, which Invalidate revokes so
// that no ticket of the session resumes again (SSL::session invalidate).
// Go's server resumes by ticket only, so revoking the session's name in
// the profile is what invalidating a session cache entry is on BIG-IP.
type SessionControl struct {
	mu       sync.Mutex
	b        *Built
	clock    *tls.Config
	name     [16]byte
	named    bool
	invalid  bool
	used     []byte // the ticket the client resumed with
	issued   []byte // the ticket the handshake issued
	resumeOK bool   // the offered ticket was accepted
	// secure: the hello offered secure renegotiation.
	secure bool
}

// ruleSessionTag marks the SessionState.Extra entry carrying the name a
// SessionControl revokes.
const ruleSessionTag = "openltm-rulesession:"

// ControlSessions is cfg, for one connection, with the tickets of the
// configuration the hello picks (bs are the virtual's client-ssl
// profiles, which keep the revoked names) named for sc: a ticket whose
// session was invalidated, or that carries no name (issued before the
// virtual's rules asked for it), gets a full handshake. It costs a
// configuration per handshake: use it only for virtuals whose rules name
// the commands.
func ControlSessions(cfg *tls.Config, bs []*Built, sc *SessionControl) *tls.Config {
	return &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		chosen, err := configFor(cfg, h)
		if err != nil {
			return nil, err
		}
		sc.mu.Lock()
		sc.secure = OffersSecureRenegotiation(h)
		sc.mu.Unlock()
		if len(bs) == 0 || chosen.SessionTicketsDisabled {
			return chosen, nil
		}
		sc.mu.Lock()
		sc.b, sc.clock = bs[Pick(bs, h.ServerName)], chosen
		sc.mu.Unlock()
		c := nameTickets(chosen, ruleSessionTag, &sc.name, &sc.named, func(id [16]byte, found bool) bool {
			return found && !sc.b.invalidated(id, now(chosen))
		})
		unwrap, wrap := c.UnwrapSession, c.WrapSession
		c.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			ss, err := unwrap(identity, cs)
			sc.used = append(sc.used[:0], identity...)
			sc.resumeOK = ss != nil && err == nil
			return ss, err
		}
		c.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
			sc.mu.Lock()
			defer sc.mu.Unlock()
			t, err := wrap(cs, ss)
			if err == nil {
				sc.issued = append(sc.issued[:0], t...)
				if sc.invalid && sc.named { // invalidated before its ticket was issued
					sc.b.invalidate(sc.name, now(sc.clock))
				}
			}
			return t, err
		}
		return c, nil
	}}
}

// Invalidate revokes the connection's session: none of its tickets,
// issued already or later in its handshake, resumes again.
func (sc *SessionControl) Invalidate() {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.invalid = true
	if sc.named && sc.b != nil {
		sc.b.invalidate(sc.name, now(sc.clock))
	}
}

// Ticket is the session ticket of the connection: the one its handshake
// issued, else the one it resumed with; nil when there was none
// (tickets disabled, a TLS 1.2 resumption issuing none, or the handshake
// not yet that far).
func (sc *SessionControl) Ticket() []byte {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.issued) > 0 {
		return append([]byte(nil), sc.issued...)
	}
	if sc.resumeOK {
		return append([]byte(nil), sc.used...)
	}
	return nil
}

// SecureRenegotiation reports whether the connection's hello offered
// secure renegotiation (OffersSecureRenegotiation).
func (sc *SessionControl) SecureRenegotiation() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.secure
}

// OffersSecureRenegotiation reports whether a client's hello offered
// RFC 5746's secure renegotiation: the renegotiation_info extension or
// the TLS_EMPTY_RENEGOTIATION_INFO_SCSV suite. crypto/tls answers such a
// client with renegotiation_info in TLS 1.2 (and renegotiates with
// nobody), so it is what SSL::is_renegotiation_secure reports.
func OffersSecureRenegotiation(h *tls.ClientHelloInfo) bool {
	return slices.Contains(h.Extensions, extRenegotiationInfo) || slices.Contains(h.CipherSuites, scsvRenegotiation)
}

const (
	extRenegotiationInfo = 0xff01
	scsvRenegotiation    = 0x00ff
)

// ForgetMemberSession drops the session c (a finished server-ssl
// handshake made with cfg) would resume from cfg's session cache, under
// the key crypto/tls keeps it: the member's next connection makes a full
// handshake.
func ForgetMemberSession(c *tls.Conn, cfg *tls.Config) {
	if cfg == nil || cfg.ClientSessionCache == nil {
		return
	}
	key := cfg.ServerName
	if key == "" {
		key = c.RemoteAddr().String()
	}
	cfg.ClientSessionCache.Put(key, nil)
}

// invalidate revokes a session name for as long as its tickets could
// resume (session-ticket-timeout, else crypto/tls's week).
func (b *Built) invalidate(id [16]byte, at time.Time) {
	b.invalidMu.Lock()
	if b.invalid == nil {
		life := b.ticketLife
		if life <= 0 {
			life = 7 * 24 * time.Hour
		}
		b.invalid = &lineages{life: life, at: map[lineage]time.Time{}}
	}
	l := b.invalid
	b.invalidMu.Unlock()
	l.revoke(lineage(id), at)
}

// invalidated reports whether a rule invalidated the session named id.
func (b *Built) invalidated(id [16]byte, at time.Time) bool {
	b.invalidMu.Lock()
	l := b.invalid
	b.invalidMu.Unlock()
	return l != nil && l.revoked(lineage(id), at)
}

// Invalidated is how many sessions rules invalidated that the profile
// still refuses to resume, for tests and shows.
func (b *Built) Invalidated() int {
	b.invalidMu.Lock()
	l := b.invalid
	b.invalidMu.Unlock()
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.at)
}

// WithDynamicRecords is cfg, for one connection, with the configuration
// the hello picks sending records sized as choose says once the hello's
// rules ran: 1 dynamically sized (small records first), -1 full-size, 0
// as the profile says (allow-dynamic-record-sizing). crypto/tls reads it
// from the configuration at each write, so a connection's own setting
// is a copy of the profile's: made only for a connection that asked.
func WithDynamicRecords(cfg *tls.Config, choose func() int8) *tls.Config {
	return &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		chosen, err := configFor(cfg, h)
		if err != nil {
			return nil, err
		}
		v := choose()
		if v == 0 || chosen.DynamicRecordSizingDisabled == (v < 0) {
			return chosen, nil
		}
		c := chosen.Clone()
		c.DynamicRecordSizingDisabled = v < 0
		return c, nil
	}}
}
