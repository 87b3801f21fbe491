package tlsprof

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"io"
	"net"
	"sync"
)

// KeyLog keeps one connection's key material as crypto/tls hands it to
// Config.KeyLogWriter, the only place Go exposes it: the TLS 1.2 master
// secret and the TLS 1.3 handshake and traffic secrets, in NSS key-log
// lines. The iRules' SSL::sessionsecret and SSL::tls13_secret read it, so
// that a rule can log the lines a capture is decrypted with. Nothing else
// of the line is kept, and nothing is formatted until a rule asks.
type KeyLog struct {
	mu      sync.Mutex
	random  []byte
	secrets [numSecrets][]byte
}

// Secret names a secret a KeyLog keeps.
type Secret int

// The secrets, by the NSS key-log label crypto/tls writes them under.
const (
	MasterSecret          Secret = iota // CLIENT_RANDOM (TLS 1.2 and earlier)
	ClientHandshakeSecret               // CLIENT_HANDSHAKE_TRAFFIC_SECRET
	ServerHandshakeSecret               // SERVER_HANDSHAKE_TRAFFIC_SECRET
	ClientTrafficSecret                 // CLIENT_TRAFFIC_SECRET_0
	ServerTrafficSecret                 // SERVER_TRAFFIC_SECRET_0
	numSecrets
)

var keyLogLabels = [numSecrets]string{
	MasterSecret:          "CLIENT_RANDOM",
	ClientHandshakeSecret: "CLIENT_HANDSHAKE_TRAFFIC_SECRET",
	ServerHandshakeSecret: "SERVER_HANDSHAKE_TRAFFIC_SECRET",
	ClientTrafficSecret:   "CLIENT_TRAFFIC_SECRET_0",
	ServerTrafficSecret:   "SERVER_TRAFFIC_SECRET_0",
}

// Label is the NSS key-log label of s.
func (s Secret) Label() string {
	if s < 0 || s >= numSecrets {
		return ""
	}
	return keyLogLabels[s]
}

// Write takes the key-log lines crypto/tls writes ("LABEL <client random>
// <secret>", in hex); labels not kept (ECH's, early data's) are ignored.
// It never fails, so that the handshake never does for its sake.
func (k *KeyLog) Write(p []byte) (int, error) {
	for line := range bytes.Lines(p) {
		f := bytes.Fields(line)
		if len(f) != 3 {
			continue
		}
		for s, l := range keyLogLabels {
			if string(f[0]) != l {
				continue
			}
			random, err1 := hex.DecodeString(string(f[1]))
			secret, err2 := hex.DecodeString(string(f[2]))
			if err1 != nil || err2 != nil {
				break
			}
			k.mu.Lock()
			k.random, k.secrets[s] = random, secret
			k.mu.Unlock()
			break
		}
	}
	return len(p), nil
}

// Secret is the secret s of the connection, nil when its handshake did
// not produce it (a TLS 1.3 secret on a TLS 1.2 connection, or the
// reverse) or has not yet.
func (k *KeyLog) Secret(s Secret) []byte {
	if k == nil || s < 0 || s >= numSecrets {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.secrets[s]
}

// ClientRandom is the client random the key-log lines named, nil before
// the first.
func (k *KeyLog) ClientRandom() []byte {
	if k == nil {
		return nil
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.random
}

// WithKeyLog returns base writing its connections' key material to w, and
// every configuration base's GetConfigForClient chooses (SNI among several
// client-ssl profiles) too, since crypto/tls logs through the chosen one.
// It is made per connection, and only for connections whose rules read the
// secrets: base and the profiles' configurations, shared by every
// connection, are not changed.
func WithKeyLog(base *tls.Config, w io.Writer) *tls.Config {
	c := base.Clone()
	c.KeyLogWriter = w
	if pick := base.GetConfigForClient; pick != nil {
		c.GetConfigForClient = func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			chosen, err := pick(h)
			if chosen == nil || err != nil {
				return chosen, err
			}
			x := chosen.Clone()
			x.KeyLogWriter = w
			return x, nil
		}
	}
	return c
}

// helloConnOf is the HelloConn under c, a TLS connection's socket (or
// a session's moved on by tlsloop), or nil.
func helloConnOf(nc net.Conn) *HelloConn {
	// A session moved on (tlsloop), a watched socket (WatchConn): the
	// HelloConn is at most two wrappers down.
	for range 3 {
		if h, ok := nc.(*HelloConn); ok {
			return h
		}
		u, ok := nc.(interface{ Unwrap() net.Conn })
		if !ok {
			return nil
		}
		nc = u.Unwrap()
	}
	return nil
}

// Keys is the key log of c's handshake when its HelloConn keeps one
// (HelloConn.KeepKeys), else nil.
func Keys(c *tls.Conn) *KeyLog {
	if h := helloConnOf(c.NetConn()); h != nil {
		return h.keys
	}
	return nil
}

// ClientRandom is the client random of c's handshake, read from the
// ClientHello as it crossed c's HelloConn, nil when c runs over none.
func ClientRandom(c *tls.Conn) []byte {
	if h := helloConnOf(c.NetConn()); h != nil {
		return h.ClientRandom()
	}
	return nil
}

// HelloRandom is the client random of the hello h, read as ClientRandom
// reads it (h.Conn being the HelloConn the server reads through); nil
// when it runs over none.
func HelloRandom(h *tls.ClientHelloInfo) []byte {
	if h == nil || h.Conn == nil {
		return nil
	}
	if hc := helloConnOf(h.Conn); hc != nil {
		return hc.ClientRandom()
	}
	return nil
}
