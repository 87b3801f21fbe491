package l4

import (
	"crypto/tls"
	"errors"
	"fmt"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// The middle of a standard virtual's TLS handshakes for rules: the
// virtual's ServerHello about to leave for the client
// (CLIENTSSL_SERVERHELLO_SEND) and the member's come in
// (SERVERSSL_SERVERHELLO), both read off the socket by the flow's
// HelloConn as crypto/tls writes or reads them; the member's chain once
// checked (SERVERSSL_SERVERCERT, in the member configuration's
// VerifyConnection); and the checks a rule sets for one connection
// (SSL::authenticate, SSL::secure_renegotiation). Each is set up only
// for a virtual whose rules handle the event or name the command: the
// others' handshakes are as before.

var _ rules.SSLAuthConn = (*proxied)(nil)

// sslHelloState is a flow's share of the rule state for these events and
// commands, under the rule lock.
type sslHelloState struct {
	// sh is the ServerHello while CLIENTSSL_SERVERHELLO_SEND (shSide the
	// client side) or SERVERSSL_SERVERHELLO runs; sni the client's
	// server name, read at its hello.
	sh     *tlsprof.ServerHello
	shSide rules.Side
	sni    string
	// certState is the member's TLS while SERVERSSL_SERVERCERT runs.
	certState *tls.ConnectionState
	// depth is SSL::authenticate depth per side plus one (0: the
	// profile's authenticate-depth); reneg SSL::secure_renegotiation's
	// mode per side plus one (0: the profile's).
	depth [2]int16
	reneg [2]int8
	// freq is SSL::authenticate once or always (freqOnce, freqAlways; 0:
	// the profile's authenticate), read at the client's hello
	// (tlsprof.ClientCheck).
	freq int8
}

// The SSL::authenticate frequencies a rule sets (sslHelloState.freq).
const (
	freqOnce   = 1
	freqAlways = 2
)

// errRuleEnded is a handshake's end when a rule ended the flow in one of
// the handshake's events (the flow was reset or closed as it said).
var errRuleEnded = errors.New("tls: the handshake was ended by an iRule")

// watchClientHello sets up, on the client's handshake over hc, the events
// and checks its rules ask for: CLIENTSSL_SERVERHELLO_SEND over the
// virtual's ServerHello, and after the hello's rules ran
// SSL::secure_renegotiation require-strict and SSL::authenticate depth.
func (pr *proxied) watchClientHello(cfg *tls.Config, hc *tlsprof.HelloConn, tc *config.TLS, prog *rules.Program) *tls.Config {
	rs := pr.rs
	sendEv := prog.Handles(rules.ClientSSLServerHelloSend)
	if !sendEv && !prog.ChecksPeers() {
		return cfg
	}
	if sendEv {
		hc.OnServerHello(func(sh *tlsprof.ServerHello) error {
			return pr.runHelloEvent(rules.ClientSSLServerHelloSend, rules.ClientSide, sh)
		})
	}
	return tlsprof.WithClientChecks(cfg, tc.ClientBuilt, func(h *tls.ClientHelloInfo) (tlsprof.ClientCheck, error) {
		rs.mu.Lock()
		rs.sni = h.ServerName
		ck := tlsprof.ClientCheck{Depth: int(rs.depth[rules.ClientSide]) - 1, Always: rs.freq == freqAlways, Once: rs.freq == freqOnce}
		mode := int(rs.reneg[rules.ClientSide]) - 1
		rs.mu.Unlock()
		if mode < 0 {
			_, b := tc.ClientProfile(h.ServerName)
			mode = b.SecureRenegotiation()
		}
		if mode == 2 && prog.ChecksPeers() && !tlsprof.OffersSecureRenegotiation(h) {
			return ck, errors.New("tls: the client does not offer secure renegotiation (secure-renegotiation require-strict)")
		}
		return ck, nil
	})
}

// watchMemberHello is watchClientHello for the member's handshake over
// hc with cfg: SERVERSSL_SERVERHELLO over its ServerHello (and
// SSL::secure_renegotiation require-strict's check of it), then
// SERVERSSL_SERVERCERT over its checked chain, held to SSL::authenticate
// depth.
func (pr *proxied) watchMemberHello(cfg *tls.Config, hc *tlsprof.HelloConn, tc *config.TLS, prog *rules.Program) *tls.Config {
	rs := pr.rs
	helloEv, certEv, checks := prog.Handles(rules.ServerSSLServerHello), prog.Handles(rules.ServerSSLServerCert), prog.ChecksPeers()
	if !helloEv && !certEv && !checks {
		return cfg
	}
	if helloEv || checks {
		hc.OnServerHello(func(sh *tlsprof.ServerHello) error {
			if helloEv {
				if err := pr.runHelloEvent(rules.ServerSSLServerHello, rules.ServerSide, sh); err != nil {
					return err
				}
			}
			rs.mu.Lock()
			mode := int(rs.reneg[rules.ServerSide]) - 1
			rs.mu.Unlock()
			if mode < 0 {
				mode = tc.Server.SecureRenegotiation()
			}
			if checks && mode == 2 && !sh.SecureRenegotiation() {
				return errors.New("tls: the server does not agree to secure renegotiation (secure-renegotiation require-strict)")
			}
			return nil
		})
	}
	rs.mu.Lock()
	depth := int(rs.depth[rules.ServerSide]) - 1
	rs.mu.Unlock()
	if depth < 0 && !certEv {
		return cfg
	}
	var cert func(tls.ConnectionState) error
	if certEv {
		cert = func(cs tls.ConnectionState) error {
			rs.mu.Lock()
			rs.certState = &cs
			rs.mu.Unlock()
			ok := pr.runSSLEvent(rules.ServerSSLServerCert)
			rs.mu.Lock()
			rs.certState = nil
			rs.mu.Unlock()
			if !ok {
				return errRuleEnded
			}
			return nil
		}
	}
	return tc.Server.MemberConfig(cfg, depth, cert)
}

// runHelloEvent runs ev over a side's ServerHello sh; an error when the
// rule ended the flow.
func (pr *proxied) runHelloEvent(ev rules.Event, s rules.Side, sh *tlsprof.ServerHello) error {
	rs := pr.rs
	rs.mu.Lock()
	rs.sh, rs.shSide = sh, s
	rs.mu.Unlock()
	ok := pr.runSSLEvent(ev)
	rs.mu.Lock()
	rs.sh = nil
	rs.mu.Unlock()
	if !ok {
		return errRuleEnded
	}
	return nil
}

// helloSSL is SSL's answer while a hello or certificate event runs
// (under the rule lock); ok false otherwise.
func (pr *proxied) helloSSL(s rules.Side) (*rules.SSLInfo, bool) {
	rs := pr.rs
	if rs == nil {
		return nil, false
	}
	if rs.sh != nil && rs.shSide == s {
		return irules.ServerHelloInfo(rs.sh, pr.tlsCfg(), s, rs.sni), true
	}
	if rs.certState != nil && s == rules.ServerSide {
		return irules.CertInfo(rs.certState, pr.tlsCfg(), int(rs.depth[s])-1), true
	}
	return nil, false
}

// authDepth is SSL::authenticate depth for a side, negative when no rule
// set it.
func (pr *proxied) authDepth(s rules.Side) int {
	if pr.rs == nil {
		return -1
	}
	return int(pr.rs.depth[s]) - 1
}

// clientChecksOpen reports whether the client's handshake configuration
// is still to be fixed: CLIENT_ACCEPTED, or CLIENTSSL_CLIENTHELLO.
func (pr *proxied) clientChecksOpen() bool {
	return pr.ctls == nil && (pr.rs.ev == config.EventClientAccepted || pr.hello != nil)
}

// memberChecksOpen reports whether the member's certificate is still to
// be checked: its handshake has not started.
func (pr *proxied) memberChecksOpen() bool {
	sc := pr.srv.Load()
	return sc == nil || sc.tls == nil
}

// SSLAuthDepth implements rules.SSLAuthConn.
func (pr *proxied) SSLAuthDepth(s rules.Side, depth int) error {
	if err := pr.tlsSide(s, "SSL::authenticate depth"); err != nil {
		return err
	}
	if s == rules.ClientSide && !pr.clientChecksOpen() {
		return errors.New("SSL::authenticate depth: the client's handshake has gone past its hello; set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO")
	}
	if s == rules.ServerSide && (!pr.memberChecksOpen() || pr.rs.sh != nil || pr.rs.certState != nil) {
		return errors.New("SSL::authenticate depth: the server's handshake has started; set it in SERVER_CONNECTED or SERVERSSL_CLIENTHELLO_SEND")
	}
	pr.rs.depth[s] = int16(depth) + 1
	return nil
}

// SSLAuthFrequency implements rules.SSLAuthConn: always, set before the
// client's hello is answered (CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO),
// authenticates a client that would resume its session again, in a full
// handshake; once resumes it as the profile does. crypto/tls never
// renegotiates as a server, so set later the choice changes nothing of
// this connection and is kept [M].
func (pr *proxied) SSLAuthFrequency(always bool) error {
	if err := pr.tlsSide(rules.ClientSide, "SSL::authenticate"); err != nil {
		return err
	}
	pr.rs.freq = freqOnce
	if always {
		pr.rs.freq = freqAlways
	}
	return nil
}

// SSLSecureRenegotiation implements rules.SSLAuthConn: the client's mode
// is set until its hello is answered (CLIENT_ACCEPTED,
// CLIENTSSL_CLIENTHELLO), the member's until its hello is in.
func (pr *proxied) SSLSecureRenegotiation(s rules.Side, set int) (int, error) {
	if err := pr.tlsSide(s, "SSL::secure_renegotiation"); err != nil {
		return 0, err
	}
	rs := pr.rs
	if set < 0 {
		if rs.reneg[s] > 0 {
			return int(rs.reneg[s]) - 1, nil
		}
		tc := pr.tlsCfg()
		if s == rules.ServerSide {
			return tc.Server.SecureRenegotiation(), nil
		}
		_, b := tc.ClientProfile(rs.sni)
		return b.SecureRenegotiation(), nil
	}
	if s == rules.ClientSide && !pr.clientChecksOpen() {
		return 0, fmt.Errorf("SSL::secure_renegotiation: the client's hello is answered; set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO")
	}
	if s == rules.ServerSide && !pr.memberChecksOpen() {
		return 0, fmt.Errorf("SSL::secure_renegotiation: the server's handshake is done; set it in SERVERSSL_SERVERHELLO at the latest")
	}
	rs.reneg[s] = int8(set) + 1
	return set, nil
}
