package mblbvs

import (
	"context"
	"crypto/tls"
	"net"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// TLS on a message-balanced (HTTP) virtual is a front stage around the
// engine: the client's socket is wrapped in a TLS server connection before
// the engine's session takes it, and each server connection in a TLS
// client connection as it is dialled. The engine then reads and writes
// plaintext through net.Conn as it does on its goroutine path, so every
// part of the http profile (framing, OneConnect, rules, persistence) runs
// unchanged; TLS virtuals never go to the event loops (the acceptor hands
// them to goroutines).

// clientTLS is the client's side of a client-ssl virtual, not yet
// handshaken (handshake does it, after CLIENT_ACCEPTED as on BIG-IP).
func clientTLS(c *net.TCPConn, t *config.TLS) net.Conn {
	if t == nil || t.Client == nil {
		return c
	}
	return tls.Server(c, t.Client)
}

// handshake completes the client's TLS handshake within the profile's
// handshake-timeout; false means the client is gone (and was reset).
func handshake(raw *net.TCPConn, conn net.Conn, t *config.TLS) bool {
	tc, ok := conn.(*tls.Conn)
	if !ok {
		return true
	}
	raw.SetDeadline(time.Now().Add(t.Handshake()))
	if err := tc.Handshake(); err != nil {
		raw.SetLinger(0)
		raw.Close()
		return false
	}
	raw.SetDeadline(time.Time{})
	return true
}

// serverTLS wraps a new server connection of a server-ssl virtual and
// handshakes within ctx and the profile's handshake-timeout.
func serverTLS(ctx context.Context, c *net.TCPConn, t *config.TLS) (net.Conn, error) {
	if t == nil || t.Server == nil {
		return c, nil
	}
	ctx, cancel := context.WithTimeout(ctx, t.Handshake())
	defer cancel()
	sc := tls.Client(c, t.Server.Config)
	if err := sc.HandshakeContext(ctx); err != nil {
		c.SetLinger(0)
		c.Close()
		return nil, err
	}
	return sc, nil
}
