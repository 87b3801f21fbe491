package mblbvs

import (
	"crypto/tls"
	"errors"
	"fmt"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// The TLS handshake's events and the SSL:: commands that act on a
// handshake or its session, on an HTTP virtual's front stage (tls.go) and
// its engine's member connections, as internal/l4/sslhello.go and
// sslsession.go do on standard virtuals: CLIENTSSL_SERVERHELLO_SEND and
// SERVERSSL_SERVERHELLO over the ServerHellos a HelloConn reads off the
// sockets, SERVERSSL_SERVERCERT over a member's checked chain,
// CLIENTSSL_PASSTHROUGH; SSL::authenticate, SSL::secure_renegotiation,
// SSL::session, SSL::sessionticket, SSL::handshake, SSL::unclean_shutdown,
// SSL::is_renegotiation_secure and SSL::allow_dynamic_record_sizing.
// A virtual whose rules use them keeps its clients on the goroutine front
// stage (LoopTLS), where the handshake's configuration is the client's
// own; the others are served as before.

var (
	_ rules.SSLAuthConn    = (*mblbRules)(nil)
	_ rules.SSLSessionConn = (*mblbRules)(nil)
)

// sslRuleState is a client's share of its rules' state for these events
// and commands, under the rules' lock.
type sslRuleState struct {
	sh        *tlsprof.ServerHello
	shSide    rules.Side
	sni       string
	certState *tls.ConnectionState
	depth     [2]int16 // SSL::authenticate depth + 1 (0: the profile's)
	reneg     [2]int8  // SSL::secure_renegotiation mode + 1 (0: the profile's)
	freq      int8     // SSL::authenticate once 1, always 2 (0: the profile's authenticate)
	// sessCtl is the client's session (nil: no rule names SSL::session).
	sessCtl *tlsprof.SessionControl
	// hold is closed to resume a held client handshake (nil: not held).
	hold chan struct{}
	// dynRecords is SSL::allow_dynamic_record_sizing (0: the profile's,
	// 1 on, -1 off).
	dynRecords int8
	// clientDone: the client's handshake went past its hello.
	clientDone bool
}

// usesHandshake reports whether p's rules handle an event of the
// handshake's middle or act on a handshake or session: such a virtual's
// clients stay on the front stage.
func usesHandshake(p *rules.Program) bool {
	return p != nil && (p.Handles(rules.ClientSSLServerHelloSend) || p.Handles(rules.ClientSSLPassthrough) ||
		p.ChecksPeers() || p.ControlsSessions() || p.SizesRecords() || p.UncleanShutdowns())
}

// errRuleEnded is a handshake's end when a rule ended the client in one
// of the handshake's events.
var errRuleEnded = errors.New("tls: the handshake was ended by an iRule")

// watchClient sets up the client's handshake over hc with cfg as its
// rules ask (nothing for rules that do not).
func (r *mblbRules) watchClient(cfg *tls.Config, hc *tlsprof.HelloConn, t *config.TLS) *tls.Config {
	p := irules.Program(r.rules)
	if p == nil {
		return cfg
	}
	if p.Handles(rules.ClientSSLServerHelloSend) {
		hc.OnServerHello(func(sh *tlsprof.ServerHello) error {
			return r.helloEvent(rules.ClientSSLServerHelloSend, rules.ClientSide, sh)
		})
	}
	if p.Handles(rules.ClientSSLServerHelloSend) || p.ChecksPeers() {
		cfg = tlsprof.WithClientChecks(cfg, t.ClientBuilt, func(h *tls.ClientHelloInfo) (tlsprof.ClientCheck, error) {
			r.mu.Lock()
			st := &r.ssl
			st.sni, st.clientDone = h.ServerName, true
			ck := tlsprof.ClientCheck{Depth: int(st.depth[rules.ClientSide]) - 1, Always: st.freq == 2, Once: st.freq == 1}
			mode := int(st.reneg[rules.ClientSide]) - 1
			r.mu.Unlock()
			if mode < 0 {
				_, b := t.ClientProfile(h.ServerName)
				mode = b.SecureRenegotiation()
			}
			if mode == 2 && p.ChecksPeers() && !tlsprof.OffersSecureRenegotiation(h) {
				return ck, errors.New("tls: the client does not offer secure renegotiation (secure-renegotiation require-strict)")
			}
			return ck, nil
		})
	}
	if p.ControlsSessions() {
		r.ssl.sessCtl = new(tlsprof.SessionControl)
		cfg = tlsprof.ControlSessions(cfg, t.ClientBuilt, r.ssl.sessCtl)
	}
	if p.SizesRecords() {
		cfg = tlsprof.WithDynamicRecords(cfg, func() int8 {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.ssl.clientDone = true
			return r.ssl.dynRecords
		})
	}
	return cfg
}

// helloEvent runs ev over a side's ServerHello; an error when the rule
// ended the client.
func (r *mblbRules) helloEvent(ev rules.Event, s rules.Side, sh *tlsprof.ServerHello) error {
	r.mu.Lock()
	r.ssl.sh, r.ssl.shSide = sh, s
	err := r.runEvent(ev)
	v := r.verdict
	r.ssl.sh = nil
	r.mu.Unlock()
	if !r.goOn(err, v) {
		return errRuleEnded
	}
	return nil
}

// awaitResume waits, after CLIENTSSL_CLIENTHELLO, until a rule resumes
// the handshake it held (SSL::handshake hold), within the profile's
// handshake-timeout; false means the client is to be ended.
func (r *mblbRules) awaitResume() bool {
	r.mu.Lock()
	ch := r.ssl.hold
	r.mu.Unlock()
	if ch == nil {
		return true
	}
	t := time.NewTimer(r.snap.Cfg.TLS.Handshake())
	defer t.Stop()
	select {
	case <-ch:
		return true
	case <-t.C:
		r.mu.Lock()
		r.ssl.hold = nil
		r.mu.Unlock()
		r.f.mv.env.Log.Warn("ssl handshake held", "virtual", r.f.vs.Name, "error", "the handshake held by SSL::handshake hold was not resumed within the handshake-timeout")
		return false
	}
}

// memberChecks sets up a member connection's handshake over hc with cfg
// for the client at client, as its rules ask: SERVERSSL_SERVERHELLO,
// SERVERSSL_SERVERCERT, SSL::authenticate depth and
// SSL::secure_renegotiation require-strict. f is the client's flow (nil
// when not tracked).
func (mv *VS) memberChecks(f *mblbFlow, cfg *tls.Config, hc *tlsprof.HelloConn, t *config.TLS) *tls.Config {
	if f == nil || f.rr == nil {
		return cfg
	}
	r := f.rr
	p := irules.Program(r.rules)
	if p == nil {
		return cfg
	}
	helloEv, certEv, checks := p.Handles(rules.ServerSSLServerHello), p.Handles(rules.ServerSSLServerCert), p.ChecksPeers()
	if helloEv || checks {
		hc.OnServerHello(func(sh *tlsprof.ServerHello) error {
			if helloEv {
				if err := r.helloEvent(rules.ServerSSLServerHello, rules.ServerSide, sh); err != nil {
					return err
				}
			}
			r.mu.Lock()
			mode := int(r.ssl.reneg[rules.ServerSide]) - 1
			r.mu.Unlock()
			if mode < 0 {
				mode = t.Server.SecureRenegotiation()
			}
			if checks && mode == 2 && !sh.SecureRenegotiation() {
				return errors.New("tls: the server does not agree to secure renegotiation (secure-renegotiation require-strict)")
			}
			return nil
		})
	}
	r.mu.Lock()
	depth := int(r.ssl.depth[rules.ServerSide]) - 1
	r.mu.Unlock()
	if depth < 0 && !certEv {
		return cfg
	}
	var cert func(tls.ConnectionState) error
	if certEv {
		cert = func(cs tls.ConnectionState) error {
			r.mu.Lock()
			r.ssl.certState = &cs
			r.f.stlsCfg = t
			err := r.runEvent(rules.ServerSSLServerCert)
			v := r.verdict
			r.ssl.certState = nil
			r.f.stlsCfg = nil
			r.mu.Unlock()
			if !r.goOn(err, v) {
				return errRuleEnded
			}
			return nil
		}
	}
	return t.Server.MemberConfig(cfg, depth, cert)
}

// helloSSL is SSL's answer while a hello or certificate event runs.
func (r *mblbRules) helloSSL(s rules.Side) (*rules.SSLInfo, bool) {
	st := &r.ssl
	ct := r.snap.Cfg.TLS
	if r.f.clientTLS != nil {
		ct = r.f.clientTLS
	}
	if st.sh != nil && st.shSide == s {
		if s == rules.ServerSide && r.f.stlsCfg != nil {
			ct = r.f.stlsCfg
		}
		return irules.ServerHelloInfo(st.sh, ct, s, st.sni), true
	}
	if st.certState != nil && s == rules.ServerSide {
		if r.f.stlsCfg != nil {
			ct = r.f.stlsCfg
		}
		return irules.CertInfo(st.certState, ct, int(st.depth[s])-1), true
	}
	return nil, false
}

// sslSide is an error when the side of this client does not speak TLS.
func (r *mblbRules) sslSide(s rules.Side, cmd string) error {
	t := r.snap.Cfg.TLS
	if t == nil || (s == rules.ClientSide && (t.Client == nil || r.f.front == nil || r.f.front.clear)) || (s == rules.ServerSide && t.Server == nil) {
		return fmt.Errorf("%s: the %s of this connection does not speak TLS", cmd, s)
	}
	return nil
}

// clientOpen reports whether the client's handshake configuration is
// still to be fixed (CLIENT_ACCEPTED, CLIENTSSL_CLIENTHELLO).
func (r *mblbRules) clientOpen() bool {
	fc := r.f.front
	return fc != nil && !fc.done && (r.f.hello != nil || !r.ssl.clientDone)
}

// SSLAuthDepth implements rules.SSLAuthConn: the client's chain depth
// until its hello is answered; the member's for the client's next
// member connections, until the running one's certificate is checked.
func (r *mblbRules) SSLAuthDepth(s rules.Side, depth int) error {
	if err := r.sslSide(s, "SSL::authenticate depth"); err != nil {
		return err
	}
	if s == rules.ClientSide && !r.clientOpen() {
		return errors.New("SSL::authenticate depth: the client's handshake has gone past its hello; set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO")
	}
	r.ssl.depth[s] = int16(depth) + 1
	return nil
}

// SSLAuthFrequency implements rules.SSLAuthConn: always, set before the
// client's hello is answered, gives a client that would resume its
// session a full handshake that authenticates it again (as on standard
// virtuals, l4's SSLAuthFrequency).
func (r *mblbRules) SSLAuthFrequency(always bool) error {
	if err := r.sslSide(rules.ClientSide, "SSL::authenticate"); err != nil {
		return err
	}
	r.ssl.freq = 1
	if always {
		r.ssl.freq = 2
	}
	return nil
}

// SSLSecureRenegotiation implements rules.SSLAuthConn.
func (r *mblbRules) SSLSecureRenegotiation(s rules.Side, set int) (int, error) {
	if err := r.sslSide(s, "SSL::secure_renegotiation"); err != nil {
		return 0, err
	}
	st := &r.ssl
	if set < 0 {
		if st.reneg[s] > 0 {
			return int(st.reneg[s]) - 1, nil
		}
		t := r.snap.Cfg.TLS
		if s == rules.ServerSide {
			return t.Server.SecureRenegotiation(), nil
		}
		_, b := t.ClientProfile(st.sni)
		return b.SecureRenegotiation(), nil
	}
	if s == rules.ClientSide && !r.clientOpen() {
		return 0, errors.New("SSL::secure_renegotiation: the client's hello is answered; set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO")
	}
	st.reneg[s] = int8(set) + 1
	return set, nil
}

// SSLSessionInvalidate implements rules.SSLSessionConn: the client's
// session is revoked in its client-ssl profile; the member's (in
// SERVERSSL_HANDSHAKE, where one member connection is the running
// event's) leaves the server-ssl profile's session cache.
func (r *mblbRules) SSLSessionInvalidate(s rules.Side) error {
	if err := r.sslSide(s, "SSL::session invalidate"); err != nil {
		return err
	}
	if s == rules.ServerSide {
		if r.f.stls == nil || r.f.stlsCfg == nil || r.f.stlsCfg.Server == nil {
			return errors.New("SSL::session invalidate: the server side's session is a member connection's, read in SERVERSSL_HANDSHAKE")
		}
		tlsprof.ForgetMemberSession(r.f.stls, r.f.stlsCfg.Server.Config)
		return nil
	}
	if r.ssl.sessCtl == nil {
		return errors.New("SSL::session invalidate: the client's session is not kept for this connection")
	}
	r.ssl.sessCtl.Invalidate()
	return nil
}

// SSLSessionTicket implements rules.SSLSessionConn: the client's ticket;
// the server side reads none [M].
func (r *mblbRules) SSLSessionTicket(s rules.Side) ([]byte, error) {
	if err := r.sslSide(s, "SSL::sessionticket"); err != nil {
		return nil, err
	}
	if s == rules.ServerSide || r.ssl.sessCtl == nil {
		return nil, nil
	}
	return r.ssl.sessCtl.Ticket(), nil
}

// SSLHandshakeHold implements rules.SSLSessionConn for the client's
// handshake, held in CLIENTSSL_CLIENTHELLO.
func (r *mblbRules) SSLHandshakeHold(s rules.Side, hold bool) error {
	if err := r.sslSide(s, "SSL::handshake"); err != nil {
		return err
	}
	if hold {
		if s != rules.ClientSide || r.f.hello == nil {
			return errors.New("SSL::handshake hold: only the client's handshake is held, in CLIENTSSL_CLIENTHELLO")
		}
		if r.ssl.hold == nil {
			r.ssl.hold = make(chan struct{})
		}
		return nil
	}
	if r.ssl.hold != nil {
		close(r.ssl.hold)
		r.ssl.hold = nil
	}
	return nil
}

// SSLUncleanShutdown implements rules.SSLSessionConn for the client's
// side. The member connections are the engine's, lent from one client to
// another (OneConnect): their closes stay the profile's [M].
func (r *mblbRules) SSLUncleanShutdown(s rules.Side, on bool) error {
	if err := r.sslSide(s, "SSL::unclean_shutdown"); err != nil {
		return err
	}
	if s == rules.ServerSide {
		return errors.New("SSL::unclean_shutdown serverside: the member connections of an http virtual server are shared; only the client side's close is set")
	}
	r.f.front.unclean.Store(on)
	return nil
}

// SSLRenegotiationSecure implements rules.SSLSessionConn: the client's
// hello offered RFC 5746's secure renegotiation.
func (r *mblbRules) SSLRenegotiationSecure(s rules.Side) (bool, error) {
	if err := r.sslSide(s, "SSL::is_renegotiation_secure"); err != nil {
		return false, err
	}
	if s == rules.ServerSide {
		return false, errors.New("SSL::is_renegotiation_secure: only the client's hello is read")
	}
	if h := r.f.hello; h != nil {
		return tlsprof.OffersSecureRenegotiation(h), nil
	}
	if r.ssl.sessCtl == nil {
		return false, errors.New("SSL::is_renegotiation_secure: the client's hello is not kept for this connection")
	}
	return r.ssl.sessCtl.SecureRenegotiation(), nil
}

// SSLDynamicRecords implements rules.SSLSessionConn for the client.
func (r *mblbRules) SSLDynamicRecords(set, on bool) (bool, error) {
	if err := r.sslSide(rules.ClientSide, "SSL::allow_dynamic_record_sizing"); err != nil {
		return false, err
	}
	st := &r.ssl
	if !set {
		if st.dynRecords != 0 {
			return st.dynRecords > 0, nil
		}
		_, b := r.snap.Cfg.TLS.ClientProfile(st.sni)
		return b != nil && b.Config != nil && !b.Config.DynamicRecordSizingDisabled, nil
	}
	if !r.clientOpen() {
		return false, errors.New("SSL::allow_dynamic_record_sizing: set it in CLIENT_ACCEPTED or CLIENTSSL_CLIENTHELLO, before the handshake's configuration is fixed")
	}
	st.dynRecords = -1
	if on {
		st.dynRecords = 1
	}
	return on, nil
}
