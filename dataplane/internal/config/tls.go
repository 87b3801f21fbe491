package config

import (
	"crypto/tls"
	"errors"
	"net"
	"time"

	"github.com/openltm/openltm/dataplane/sslfwd"
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
	// ClientBuilt are the client-ssl profiles as built (in the order of
	// ClientProfiles): their server-names and sni-default say which one
	// a handshake used (ClientIndex), and they check a client's
	// certificate when a rule asks.
	ClientBuilt []*tlsprof.Built
	// Server originates TLS to the members (the server-ssl profile); nil:
	// members get plaintext.
	Server *tlsprof.Built
	// ServerProfile is the server-ssl profile's full path.
	ServerProfile string
	// AllowNonSSL is client-ssl's allow-non-ssl: a client whose first
	// byte is not a TLS handshake record is served in plaintext, for a
	// virtual that takes http:// and https:// on one port.
	AllowNonSSL bool
	// ServerUseSNI is the virtual's serverssl-use-sni: a member's
	// handshake sends the server name the client sent, for members that
	// serve several names on one address; off, only the server-ssl
	// profile's own server-name is sent (it wins when set).
	ServerUseSNI bool
	// HandshakeTimeout bounds a handshake on either side (the profiles'
	// handshake-timeout); 0 means BIG-IP's 10 s.
	HandshakeTimeout time.Duration
	// ClientAlert and ServerAlert are the client-ssl and server-ssl
	// profiles' alert-timeout: how long the proxy waits for the peer's
	// close_notify once it sent its own before it resets the connection;
	// 0 is indefinite (BIG-IP's default) and costs nothing.
	ClientAlert, ServerAlert time.Duration
	// ClientMaxRecord is client-ssl's maximum-record-size (the smallest
	// among several profiles): what the flows write to a client is cut
	// so that no record carries more (tlsprof.WriteRecords); 0 is the
	// default, 16384, and costs a comparison per write.
	ClientMaxRecord int
	// ClientGate and ServerGate are the client-ssl (the sni-default one
	// among several) and server-ssl profiles' max-active-handshakes;
	// nil: indefinite.
	ClientGate, ServerGate *tlsprof.HandshakeGate
	// Forward is the SSL forward proxy (client-ssl and server-ssl with
	// ssl-forward-proxy enabled): the client's hello names the origin,
	// whose certificate is checked by Server and forged for the client;
	// nil: none, and the flows pay one nil check.
	Forward *sslfwd.Proxy
	// C3D is client certificate constrained delegation (ssl-c3d enabled
	// on both profiles): a member's handshake offers a certificate
	// forged from the client's; nil: none, and the flows pay one nil
	// check per member handshake.
	C3D *sslfwd.C3D
	// ClientEnds: a client-ssl profile has unclean-shutdown disabled or
	// strict-resume enabled (tlsprof.WatchesEnds), so clients' sockets
	// are watched for an end without close_notify (WatchClient).
	ClientEnds bool
	// Warnings are the profiles' settings applied otherwise than BIG-IP
	// would (Go's limits: tlsprof.Built.Warnings), for the commit's output.
	Warnings []string
	// Choosable are the running configuration's client-ssl and server-ssl
	// profiles a rule may switch a connection to (SSL::profile), by full
	// path, built at the commit so that the connection only swaps
	// pointers; nil when no rule of the virtual says SSL::profile, and
	// the flows then pay nothing.
	Choosable map[string]*Choosable
}

// Choosable is one profile SSL::profile may choose: Err says why it
// cannot be used (its certificate did not load, ...), else TLS is the
// virtual's TLS with the profile in place of the virtual's own for its
// side.
type Choosable struct {
	// Server: a server-ssl profile (else client-ssl).
	Server bool
	TLS    *TLS
	Err    error
	// Tag marks, for a server-ssl profile, the member IDs of connections
	// made with it, so that OneConnect never lends one to a request that
	// chose another profile (or none); never 0.
	Tag uint64
}

// Choose is t with the profile at name in place of the virtual's own
// profile for that side (SSL::profile): the profile must exist in the
// running configuration and the virtual must have a profile of its side,
// as BIG-IP requires. name without a folder is in /Common [M].
func (t *TLS) Choose(name string) (*Choosable, error) {
	full := name
	if len(full) == 0 || full[0] != '/' {
		full = "/Common/" + full
	}
	if t == nil || t.Choosable == nil {
		return nil, errors.New("SSL::profile: the virtual server has no client-ssl or server-ssl profile")
	}
	c := t.Choosable[full]
	switch {
	case c == nil:
		return nil, errors.New("SSL::profile: " + name + ": no such client-ssl or server-ssl profile")
	case c.Err != nil:
		return nil, errors.New("SSL::profile: " + full + ": " + c.Err.Error())
	case c.Server && t.Server == nil:
		return nil, errors.New("SSL::profile: " + full + " is a server-ssl profile and the virtual server has none")
	case !c.Server && t.Client == nil:
		return nil, errors.New("SSL::profile: " + full + " is a client-ssl profile and the virtual server has none")
	}
	return c, nil
}

// ServerFailed tells server-ssl's log-publisher, when it has one, that
// the handshake with a member on c failed with err; it returns err.
// Every server-ssl handshake passes here, failed or not: the member's
// address is noted for the profile's ocsp show (tlsprof NoteMember; a
// nil test without ocsp).
func (t *TLS) ServerFailed(c net.Conn, err error) error {
	if t != nil && t.Server != nil {
		t.Server.NoteMember(c)
		if err != nil {
			t.Server.Log.Failed(c, true, err)
		}
	}
	return err
}

// ServerPublishes reports whether server-ssl names a log-publisher, which
// then takes its failed handshakes instead of the ltm log.
func (t *TLS) ServerPublishes() bool {
	return t != nil && t.Server != nil && t.Server.Log.Publishes()
}

// ClientIndex is the index in ClientProfiles of the client-ssl profile
// a handshake used: the one whose server-name its ClientHello's server
// name matches, else the sni-default one (tlsprof.Pick); -1
// without built profiles.
func (t *TLS) ClientIndex(serverName string) int {
	if t == nil || len(t.ClientBuilt) == 0 || len(t.ClientProfiles) != len(t.ClientBuilt) {
		return -1
	}
	return tlsprof.Pick(t.ClientBuilt, serverName)
}

// ClientProfile is the name and built form of the client-ssl profile a
// handshake used (ClientIndex); "" and nil without profiles.
func (t *TLS) ClientProfile(serverName string) (name string, b *tlsprof.Built) {
	i := t.ClientIndex(serverName)
	if i < 0 {
		return "", nil
	}
	return t.ClientProfiles[i], t.ClientBuilt[i]
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

// ErrHandshakesFull is a handshake's error when its profile has
// max-active-handshakes in progress already: the connection is reset.
var ErrHandshakesFull = errors.New("tls: the profile's max-active-handshakes are in progress; connection reset")

// ClientHandshake runs hs, the client's handshake, within the client-ssl
// profile's max-active-handshakes: past it, hs is not run and the
// connection is reset as a failed handshake.
func (t *TLS) ClientHandshake(hs func() error) error {
	return gated(t.ClientGate, hs)
}

// ServerHandshake is ClientHandshake for a member's handshake and the
// server-ssl profile's bound.
func (t *TLS) ServerHandshake(hs func() error) error {
	return gated(t.ServerGate, hs)
}

// WatchClient is raw, a client's socket, and cfg, its handshake's
// configuration, watched for an end without close_notify when a
// client-ssl profile asks (ClientEnds); as they are otherwise (a boolean
// test per connection).
func (t *TLS) WatchClient(raw net.Conn, cfg *tls.Config) (net.Conn, *tls.Config) {
	if !t.ClientEnds {
		return raw, cfg
	}
	return tlsprof.WatchServer(raw, cfg, t.ClientBuilt)
}

// WatchMember is raw, a member's socket, watched for an end without
// close_notify when the server-ssl profile asks (its session then leaves
// cfg's cache); raw otherwise.
func (t *TLS) WatchMember(raw net.Conn, cfg *tls.Config) net.Conn {
	if !t.Server.WatchesEnds() {
		return raw
	}
	return tlsprof.WatchClient(raw, cfg, t.Server)
}

func gated(g *tlsprof.HandshakeGate, hs func() error) error {
	if g == nil {
		return hs()
	}
	if !g.Enter() {
		return ErrHandshakesFull
	}
	defer g.Leave()
	return hs()
}

// With is a copy of t whose side of c (client or server) is c's profile,
// the other side as t has it: a connection's TLS after SSL::profile, kept
// by the connection alone.
func (t *TLS) With(c *Choosable) *TLS {
	n := *t
	if c.Server {
		n.Server, n.ServerProfile, n.ServerGate, n.ServerAlert = c.TLS.Server, c.TLS.ServerProfile, c.TLS.ServerGate, c.TLS.ServerAlert
	} else {
		n.Client, n.ClientProfiles, n.ClientBuilt, n.ClientGate = c.TLS.Client, c.TLS.ClientProfiles, c.TLS.ClientBuilt, c.TLS.ClientGate
		n.ClientAlert, n.ClientMaxRecord, n.ClientEnds, n.AllowNonSSL = c.TLS.ClientAlert, c.TLS.ClientMaxRecord, c.TLS.ClientEnds, c.TLS.AllowNonSSL
	}
	n.HandshakeTimeout = max(t.HandshakeTimeout, c.TLS.HandshakeTimeout)
	return &n
}
