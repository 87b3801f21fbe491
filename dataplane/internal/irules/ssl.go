package irules

import (
	"crypto/tls"
	"slices"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// SSLInfo is what the SSL:: commands read of one TLS connection, the same
// for L4 and HTTP virtuals, client and server side: t is the virtual's
// TLS, whose profile for the side names the connection's profile and
// checks its peer's chain when a rule asks (SSL::verify_result).
func SSLInfo(c *tls.Conn, t *config.TLS, side rules.Side) *rules.SSLInfo {
	cs := c.ConnectionState()
	cur, desired := tlsprof.SessionIDs(c)
	info := &rules.SSLInfo{
		Version:          tlsprof.VersionName(cs.Version),
		Cipher:           tlsprof.SuiteName(cs.CipherSuite),
		Bits:             tlsprof.SuiteBits(cs.CipherSuite),
		SessionID:        cur,
		DesiredSessionID: desired,
		ServerName:       cs.ServerName,
		PeerCerts:        cs.PeerCertificates,
		ClientRandom:     tlsprof.ClientRandom(c),
		ALPN:             cs.NegotiatedProtocol,
	}
	if k := tlsprof.Keys(c); k != nil {
		info.Secret = func(label string) []byte { return secret(k, label) }
		if info.ClientRandom == nil {
			info.ClientRandom = k.ClientRandom()
		}
	}
	var b *tlsprof.Built
	switch {
	case side == rules.ClientSide:
		info.Profile, b = t.ClientProfile(cs.ServerName)
	case t != nil:
		info.Profile, b = t.ServerProfile, t.Server
	}
	if b != nil {
		info.SNIRequired = b.SNIRequired()
		info.VerifyResult = func() int { return b.VerifyResult(cs.PeerCertificates) }
		if cs.DidResume && !b.RetainsCertificate() {
			info.PeerCerts = nil // retain-certificate false: not kept with the session
		}
	}
	return info
}

// QUICInfo is what SSL:: commands see of an HTTP/3 client's TLS, the
// handshake QUIC ran (its state only: QUIC's TLS 1.3 has no session id,
// and its client random and secrets stay inside the QUIC stack, so
// SSL::sessionid answers empty and SSL::clientrandom and the secrets
// find none).
func QUICInfo(cs tls.ConnectionState, t *config.TLS) *rules.SSLInfo {
	info := connInfo(&cs)
	var b *tlsprof.Built
	info.Profile, b = t.ClientProfile(cs.ServerName)
	if b != nil {
		info.SNIRequired = b.SNIRequired()
		info.VerifyResult = func() int { return b.VerifyResult(cs.PeerCertificates) }
	}
	return info
}

// HelloInfo is what SSL:: commands see of a client's TLS while
// CLIENTSSL_CLIENTHELLO runs: the hello's server name (SSL::extensions
// -type 0), the profile it picks, the highest version it offers; no
// cipher or session is chosen yet.
func HelloInfo(h *tls.ClientHelloInfo, t *config.TLS) *rules.SSLInfo {
	info := &rules.SSLInfo{ServerName: h.ServerName, ClientRandom: tlsprof.HelloRandom(h)}
	// (GREASE values, 0x?a?a, are not versions.)
	vs := slices.DeleteFunc(slices.Clone(h.SupportedVersions), func(v uint16) bool { return v&0x0f0f == 0x0a0a })
	if len(vs) > 0 {
		info.Version = tlsprof.VersionName(slices.Max(vs))
	}
	var b *tlsprof.Built
	info.Profile, b = t.ClientProfile(h.ServerName)
	info.SNIRequired = b.SNIRequired()
	return info
}

// secret is the secret k keeps under a key-log label, nil for a label
// it does not keep.
func secret(k *tlsprof.KeyLog, label string) []byte {
	for s := tlsprof.MasterSecret; s <= tlsprof.ServerTrafficSecret; s++ {
		if s.Label() == label {
			return k.Secret(s)
		}
	}
	return nil
}

// ServerHelloInfo is what SSL:: commands see of a side's TLS while its
// ServerHello is about to leave (CLIENTSSL_SERVERHELLO_SEND) or has come
// in (SERVERSSL_SERVERHELLO): the version and cipher the hello agreed,
// its session ID and extensions (SSL::extensions), and sni, the client's
// server name; no certificate is in yet.
func ServerHelloInfo(h *tlsprof.ServerHello, t *config.TLS, side rules.Side, sni string) *rules.SSLInfo {
	info := &rules.SSLInfo{
		Version:    tlsprof.VersionName(h.Version),
		Cipher:     tlsprof.SuiteName(h.Suite),
		Bits:       tlsprof.SuiteBits(h.Suite),
		SessionID:  h.SessionID,
		ServerName: sni,
		Extensions: h.Extensions,
	}
	if info.Extensions == nil {
		info.Extensions = []byte{} // a hello without extensions: none, not the client's name
	}
	switch {
	case side == rules.ClientSide:
		var b *tlsprof.Built
		info.Profile, b = t.ClientProfile(sni)
		info.SNIRequired = b.SNIRequired()
	case t != nil:
		info.Profile = t.ServerProfile
	}
	return info
}

// CertInfo is what SSL:: commands see of the member's TLS while
// SERVERSSL_SERVERCERT runs, cs its handshake's state once the member's
// chain was checked: the chain (SSL::cert, X509::), the version and
// cipher, and the verdict (SSL::verify_result) within depth intermediate
// certificates (negative: the profile's authenticate-depth).
func CertInfo(cs *tls.ConnectionState, t *config.TLS, depth int) *rules.SSLInfo {
	info := connInfo(cs)
	if t != nil && t.Server != nil {
		info.Profile = t.ServerProfile
		b, chain := t.Server, cs.PeerCertificates
		info.VerifyResult = func() int { return b.VerifyResultDepth(chain, depth) }
	}
	return info
}

// WithDepth has info's SSL::verify_result hold the chain to depth
// intermediate certificates (SSL::authenticate depth) instead of the
// profile b's authenticate-depth; nothing when depth is negative.
func WithDepth(info *rules.SSLInfo, b *tlsprof.Built, depth int) {
	if depth < 0 || b == nil || len(info.PeerCerts) == 0 {
		return
	}
	chain := info.PeerCerts
	info.VerifyResult = func() int { return b.VerifyResultDepth(chain, depth) }
}

// connInfo is what every handshake tells the SSL:: commands: version,
// cipher and its bits, the server name, the peer's chain and the ALPN.
func connInfo(cs *tls.ConnectionState) *rules.SSLInfo {
	return &rules.SSLInfo{
		Version:    tlsprof.VersionName(cs.Version),
		Cipher:     tlsprof.SuiteName(cs.CipherSuite),
		Bits:       tlsprof.SuiteBits(cs.CipherSuite),
		ServerName: cs.ServerName,
		PeerCerts:  cs.PeerCertificates,
		ALPN:       cs.NegotiatedProtocol,
	}
}
