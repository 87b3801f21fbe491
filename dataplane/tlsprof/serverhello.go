package tlsprof

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"time"
)

// ServerHello is what the rules of CLIENTSSL_SERVERHELLO_SEND and
// SERVERSSL_SERVERHELLO read of a ServerHello as it crosses the socket:
// crypto/tls chooses the version and the suite inside its handshake and
// keeps neither where a caller could read them before it is done.
type ServerHello struct {
	// Version is the version agreed: supported_versions' when the hello
	// carries it (TLS 1.3), else the hello's own.
	Version uint16
	Suite   uint16
	// SessionID is the hello's session ID (nil: none).
	SessionID []byte
	// Extensions is the hello's extensions block as sent: type, length
	// and data of each (SSL::extensions).
	Extensions []byte
}

// Extension is the whole extension of type t (type, length, data) in
// the hello, nil when it carries none.
func (h *ServerHello) Extension(t uint16) []byte {
	return findExtension(h.Extensions, t)
}

// SecureRenegotiation reports whether the hello agreed to RFC 5746's
// secure renegotiation (TLS 1.2 and older: renegotiation_info); a TLS
// 1.3 hello does not renegotiate at all and reports true.
func (h *ServerHello) SecureRenegotiation() bool {
	return h.Version >= tls.VersionTLS13 || h.Extension(extRenegotiationInfo) != nil
}

func findExtension(exts []byte, t uint16) []byte {
	for len(exts) >= 4 {
		l := 4 + int(binary.BigEndian.Uint16(exts[2:]))
		if l > len(exts) {
			return nil
		}
		if binary.BigEndian.Uint16(exts) == t {
			return exts[:l:l]
		}
		exts = exts[l:]
	}
	return nil
}

// helloRetryRandom is the random of a HelloRetryRequest (RFC 8446
// 4.1.3), a ServerHello that asks the client for another hello: the
// events wait for the hello that follows.
var helloRetryRandom = []byte{
	0xcf, 0x21, 0xad, 0x74, 0xe5, 0x9a, 0x61, 0x11, 0xbe, 0x1d, 0x8c, 0x02, 0x1e, 0x65, 0xb8, 0x91,
	0xc2, 0xa2, 0x11, 0x16, 0x7a, 0xbb, 0x8c, 0x5e, 0x07, 0x9e, 0x09, 0xe2, 0xc8, 0xa8, 0x33, 0x9c,
}

// maxHelloScan bounds the bytes kept while a ServerHello is awaited.
const maxHelloScan = 64 << 10

// serverHelloScan finds the first ServerHello that is not a
// HelloRetryRequest in the bytes of one direction: done once found or
// once the bytes cannot hold one.
type serverHelloScan struct {
	buf  []byte
	done bool
}

// feed adds b and returns the hello once it is whole (nil otherwise).
func (s *serverHelloScan) feed(b []byte) *ServerHello {
	s.buf = append(s.buf, b...)
	var hs []byte  // the handshake messages of the records in so far
	other := false // a record of another kind: no hello after it
records:
	for p := 0; p+recordHeader <= len(s.buf); {
		typ, l := s.buf[p], int(binary.BigEndian.Uint16(s.buf[p+3:]))
		if typ < 20 || typ > 23 || s.buf[p+1] != 3 { // no TLS record
			s.stop()
			return nil
		}
		if p+recordHeader+l > len(s.buf) {
			break
		}
		switch typ {
		case recordHandshake:
			hs = append(hs, s.buf[p+recordHeader:p+recordHeader+l]...)
		case 20: // change_cipher_spec (TLS 1.3's, after a hello)
		default: // encrypted records (TLS 1.3) or an alert
			other = true
			break records
		}
		p += recordHeader + l
	}
	for len(hs) >= 4 {
		l := int(hs[1])<<16 | int(hs[2])<<8 | int(hs[3])
		if len(hs) < 4+l {
			break
		}
		if hs[0] != msgServerHello {
			s.stop()
			return nil
		}
		h, ok := parseServerHello(hs[4 : 4+l])
		if !ok {
			s.stop()
			return nil
		}
		if h != nil { // not a HelloRetryRequest
			s.stop()
			return h
		}
		hs = hs[4+l:]
	}
	if other || len(s.buf) > maxHelloScan {
		s.stop()
	}
	return nil
}

func (s *serverHelloScan) stop() { s.done, s.buf = true, nil }

// parseServerHello reads a ServerHello's body; h is nil (ok true) for a
// HelloRetryRequest.
func parseServerHello(b []byte) (h *ServerHello, ok bool) {
	if len(b) < 2+32+1 {
		return nil, false
	}
	if bytes.Equal(b[2:34], helloRetryRandom) {
		return nil, true
	}
	h = &ServerHello{Version: binary.BigEndian.Uint16(b)}
	idLen := int(b[34])
	b = b[35:]
	if len(b) < idLen+3 {
		return nil, false
	}
	if idLen > 0 {
		h.SessionID = append([]byte(nil), b[:idLen]...)
	}
	h.Suite = binary.BigEndian.Uint16(b[idLen:])
	b = b[idLen+3:]
	if len(b) >= 2 {
		l := int(binary.BigEndian.Uint16(b))
		if len(b) < 2+l {
			return nil, false
		}
		h.Extensions = append([]byte(nil), b[2:2+l]...)
		if v := findExtension(h.Extensions, 43); len(v) == 6 { // supported_versions
			h.Version = binary.BigEndian.Uint16(v[4:])
		}
	}
	return h, true
}

// OnServerHello has fn run once the connection's ServerHello is whole:
// on a TLS server's socket (client-ssl) as crypto/tls is about to write
// it, before any of the write's bytes leave; on a TLS client's
// (server-ssl) as it is read, before crypto/tls acts on it. An error
// from fn ends the handshake (the write or the read fails with it).
// Set it before the handshake starts; connections without it pay a nil
// check per read and write.
func (h *HelloConn) OnServerHello(fn func(*ServerHello) error) {
	h.shello = fn
}

// serverHelloOut runs the hook over b, bytes the TLS server writes.
func (h *HelloConn) serverHelloOut(b []byte) error {
	if sh := h.sh.feed(b); sh != nil {
		return h.shello(sh)
	}
	return nil
}

// errServerCertNone is a member handshake's end when the member sent
// no certificate to a profile that requires one.
const errServerCertNone = "server sent no certificate"

// MemberConfig is cfg, a server-ssl configuration, for one member
// connection whose rules set its chain's depth (SSL::authenticate depth;
// negative: the profile's authenticate-depth) or look at the member's
// certificate once it is checked (cert, SERVERSSL_SERVERCERT; an error
// ends the handshake). Made only for the connections that need it.
func (b *Built) MemberConfig(cfg *tls.Config, depth int, cert func(tls.ConnectionState) error) *tls.Config {
	c := cfg.Clone()
	check := cfg.VerifyConnection
	if depth >= 0 && b != nil && (b.peer != nil || b.ocsp != nil) {
		var k *peerCheck
		if b.peer != nil {
			kk := *b.peer
			kk.depth = depth
			k = &kk
		}
		oc := b.ocsp
		check = func(cs tls.ConnectionState) error {
			if k != nil {
				if len(cs.PeerCertificates) == 0 {
					return errString(errServerCertNone)
				}
				if err := k.check(cs.PeerCertificates, time.Now()); err != nil {
					return err
				}
			}
			if oc != nil {
				return oc.check(cs.PeerCertificates, time.Now())
			}
			return nil
		}
	}
	c.VerifyConnection = func(cs tls.ConnectionState) error {
		if check != nil {
			if err := check(cs); err != nil {
				return err
			}
		}
		if cert != nil {
			return cert(cs)
		}
		return nil
	}
	return c
}

type errString string

func (e errString) Error() string { return string(e) }

// ClientCheck is what one client connection's rules ask of its
// handshake, read once the hello's rules ran.
type ClientCheck struct {
	// Depth holds the client's certificate chain to that many
	// intermediate certificates (SSL::authenticate depth); negative: the
	// profile's authenticate-depth.
	Depth int
	// Always is SSL::authenticate always: the client is authenticated
	// again when it would reuse a session, so its ticket gets a full
	// handshake in which its certificate is asked for and checked anew;
	// without peer-cert-mode request or require there is nothing to
	// authenticate and the session resumes as before [M].
	Always bool
	// Once is SSL::authenticate once: the session resumes even where
	// the profile says authenticate always.
	Once bool
}

// refuseResume is a ticket reading that resumes nothing: (nil, nil)
// passes the ticket over, and the handshake is a full one; tickets are
// still issued.
func refuseResume([]byte, tls.ConnectionState) (*tls.SessionState, error) { return nil, nil }

// WithClientChecks is cfg, for one client connection, with after run
// once the hello's rules ran (the configuration the hello picks is
// chosen): an error refuses the client (SSL::secure_renegotiation
// require-strict); a depth of 0 or more holds the client's certificate
// chain to that many intermediate certificates (SSL::authenticate depth
// in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO; negative: the profile's
// authenticate-depth). Only a profile that checks the chain at the
// handshake (peer-cert-mode require) refuses a deeper one; otherwise the
// depth is the rules' verdict (VerifyResultDepth). Always refuses to
// resume the client's session (ClientCheck.Always), and Once resumes it
// where the profile says authenticate always.
func WithClientChecks(cfg *tls.Config, bs []*Built, after func(h *tls.ClientHelloInfo) (ClientCheck, error)) *tls.Config {
	return &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
		chosen, err := configFor(cfg, h)
		if err != nil {
			return nil, err
		}
		ck, err := after(h)
		if err != nil {
			return nil, err
		}
		var b *Built
		if len(bs) > 0 {
			b = bs[Pick(bs, h.ServerName)]
		}
		switch {
		case ck.Always && chosen.ClientAuth != tls.NoClientCert:
			chosen = chosen.Clone()
			chosen.UnwrapSession = refuseResume
		case ck.Once && b != nil && b.authAlways:
			c := chosen.Clone()
			c.UnwrapSession = b.onceUnwrap
			if c.UnwrapSession == nil {
				c.UnwrapSession = chosen.DecryptTicket
			}
			chosen = c
		}
		if ck.Depth < 0 || b == nil {
			return chosen, nil
		}
		if b.peer == nil {
			return chosen, nil
		}
		k := *b.peer
		k.depth = ck.Depth
		c := chosen.Clone()
		c.VerifyPeerCertificate = func(raw [][]byte, _ [][]*x509.Certificate) error {
			chain, err := parseChain(raw)
			if err != nil {
				return err
			}
			return k.check(chain, time.Now())
		}
		return c, nil
	}}
}

// VerifyResultDepth is VerifyResult with the chain held to depth
// intermediate certificates (SSL::authenticate depth) instead of the
// profile's authenticate-depth; negative: the profile's.
func (b *Built) VerifyResultDepth(chain []*x509.Certificate, depth int) int {
	if depth < 0 || len(chain) == 0 {
		return b.VerifyResult(chain)
	}
	v := verifier{depth: 9, usage: x509.ExtKeyUsageAny}
	if b.verify != nil {
		v = *b.verify
	}
	v.depth = depth
	return v.result(chain, time.Now())
}

// SecureRenegotiation is the profile's secure-renegotiation as BIG-IP's
// SSL::secure_renegotiation numbers it: 0 request, 1 require, 2
// require-strict.
func (b *Built) SecureRenegotiation() int {
	if b == nil {
		return 1
	}
	return b.secureReneg
}

// SecureRenegotiationMode numbers a secure-renegotiation value (request,
// require, require-strict) as SSL::secure_renegotiation does; false for
// another word.
func SecureRenegotiationMode(s string) (int, bool) {
	switch s {
	case "request":
		return 0, true
	case "require":
		return 1, true
	case "require-strict":
		return 2, true
	}
	return 0, false
}

// secureRenegotiation numbers a profile's secure-renegotiation, def for
// "" (the side's default).
func secureRenegotiation(s string, def int) (int, bool) {
	if s == "" {
		return def, true
	}
	return SecureRenegotiationMode(s)
}
