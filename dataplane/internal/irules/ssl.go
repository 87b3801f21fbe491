package irules

import (
	"crypto/tls"

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
	}
	var b *tlsprof.Built
	switch {
	case side == rules.ClientSide:
		info.Profile, b = t.ClientProfile(cs.ServerName)
	case t != nil:
		info.Profile, b = t.ServerProfile, t.Server
	}
	if b != nil {
		info.VerifyResult = func() int { return b.VerifyResult(cs.PeerCertificates) }
	}
	return info
}
