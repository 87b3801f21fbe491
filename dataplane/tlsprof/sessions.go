package tlsprof

import (
	"crypto/tls"
	"encoding/binary"
	"sync"
	"time"
)

// ticketStamp tags the Extra entry a client-ssl profile's tickets carry:
// the time the ticket was issued, which Go's own ticket does not expose.
const ticketStamp = "openltm-issued:"

// now is cfg's clock, as crypto/tls reads it (Config.Time).
func now(cfg *tls.Config) time.Time {
	if cfg.Time != nil {
		return cfg.Time()
	}
	return time.Now()
}

// ticketLifetime makes cfg's session tickets resume for life after they
// were issued, and no longer: an older ticket is ignored and the client
// gets a full handshake (BIG-IP's session-ticket-timeout). The tickets
// are sealed with cfg's own keys, so that the configurations cloned from
// it (SNI, ALPN) share them.
func ticketLifetime(cfg *tls.Config, life time.Duration) {
	cfg.WrapSession = func(cs tls.ConnectionState, ss *tls.SessionState) ([]byte, error) {
		b := make([]byte, len(ticketStamp)+8)
		copy(b, ticketStamp)
		binary.BigEndian.PutUint64(b[len(ticketStamp):], uint64(now(cfg).UnixNano()))
		ss.Extra = append(ss.Extra, b)
		return cfg.EncryptTicket(cs, ss)
	}
	cfg.UnwrapSession = func(identity []byte, cs tls.ConnectionState) (*tls.SessionState, error) {
		ss, err := cfg.DecryptTicket(identity, cs)
		if err != nil || ss == nil {
			return nil, err
		}
		for _, e := range ss.Extra {
			if len(e) == len(ticketStamp)+8 && string(e[:len(ticketStamp)]) == ticketStamp {
				issued := time.Unix(0, int64(binary.BigEndian.Uint64(e[len(ticketStamp):])))
				if now(cfg).Sub(issued) <= life {
					return ss, nil
				}
			}
		}
		return nil, nil // expired, or not one of ours: a full handshake
	}
}

// expiringCache is a server-ssl profile's session cache with its
// cache-timeout: a member's session older than ttl is not offered again.
type expiringCache struct {
	cache tls.ClientSessionCache
	ttl   time.Duration
	size  int
	cfg   *tls.Config
	mu    sync.Mutex
	at    map[string]time.Time // when each key's session was stored
}

func (c *expiringCache) Get(key string) (*tls.ClientSessionState, bool) {
	c.mu.Lock()
	at, ok := c.at[key]
	c.mu.Unlock()
	if !ok || now(c.cfg).Sub(at) > c.ttl {
		return nil, false
	}
	return c.cache.Get(key)
}

func (c *expiringCache) Put(key string, cs *tls.ClientSessionState) {
	c.mu.Lock()
	if cs == nil {
		delete(c.at, key)
	} else {
		if len(c.at) >= 2*c.size { // the LRU forgot most of them
			clear(c.at)
		}
		c.at[key] = now(c.cfg)
	}
	c.mu.Unlock()
	c.cache.Put(key, cs)
}
