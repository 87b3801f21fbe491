package config

import (
	"crypto/tls"
	"crypto/x509"
	"time"

	"github.com/openltm/openltm/dataplane/tlsprof"
)

// TLS is what a virtual's client-ssl and server-ssl profiles make of its
// connections, built once per commit by tlsprof: the dataplane only wraps
// sockets with these configurations.
type TLS struct {
	// Client terminates TLS from clients (the client-ssl profiles, with
	// SNI choosing among them); nil: clients speak plaintext.
	Client *tls.Config
	// ClientProfiles are the client-ssl profiles' full paths, for shows
	// and logs.
	ClientProfiles []string
	// ClientServerNames are the client-ssl profiles' server-names (in the
	// order of ClientProfiles, "" for none) and ClientDefault the index of
	// the sni-default one: which profile a handshake used, for the
	// profiles' statistics (tlsprof.Pick).
	ClientServerNames []string
	ClientDefault     int
	// ClientBuilt are the client-ssl profiles as built (in the order of
	// ClientProfiles), which check a client's certificate when a rule
	// asks (ClientVerify).
	ClientBuilt []*tlsprof.Built
	// Server originates TLS to the members (the server-ssl profile); nil:
	// members get plaintext.
	Server *tlsprof.Built
	// ServerProfile is the server-ssl profile's full path.
	ServerProfile string
	// HandshakeTimeout bounds a handshake on either side (the profiles'
	// handshake-timeout); 0 means BIG-IP's 10 s.
	HandshakeTimeout time.Duration
	// Warnings are the profiles' settings applied otherwise than BIG-IP
	// would (Go's limits: tlsprof.Built.Warnings), for the commit's output.
	Warnings []string
}

// ClientVerify is SSL::verify_result on the client side: the client's
// chain checked by the client-ssl profile its handshake used (the
// ClientHello's server name picks it, as for the profiles' statistics);
// 0 (OpenSSL's OK) without profiles.
func (t *TLS) ClientVerify(serverName string, chain []*x509.Certificate) int {
	if t == nil || len(t.ClientBuilt) == 0 {
		return 0
	}
	i := 0
	if len(t.ClientBuilt) > 1 && len(t.ClientServerNames) == len(t.ClientBuilt) {
		i = tlsprof.Pick(t.ClientServerNames, t.ClientDefault, serverName)
	}
	return t.ClientBuilt[i].VerifyResult(chain)
}

// ServerVerify is SSL::verify_result on the server side: the member's
// chain checked by the server-ssl profile.
func (t *TLS) ServerVerify(_ string, chain []*x509.Certificate) int {
	if t == nil || t.Server == nil {
		return 0
	}
	return t.Server.VerifyResult(chain)
}

// DefaultHandshakeTimeout is a TLS profile's handshake-timeout default.
const DefaultHandshakeTimeout = 10 * time.Second

// Handshake is the handshake bound in force.
func (t *TLS) Handshake() time.Duration {
	if t == nil || t.HandshakeTimeout <= 0 {
		return DefaultHandshakeTimeout
	}
	return t.HandshakeTimeout
}
