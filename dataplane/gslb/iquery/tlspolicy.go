package iquery

import (
	"crypto/tls"
	"slices"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TLSPolicy narrows the TLS of the iQuery connections with one peer, as
// a gtm server's iquery-minimum-tls-version and iquery-cipher-list do on
// BIG-IP: a site whose security policy forbids a version or a suite keeps
// it off the channel. nil is openltm's default, TLS 1.3 only.
type TLSPolicy struct {
	MinVersion, MaxVersion uint16
	// CipherSuites are the TLS 1.0–1.2 suites allowed (crypto/tls always
	// offers its three TLS 1.3 suites when TLS 1.3 is allowed).
	CipherSuites []uint16
}

// Equal says whether two policies allow the same connections, so that
// setting the same policy again changes nothing.
func (p *TLSPolicy) Equal(q *TLSPolicy) bool {
	if p == nil || q == nil {
		return p == q
	}
	return p.MinVersion == q.MinVersion && p.MaxVersion == q.MaxVersion && slices.Equal(p.CipherSuites, q.CipherSuites)
}

// apply sets the policy's versions and suites on an iQuery configuration.
func (p *TLSPolicy) apply(c *tls.Config) {
	if p == nil {
		c.MinVersion, c.MaxVersion = tls.VersionTLS13, tls.VersionTLS13
		return
	}
	c.MinVersion, c.MaxVersion = p.MinVersion, p.MaxVersion
	c.CipherSuites = p.CipherSuites
}

// allows says whether an open connection's version and suite are ones the
// policy allows: a stream negotiated before a stricter policy is ended.
func (p *TLSPolicy) allows(st tls.ConnectionState) bool {
	if p == nil {
		return st.Version == tls.VersionTLS13
	}
	if st.Version < p.MinVersion || st.Version > p.MaxVersion {
		return false
	}
	return st.Version == tls.VersionTLS13 || slices.Contains(p.CipherSuites, st.CipherSuite)
}

// tlsWords says how a connection is protected, as BIG-IP names versions
// and suites (TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256), for shows.
func tlsWords(st tls.ConnectionState) string {
	return tlsprof.VersionName(st.Version) + " " + tlsprof.SuiteName(st.CipherSuite)
}
