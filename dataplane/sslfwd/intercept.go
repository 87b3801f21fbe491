package sslfwd

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// maxHello bounds the bytes read for a client's hello.
const maxHello = 16 << 10

// ErrNotTLS is ReadHello's error when the client's first bytes are not
// a TLS ClientHello (or one longer than 16 KiB).
var ErrNotTLS = errors.New("sslfwd: the client's first bytes are not a TLS ClientHello")

// ReadHello reads c, after first (bytes already read of it), until the
// ClientHello they start with is whole, by deadline; raw is every byte
// read, which goes on to the origin as it is when the connection is
// bypassed, or to the client's handshake when it is intercepted.
func ReadHello(c net.Conn, first []byte, deadline time.Time) (raw []byte, h *tls.ClientHelloInfo, err error) {
	raw = append([]byte(nil), first...)
	c.SetReadDeadline(deadline)
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, 4096)
	for {
		if len(raw) > 0 {
			hi, done := tlsprof.ParseClientHello(raw)
			if done {
				if hi == nil {
					return raw, nil, ErrNotTLS
				}
				return raw, hi, nil
			}
		}
		if len(raw) >= maxHello {
			return raw, nil, ErrNotTLS
		}
		n, err := c.Read(buf)
		raw = append(raw, buf[:n]...)
		if err != nil && n == 0 {
			return raw, nil, err
		}
	}
}

// ErrCertRequested ends an origin handshake in which the origin asked
// for a client certificate that the server-ssl profile has none of, under
// bypass-on-client-cert-fail (ServerSide), so that the flow bypasses it.
var ErrCertRequested = errors.New("sslfwd: the origin requests a client certificate")

// ServerSide is cfg, the server-ssl configuration of an origin's
// handshake, made to end that handshake with ErrCertRequested when the
// origin asks for a client certificate (a CertificateRequest, TLS 1.2 or
// 1.3) and cfg has none to give, under bypass-on-client-cert-fail; cfg
// itself otherwise (no copy: the flows call it per connection).
func (p *Proxy) ServerSide(cfg *tls.Config) *tls.Config {
	if !p.cfg.BypassOnCertRequest || len(cfg.Certificates) > 0 || cfg.GetClientCertificate != nil {
		return cfg
	}
	c := cfg.Clone()
	c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return nil, ErrCertRequested }
	return c
}

// ServerConfig is the server-ssl side's configuration for a hello's
// server name (tlsprof.Built.ForServerName).
type ServerConfig func(sni string) *tls.Config

// Intercept makes the origin connection TLS, sending sni, with the
// server-ssl configuration (which checks the origin's certificate as
// peer-cert-mode says), then answers the client, whose hello is raw,
// with the certificate forged for the origin's. Both handshakes end by
// deadline. On an error nothing is closed; bypass tells whether the
// origin's refusal is one the profiles bypass (Bypassable).
func (p *Proxy) Intercept(client net.Conn, raw []byte, sni string, origin net.Conn, server ServerConfig, deadline time.Time) (c, o *tls.Conn, bypass bool, err error) {
	origin.SetDeadline(deadline)
	o = tls.Client(origin, p.ServerSide(server(sni)))
	if err := o.Handshake(); err != nil {
		return nil, nil, p.Bypassable(err), err
	}
	origin.SetDeadline(time.Time{})
	cfg, err := p.ClientConfig(PeerLeaf(o), time.Now())
	if err != nil {
		return nil, nil, false, err
	}
	client.SetDeadline(deadline)
	c = tls.Server(&prefixConn{Conn: client, head: raw}, cfg)
	if err := c.Handshake(); err != nil {
		return nil, nil, false, err
	}
	client.SetDeadline(time.Time{})
	return c, o, false, nil
}

// IsAlert reports whether a handshake error is the peer's alert.
func IsAlert(err error) bool {
	var a tls.AlertError
	if errors.As(err, &a) {
		return true
	}
	// crypto/tls reports a received alert as a *net.OpError around
	// tls.alert, which is not exported: it prints as "remote error".
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "remote error"
}

// PeerLeaf is the certificate an origin's handshake showed, nil when
// none (ClientConfig then refuses), so that the flows need not index a
// chain that might be empty.
func PeerLeaf(o *tls.Conn) *x509.Certificate {
	cs := o.ConnectionState()
	if len(cs.PeerCertificates) == 0 {
		return nil
	}
	return cs.PeerCertificates[0]
}

// prefixConn reads head before the connection's own bytes.
type prefixConn struct {
	net.Conn
	head []byte
}

func (c *prefixConn) Read(b []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(b, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.Conn.Read(b)
}
