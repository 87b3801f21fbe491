package l4

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// TLS on a standard virtual (client-ssl, server-ssl) is a property of a
// goroutine flow's two sockets: the client's is wrapped in a TLS server
// connection after CLIENT_ACCEPTED, the member's in a TLS client
// connection after SERVER_CONNECTED, and the bytes the flow moves, counts
// and shows its rules are the plaintext. Everything else of the flow —
// member choice, persistence, SNAT, rules and their events, idle
// timeouts, the connection table — is the plain flow's. TLS flows never
// splice. A flow whose only TLS is client-ssl, on a virtual without rule
// events, runs on an event loop once handshaken instead
// (tlsloop_linux.go); the others are these goroutine flows.

// clientConn is what the flow reads and writes on the client side.
func (pr *proxied) clientConn() net.Conn {
	if pr.ctls != nil {
		return pr.ctls
	}
	return pr.client
}

// clientWrite writes b to the client, through TLS in records no larger
// than the client-ssl profile's maximum-record-size.
func (pr *proxied) clientWrite(b []byte) (int, error) {
	if pr.ctls != nil {
		return tlsprof.WriteRecords(pr.ctls, b, pr.recordLimit(rules.ClientSide))
	}
	return pr.client.Write(b)
}

// recordLimit is the largest record of plaintext written to a side's
// peer: SSL::maximum_record_size's for this connection, else the
// client-ssl profile's maximum-record-size (0: as crypto/tls makes them).
func (pr *proxied) recordLimit(s rules.Side) int {
	if rs := pr.rs; rs != nil {
		if n := rs.maxRecord[s].Load(); n > 0 {
			return int(n)
		}
	}
	if s == rules.ClientSide {
		return pr.snap.Cfg.TLS.ClientMaxRecord
	}
	return 0
}

// netConn is what the flow reads and writes on the server side.
func (sc *serverConn) netConn() net.Conn {
	if sc.tls != nil {
		return sc.tls
	}
	return sc.conn
}

// tlsOn reports whether either side of the flow (with sc its server side)
// speaks TLS.
func (pr *proxied) tlsOn(sc *serverConn) bool {
	return pr.ctls != nil || (sc != nil && sc.tls != nil)
}

// handlesSSL reports whether r's program handles a TLS event, which a
// virtual with client-ssl or server-ssl raises.
func handlesSSL(r config.Rules) bool {
	p := irules.Program(r)
	return p != nil && (p.Handles(rules.ClientSSLHandshake) || p.Handles(rules.ClientSSLClientCert) || p.Handles(rules.ServerSSLHandshake) ||
		p.Handles(rules.ClientSSLClientHello) || p.Handles(rules.ServerSSLClientHelloSend) ||
		p.Handles(rules.ClientSSLData) || p.Handles(rules.ServerSSLData) ||
		p.Handles(rules.ClientSSLServerHelloSend) || p.Handles(rules.ClientSSLPassthrough) ||
		p.Handles(rules.ServerSSLServerHello) || p.Handles(rules.ServerSSLServerCert) ||
		p.ChecksPeers()) // SSL::authenticate, SSL::secure_renegotiation: the handshake's checks (sslhello.go)
}

// terminate completes the client's TLS handshake (client-ssl) within the
// profile's handshake-timeout, then runs CLIENTSSL_CLIENTCERT (when the
// client sent a certificate) and CLIENTSSL_HANDSHAKE. False means the flow
// is over (the client was reset, or the rule ended it).
func (pr *proxied) terminate() bool {
	if pr.snap.Cfg.STARTTLS != nil {
		return true // the client's STARTTLS starts it (starttls.go)
	}
	return pr.handshakeClient(false)
}

// handshakeClient is terminate's handshake, also run at a client's
// STARTTLS (upgrade), where allow-non-ssl does not apply: the client
// asked for TLS.
func (pr *proxied) handshakeClient(upgrade bool) bool {
	tc := pr.tlsCfg()
	if tc == nil || tc.Client == nil || (pr.rs != nil && pr.rs.sslOff[rules.ClientSide]) {
		return true
	}
	allow := tc.AllowNonSSL && !upgrade
	if pr.rs != nil && pr.rs.nonSSL != 0 && !upgrade { // SSL::allow_nonssl
		allow = pr.rs.nonSSL > 0
	}
	if allow {
		isTLS, ok := pr.firstIsTLS(tc)
		if !ok {
			return false
		}
		if !isTLS {
			if pr.rs != nil {
				pr.rs.plainClient = true
				return pr.runSSLEvent(rules.ClientSSLPassthrough) // allow-non-ssl: the client goes on in plaintext
			}
			return true
		}
	}
	var hc *tlsprof.HelloConn
	cfg := tc.Client
	prog := irules.Program(pr.rules)
	if pr.rs != nil { // rules may read the session IDs (SSL::sessionid)
		hc = tlsprof.NewHelloConn(pr.client, true)
		if prog != nil && prog.KeepsSecrets() {
			cfg = tlsprof.WithKeyLog(cfg, hc.KeepKeys())
		}
	}
	raw := clientTLSConn(pr.client, hc, pr.head) // handoff.go
	pr.head = nil
	deadline := time.Now().Add(tc.Handshake())
	if pr.rs != nil && prog != nil && prog.Handles(rules.ClientSSLClientHello) {
		cfg = tlsprof.WithHello(cfg, func(h *tls.ClientHelloInfo) bool {
			pr.hello = h
			defer func() { pr.hello = nil }()
			// SSL::handshake hold: crypto/tls waits here, on this flow's
			// goroutine, until a rule resumes it (sslsession.go).
			return pr.runSSLEvent(rules.ClientSSLClientHello) && pr.awaitResume(deadline)
		})
	}
	if pr.rs != nil && prog != nil { // CLIENTSSL_SERVERHELLO_SEND, SSL::authenticate (sslhello.go)
		cfg = pr.watchClientHello(cfg, hc, tc, prog)
	}
	if pr.rs != nil && prog != nil && prog.ControlsSessions() { // SSL::session, SSL::sessionticket
		pr.rs.sessCtl = new(tlsprof.SessionControl)
		cfg = tlsprof.ControlSessions(cfg, tc.ClientBuilt, pr.rs.sessCtl)
	}
	if pr.rs != nil && prog != nil && prog.SizesRecords() { // SSL::allow_dynamic_record_sizing
		cfg = tlsprof.WithDynamicRecords(cfg, pr.dynRecordsChoice)
	}
	raw, cfg = tc.WatchClient(raw, cfg)
	var tag *tlsprof.SessionTag
	if sslPersists(pr.snap.Cfg) { // the session's name is the persistence key
		tag = new(tlsprof.SessionTag)
		cfg = tlsprof.TagSessions(cfg, tag)
	}
	conn := tls.Server(raw, cfg)
	pr.client.SetDeadline(deadline)
	if err := pr.snap.NoteClientTLS(conn, tc.ClientHandshake(conn.Handshake), &pr.cssl); err != nil {
		pr.because(rstcause.TLSHandshake)
		return false
	}
	pr.client.SetDeadline(time.Time{})
	pr.ctls = conn
	if tag != nil {
		pr.firstKey = tag.ID()
	}
	if pr.rs != nil {
		if len(conn.ConnectionState().PeerCertificates) > 0 && !pr.runSSLEvent(rules.ClientSSLClientCert) {
			return false
		}
		if !pr.runSSLEvent(rules.ClientSSLHandshake) {
			return false
		}
	}
	return true
}

// firstIsTLS reports whether the client's first byte, awaited within the
// handshake-timeout, opens a TLS handshake record (allow-non-ssl); ok is
// false when the client sent nothing in time or went away.
func (pr *proxied) firstIsTLS(tc *config.TLS) (isTLS, ok bool) {
	if len(pr.head) > 0 {
		return pr.head[0] == tlsHandshakeRecord, true
	}
	pr.client.SetReadDeadline(time.Now().Add(tc.Handshake()))
	b, err := rawsock.PeekByte(pr.client)
	pr.client.SetReadDeadline(time.Time{})
	return b == tlsHandshakeRecord, err == nil
}

// tlsHandshakeRecord is the first byte of a TLS client's first record.
const tlsHandshakeRecord = 0x16

// originate makes sc's connection TLS (server-ssl) within the profile's
// handshake-timeout, passing the client's SNI on when the virtual says
// serverssl-use-sni and the profile names none, then runs
// SERVERSSL_HANDSHAKE. False means the flow is over.
func (pr *proxied) originate(sc *serverConn) bool {
	return pr.originateOn(sc, true)
}

// originateMember is originate for a further member connection of a flow
// that balances messages over several (diameter.go): a failed handshake
// loses that member only, not the flow.
func (pr *proxied) originateMember(sc *serverConn) bool {
	return pr.originateOn(sc, false)
}

func (pr *proxied) originateOn(sc *serverConn, fatal bool) bool {
	tc := pr.tlsCfg()
	if tc == nil || tc.Server == nil || (pr.rs != nil && pr.rs.sslOff[rules.ServerSide]) {
		return true
	}
	if pr.snap.Cfg.ServerLDAP != nil { // StartTLS first (ldap.go)
		if on, ok := pr.ldapServerStartTLS(sc, pr.serverLDAPMode(), tc.Handshake()); !ok || !on {
			return ok
		}
	}
	sni := ""
	if pr.ctls != nil && tc.ServerUseSNI {
		sni = pr.ctls.ConnectionState().ServerName
	}
	var raw net.Conn = sc.conn
	var hc *tlsprof.HelloConn
	if pr.rs != nil {
		hc = tlsprof.NewHelloConn(sc.conn, false)
		raw = hc
		if !pr.runSSLEvent(rules.ServerSSLClientHelloSend) {
			return false
		}
		if pr.rs.sslOff[rules.ServerSide] {
			return true // SSL::disable serverside there: no hello leaves
		}
		tc = pr.tlsCfg() // SSL::profile there
	}
	cfg := tc.Server.ForServerName(sni)
	if tc.C3D != nil { // the client's certificate, forged for the member
		var peer []*x509.Certificate
		if pr.ctls != nil {
			peer = pr.ctls.ConnectionState().PeerCertificates
		}
		src, err := tc.C3D.Chosen(peer, pr.c3d)
		var c *tls.Config
		if err == nil {
			c, err = tc.C3D.ServerSide(cfg, src, pr.c3d, time.Now())
		}
		if err != nil {
			pr.e.env.Log.Warn("ssl c3d", "virtual", pr.vs.Name, "error", err)
			pr.end(true)
			return false
		}
		cfg = c
	}
	if hc != nil {
		if prog := irules.Program(pr.rules); prog != nil {
			if prog.KeepsSecrets() {
				cfg = tlsprof.WithKeyLog(cfg, hc.KeepKeys())
			}
			cfg = pr.watchMemberHello(cfg, hc, tc, prog) // SERVERSSL_SERVERHELLO, SERVERSSL_SERVERCERT (sslhello.go)
		}
	}
	conn := tls.Client(tc.WatchMember(raw, cfg), cfg)
	sc.conn.SetDeadline(time.Now().Add(tc.Handshake()))
	if err := pr.vs.Prof.ServerSSL.Note(conn, tc.ServerFailed(conn, tc.ServerHandshake(conn.Handshake))); err != nil {
		if !tc.ServerPublishes() {
			pr.snap.SSLLog.HandshakeFailed(conn, false, err)
		}
		if fatal {
			pr.end(true)
		}
		return false
	}
	sc.conn.SetDeadline(time.Time{})
	sc.tls, sc.tlsCfg = conn, cfg
	sc.ssl.Hold(&pr.vs.Prof.ServerSSL)
	if pr.rs != nil && !pr.runSSLEvent(rules.ServerSSLHandshake) {
		return false
	}
	return true
}

// runSSLEvent runs one of the TLS events, which the proxy hook does not
// list, and applies its verdict as runEvent does.
func (pr *proxied) runSSLEvent(ev rules.Event) bool {
	prog := irules.Program(pr.rules)
	if prog == nil || !prog.Handles(ev) {
		return true
	}
	rs := pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return false
	}
	rs.ev = config.Event(ev.String())
	switch ev { // the payload is seen now, as runEvent marks it
	case rules.ClientSSLData:
		rs.side[rules.ClientSide].fresh = false
	case rules.ServerSSLData:
		rs.side[rules.ServerSide].fresh = false
	}
	err := pr.RuleSession(prog).Run(ev)
	v := rs.verdict
	rs.verdict, rs.detach = irules.GoOn, false
	rs.mu.Unlock()
	if err != nil {
		pr.logRuleError(config.Event(ev.String()), err)
		pr.because(rstcause.TCLError)
		pr.end(true)
		return false
	}
	switch v {
	case irules.Reject:
		pr.because(rstcause.RuleReject)
		pr.end(true)
		return false
	case irules.Drop:
		pr.closeGraceful()
		return false
	}
	if !pr.flush() {
		return false
	}
	if v == irules.Close {
		pr.closeGraceful()
		return false
	}
	return true
}

// SSLCollect implements rules.SSLDataConn: the side's decrypted bytes are
// held for CLIENTSSL_DATA or SERVERSSL_DATA as TCP::collect holds them for
// CLIENT_DATA (the same buffer, so SSL::payload, SSL::release and
// SSL::respond are TCP::payload, TCP::release and TCP::respond's), with
// no bytes skipped.
func (pr *proxied) SSLCollect(s rules.Side, length int) error {
	tc := pr.snap.Cfg.TLS
	if tc == nil || (s == rules.ClientSide && tc.Client == nil) || (s == rules.ServerSide && tc.Server == nil) || pr.rs.sslOff[s] {
		return fmt.Errorf("SSL::collect: the %s of this connection does not speak TLS", s)
	}
	st := &pr.rs.side[s]
	st.collecting, st.want, st.skip, st.ssl = true, length, 0, true
	st.on.Store(true)
	return nil
}

// dataEvent runs a collecting side's data event: CLIENTSSL_DATA or
// SERVERSSL_DATA when the rule collected with SSL::collect (ssl, read
// with the side's state under the rule lock), else CLIENT_DATA or
// SERVER_DATA (ev).
func (pr *proxied) dataEvent(up, ssl bool, ev config.Event) bool {
	if !ssl {
		return pr.runEvent(ev)
	}
	if up {
		return pr.runSSLEvent(rules.ClientSSLData)
	}
	return pr.runSSLEvent(rules.ServerSSLData)
}

// SSLMode implements rules.SSLSettingsConn: the side has its profile, no
// SSL::disable, and (the client) was not let through in plaintext.
func (pr *proxied) SSLMode(s rules.Side) bool {
	tc := pr.snap.Cfg.TLS
	if tc == nil || pr.rs.sslOff[s] {
		return false
	}
	if s == rules.ClientSide {
		return tc.Client != nil && !pr.rs.plainClient
	}
	return tc.Server != nil
}

// SSLAllowNonSSL implements rules.SSLSettingsConn: allow-non-ssl for this
// client, set in CLIENT_ACCEPTED (before the first byte is looked at).
func (pr *proxied) SSLAllowNonSSL(set, on bool) (bool, error) {
	tc := pr.snap.Cfg.TLS
	if tc == nil || tc.Client == nil {
		return false, errors.New("SSL::allow_nonssl: the virtual server has no client-ssl profile")
	}
	rs := pr.rs
	if !set {
		if rs.nonSSL != 0 {
			return rs.nonSSL > 0, nil
		}
		return tc.AllowNonSSL, nil
	}
	if rs.ev != config.EventClientAccepted || pr.ctls != nil || rs.plainClient {
		return false, errors.New("SSL::allow_nonssl: set it in CLIENT_ACCEPTED, before the client's first bytes are read")
	}
	rs.nonSSL = -1
	if on {
		rs.nonSSL = 1
	}
	return on, nil
}

// SSLMaxRecord implements rules.SSLSettingsConn: the largest record of
// plaintext toward the side's peer, set within maximum-record-size's
// bounds; it applies to what is written from then on.
func (pr *proxied) SSLMaxRecord(s rules.Side, n int) (int, error) {
	tc := pr.snap.Cfg.TLS
	if tc == nil || (s == rules.ClientSide && tc.Client == nil) || (s == rules.ServerSide && tc.Server == nil) {
		return 0, fmt.Errorf("SSL::maximum_record_size: the %s of this connection has no SSL profile", s)
	}
	if n == 0 {
		if v := pr.recordLimit(s); v > 0 {
			return v, nil
		}
		return tlsprof.MaxRecordSize, nil
	}
	if n < tlsprof.MinRecordSize || n > tlsprof.MaxRecordSize {
		return 0, fmt.Errorf("SSL::maximum_record_size: %d is out of range: from %d to %d bytes", n, tlsprof.MinRecordSize, tlsprof.MaxRecordSize)
	}
	pr.rs.maxRecord[s].Store(int32(n))
	return n, nil
}

// SSL implements rules.SSLConn: a side's TLS once its handshake is done.
func (pr *proxied) SSL(s rules.Side) (*rules.SSLInfo, bool) {
	if info, ok := pr.helloSSL(s); ok { // a hello or certificate event (sslhello.go)
		return info, true
	}
	var c *tls.Conn
	if s == rules.ClientSide {
		c = pr.ctls
	} else if sc := pr.srv.Load(); sc != nil {
		c = sc.tls
	}
	if c == nil {
		if h := pr.hello; h != nil && s == rules.ClientSide {
			info := irules.HelloInfo(h, pr.tlsCfg())
			info.DesiredSessionID = pr.firstKey // a hello passed through: the ID ssl persistence read
			return info, true
		}
		return nil, false
	}
	info := irules.SSLInfo(c, pr.tlsCfg(), s)
	if d := pr.authDepth(s); d >= 0 { // SSL::authenticate depth
		b := pr.tlsCfg().Server
		if s == rules.ClientSide {
			_, b = pr.tlsCfg().ClientProfile(info.ServerName)
		}
		irules.WithDepth(info, b, d)
	}
	return info, true
}

// C3DCert implements rules.C3DConn: the member's handshake, not begun
// yet, shows a copy of c instead of the client's certificate.
func (pr *proxied) C3DCert(c *x509.Certificate) error {
	r, err := pr.c3dRule()
	if err == nil {
		r.Cert = c
	}
	return err
}

// C3DCommonName implements rules.C3DConn: the member's handshake, not
// begun yet, shows a subject with the common name cn.
func (pr *proxied) C3DCommonName(cn string) error {
	r, err := pr.c3dRule()
	if err == nil {
		r.CN, r.SetCN = cn, true
	}
	return err
}

// C3DExtension implements rules.C3DConn: the member's handshake, not
// begun yet, shows a certificate with the extension added.
func (pr *proxied) C3DExtension(oid string, value []byte) error {
	r, err := pr.c3dRule()
	if err == nil {
		err = r.AddExtension(oid, value)
	}
	return err
}

// C3DLifespan implements rules.C3DConn (SSL::c3d cert_lifespan).
func (pr *proxied) C3DLifespan(hours string) error {
	r, err := pr.c3dRule()
	if err == nil {
		err = r.SetLifespan(hours)
	}
	return err
}

// C3DStartDate implements rules.C3DConn (SSL::c3d cert_start_date).
func (pr *proxied) C3DStartDate(date string) error {
	r, err := pr.c3dRule()
	if err == nil {
		err = r.SetStart(date)
	}
	return err
}

// c3dRule is the flow's SSL::c3d choices, made on first use; an error
// when the virtual does not delegate or the member's handshake is done.
func (pr *proxied) c3dRule() (*sslfwd.C3DRule, error) {
	if tc := pr.snap.Cfg.TLS; tc == nil || tc.C3D == nil {
		return nil, errors.New("SSL::c3d: the virtual server's SSL profiles do not have ssl-c3d enabled")
	}
	if sc := pr.srv.Load(); sc != nil && sc.tls != nil {
		return nil, errors.New("SSL::c3d: the server side's handshake is done; choose in CLIENTSSL_HANDSHAKE")
	}
	if pr.c3d == nil {
		pr.c3d = new(sslfwd.C3DRule)
	}
	return pr.c3d, nil
}

// tlsCfg is the flow's TLS: the virtual's, or the one its rules made
// with SSL::profile.
func (pr *proxied) tlsCfg() *config.TLS {
	if pr.rs != nil && pr.rs.sslTLS != nil {
		return pr.rs.sslTLS
	}
	return pr.snap.Cfg.TLS
}

// SSLProfile implements rules.SSLProfileConn: the side the profile is
// for uses it for its handshake, which must not have started: the
// client's before its hello is read (CLIENT_ACCEPTED), the server's
// until its hello leaves (LB_SELECTED, SERVER_CONNECTED,
// SERVERSSL_CLIENTHELLO_SEND).
func (pr *proxied) SSLProfile(name string) error {
	tc := pr.tlsCfg()
	c, err := tc.Choose(name)
	if err != nil {
		return err
	}
	if c.Server {
		if sc := pr.srv.Load(); sc != nil && sc.tls != nil {
			return errors.New("SSL::profile: the server's handshake has started; choose the server-ssl profile in LB_SELECTED, SERVER_CONNECTED or SERVERSSL_CLIENTHELLO_SEND")
		}
	} else if pr.ctls != nil || pr.hello != nil || pr.rs.ev != config.EventClientAccepted {
		return errors.New("SSL::profile: the client's handshake has started; choose the client-ssl profile in CLIENT_ACCEPTED")
	}
	pr.rs.sslTLS = tc.With(c)
	return nil
}

// SSLDisable implements rules.SSLConn: a side whose handshake has not
// started speaks plaintext (SSL::disable in CLIENT_ACCEPTED for the
// client, before the server is connected for the server).
func (pr *proxied) SSLDisable(s rules.Side) error {
	if s == rules.ClientSide && pr.ctls != nil {
		return errors.New("SSL::disable: the client's handshake is done; disable it in CLIENT_ACCEPTED")
	}
	if s == rules.ServerSide {
		if sc := pr.srv.Load(); sc != nil && sc.tls != nil {
			return errors.New("SSL::disable serverside: the server's handshake is done")
		}
	}
	pr.rs.sslOff[s] = true
	return nil
}

// SSLEnable implements rules.SSLConn: a side turned off by SSL::disable
// speaks TLS again, while its handshake has still not started.
func (pr *proxied) SSLEnable(s rules.Side) error {
	if s == rules.ClientSide && pr.rs.sslOff[s] && pr.rs.ev != config.EventClientAccepted {
		return errors.New("SSL::enable: the client already speaks plaintext; enable it in CLIENT_ACCEPTED")
	}
	if s == rules.ServerSide && pr.rs.sslOff[s] && pr.srv.Load() != nil {
		return errors.New("SSL::enable serverside: the server is connected in plaintext")
	}
	pr.rs.sslOff[s] = false
	return nil
}

// copyLoopTLS is copyLoop for a flow with TLS on either side: plaintext
// through the TLS connections, one pooled buffer per read. st, for flows
// with rules, is the read side's: when a rule turns collection on, the
// bytes just read go to the rule and it returns true.
func (pr *proxied) copyLoopTLS(up bool, sc *serverConn, st *sideState) bool {
	src, dst, raw := pr.clientConn(), sc.netConn(), pr.client
	maxRecord := 0 // maximum-record-size, toward a TLS peer
	if up && sc.tls != nil {
		maxRecord = pr.recordLimit(rules.ServerSide)
	}
	if !up {
		src, dst, raw = sc.netConn(), pr.clientConn(), sc.conn
		if pr.ctls != nil {
			maxRecord = pr.recordLimit(rules.ClientSide)
		}
	}
	// The deadline is set once and moved on only when it expires while
	// the flow was active (stillActive), as copyLoop does: resetting a
	// timer on every read would cost more than the read.
	if idle := pr.IdleTimeout(); idle > 0 {
		raw.SetReadDeadline(idleDeadline(idle, time.Now().UnixNano()))
	}
	for {
		bp := bufPool.Get().(*[]byte)
		n, err := src.Read(*bp)
		if n > 0 {
			if up && pr.rs != nil && pr.rs.srvOn.Load() {
				pr.joinSrvClones() // clone.go: SERVER_DATA's
			}
			if up && pr.clone != nil {
				pr.cloneRead((*bp)[:n], st) // clone.go
			}
			if st != nil && st.on.Load() {
				pr.countRead(n, up, sc)
				rs := pr.rs
				rs.mu.Lock()
				rs.collectBytes(st, up, (*bp)[:n])
				rs.mu.Unlock()
				bufPool.Put(bp)
				return true
			}
			pr.count(n, up, sc)
			if b := pr.bwc.Load(); b != nil {
				b.Wait(n) // bwc.go
			}
			if up {
				if ip := pr.ingress.Load(); ip != nil {
					ip.Wait(n) // ingress.go
				}
			}
			_, werr := tlsprof.WriteRecords(dst, (*bp)[:n], maxRecord)
			bufPool.Put(bp)
			if werr != nil {
				pr.peerReset(up)
				pr.lost(sc)
				return false
			}
		} else {
			bufPool.Put(bp)
		}
		if err == nil {
			continue
		}
		if errors.Is(err, os.ErrDeadlineExceeded) && pr.stillActive(raw) {
			continue
		}
		if errors.Is(err, io.EOF) {
			if !pr.gone(sc) && pr.passFIN() {
				if pr.rs != nil && pr.uncleanTo(sideOf(!up)) { // SSL::unclean_shutdown: the FIN alone
					closeWrite(raw2(dst))
				} else {
					closeWrite(dst)
				}
				pr.awaitAlert(up, dst)
			}
			return false
		}
		pr.peerReset(!up)
		pr.lost(sc)
		return false
	}
}

// awaitAlert starts the wait for the peer's close_notify once the
// proxy's went to dst (the member's side when up) over TLS: past the
// profile's alert-timeout both sides are reset, as BIG-IP aborts the
// connection. Indefinite (0) starts nothing.
func (pr *proxied) awaitAlert(up bool, dst net.Conn) {
	tc := pr.snap.Cfg.TLS
	if tc == nil {
		return
	}
	if _, ok := dst.(*tls.Conn); !ok {
		return
	}
	d, c, held := tc.ClientAlert, rstcause.AlertTimeout, &pr.cssl
	if up {
		d, c = tc.ServerAlert, rstcause.AlertTimeout|rstcause.Peer // the member's silence
		held = &pr.srv.Load().ssl
	}
	if d <= 0 || pr.alert.Load() != nil {
		return
	}
	pr.alert.Store(time.AfterFunc(d, func() {
		if pr.ended.Load() {
			return
		}
		if n := held.Counters(); n != nil {
			n.AlertTimeouts.Add(1)
		}
		pr.because(c)
		pr.end(true)
	}))
}

// sideOf is the side a flow's direction reads from (up: the client).
func sideOf(up bool) rules.Side {
	if up {
		return rules.ClientSide
	}
	return rules.ServerSide
}

// raw2 is the socket under c when c is a TLS connection: what a close
// without close_notify shuts.
func raw2(c net.Conn) net.Conn {
	if tc, ok := c.(*tls.Conn); ok {
		return tc.NetConn()
	}
	return c
}

// closeWrite half-closes c: a TLS connection sends close_notify, then the
// socket under it a FIN.
func closeWrite(c net.Conn) {
	if tc, ok := c.(*tls.Conn); ok {
		tc.CloseWrite()
		c = tc.NetConn()
	}
	if tc, ok := c.(interface{ CloseWrite() error }); ok { // the socket, or a HelloConn over it
		tc.CloseWrite()
	}
}
