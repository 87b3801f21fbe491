package irules

import (
	"crypto/tls"

	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// SSLInfo is what the SSL:: commands read of one TLS connection, the same
// for L4 and HTTP virtuals, client and server side.
func SSLInfo(c *tls.Conn) *rules.SSLInfo {
	cs := c.ConnectionState()
	cur, desired := tlsprof.SessionIDs(c)
	return &rules.SSLInfo{
		Version:          tlsprof.VersionName(cs.Version),
		Cipher:           tlsprof.SuiteName(cs.CipherSuite),
		Bits:             tlsprof.SuiteBits(cs.CipherSuite),
		SessionID:        cur,
		DesiredSessionID: desired,
		ServerName:       cs.ServerName,
		PeerCerts:        cs.PeerCertificates,
	}
}
