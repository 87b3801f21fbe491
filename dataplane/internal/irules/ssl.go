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
