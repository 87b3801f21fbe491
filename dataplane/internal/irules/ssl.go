package irules

import (
	"crypto/tls"
	"crypto/x509"

	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// SSLInfo is what the SSL:: commands read of one TLS connection, the same
// for L4 and HTTP virtuals, client and server side; verify checks the
// peer's chain as the side's profile would (config.TLS.ClientVerify,
// ServerVerify).
func SSLInfo(c *tls.Conn, verify func(serverName string, chain []*x509.Certificate) int) *rules.SSLInfo {
	cs := c.ConnectionState()
	cur, desired := tlsprof.SessionIDs(c)
	return &rules.SSLInfo{
		VerifyResult:     func() int { return verify(cs.ServerName, cs.PeerCertificates) },
		Version:          tlsprof.VersionName(cs.Version),
		Cipher:           tlsprof.SuiteName(cs.CipherSuite),
		Bits:             tlsprof.SuiteBits(cs.CipherSuite),
		SessionID:        cur,
		DesiredSessionID: desired,
		ServerName:       cs.ServerName,
		PeerCerts:        cs.PeerCertificates,
	}
}
