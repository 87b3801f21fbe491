package mblbvs

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"hash/fnv"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// TLS on a message-balanced (HTTP) virtual is a front stage around the
// engine: the client's socket is wrapped in a TLS server connection before
// the engine's session takes it, and each server connection in a TLS
// client connection as it is dialled. The engine then reads and writes
// plaintext through net.Conn as it does on its goroutine path, so every
// part of the http profile (framing, OneConnect, rules, persistence) runs
// unchanged. SSL::disable serverside sends a client's messages to their
// members in plaintext: the member handed to the engine carries plainBit,
// so the engine's connections, own or pooled, never mix the two kinds.
// A virtual whose only TLS is client-ssl serves its clients on the event
// loops once handshaken instead (tlsloop_linux.go).

// frontConn is a client connection of a client-ssl virtual: TLS over the
// socket, or the socket itself once a rule's SSL::disable turned TLS off
// before the handshake. It is not a syscall.Conn on purpose, so that the
// engine never writes to the socket under the TLS layer.
type frontConn struct {
	raw   *net.TCPConn
	tls   *tls.Conn
	clear bool // SSL::disable, or allow-non-ssl's plaintext client
	done  bool // handshake complete
	// peek: allow-non-ssl, and the client's first byte is still to tell
	// whether it speaks TLS (handshake).
	peek bool
	max  int // client-ssl's maximum-record-size; 0: the default
	// unclean: SSL::unclean_shutdown enable, the client's end goes
	// without close_notify (sslhello.go).
	unclean atomic.Bool
	// remake is the connection as another client-ssl profile's TLS would
	// make it, for SSL::profile in CLIENT_ACCEPTED (nothing is read from
	// the client before); nil unless a rule of the virtual chooses
	// profiles.
	remake func(*config.TLS) *frontConn
}

// NetConn is the client's own connection, under its TLS (the socket a
// rule's socket commands set options on).
func (c *frontConn) NetConn() net.Conn { return c.raw }

func (c *frontConn) Read(b []byte) (int, error) {
	if c.clear {
		return c.raw.Read(b)
	}
	return c.tls.Read(b)
}

func (c *frontConn) Write(b []byte) (int, error) {
	if c.clear {
		return c.raw.Write(b)
	}
	if c.max > 0 {
		return tlsprof.WriteRecords(c.tls, b, c.max)
	}
	return c.tls.Write(b)
}

// Close closes the socket; a TLS close_notify goes first on an orderly
// end (CloseWrite).
func (c *frontConn) Close() error                       { return c.raw.Close() }
func (c *frontConn) LocalAddr() net.Addr                { return c.raw.LocalAddr() }
func (c *frontConn) RemoteAddr() net.Addr               { return c.raw.RemoteAddr() }
func (c *frontConn) SetDeadline(t time.Time) error      { return c.raw.SetDeadline(t) }
func (c *frontConn) SetReadDeadline(t time.Time) error  { return c.raw.SetReadDeadline(t) }
func (c *frontConn) SetWriteDeadline(t time.Time) error { return c.raw.SetWriteDeadline(t) }
func (c *frontConn) SetLinger(sec int) error            { return c.raw.SetLinger(sec) }

// CloseWrite ends the client's direction in order: close_notify, then FIN.
func (c *frontConn) CloseWrite() error {
	if !c.clear && c.done && !c.unclean.Load() {
		c.tls.CloseWrite()
	}
	return c.raw.CloseWrite()
}

// clientTLS is the client's side of a client-ssl virtual, not yet
// handshaken (handshake does it, after CLIENT_ACCEPTED as on BIG-IP).
// With rules, the hellos' session IDs are kept for SSL::sessionid. head
// is read before the socket: what a virtual server that handed the client
// on read of it (Set.ServeHanded), nil when nothing. tag, for ssl
// persistence, names the session the client resumes or starts (nil: not
// wanted).
func clientTLS(c *net.TCPConn, head []byte, t *config.TLS, r *mblbRules, tag *tlsprof.SessionTag) net.Conn {
	if t == nil || t.Client == nil || t.AllowNonSSL && len(head) > 0 && head[0] != tlsHandshakeRecord {
		if len(head) > 0 {
			return &prefixConn{TCPConn: c, head: head}
		}
		return c
	}
	peek := t.AllowNonSSL && len(head) == 0
	var under net.Conn = c
	cfg := t.Client
	if r != nil {
		hc := tlsprof.NewHelloConn(c, true)
		if len(head) > 0 {
			hc.Unread(head)
		}
		cfg = r.keyLog(cfg, hc)
		if r.handlesEvent(rules.ClientSSLClientHello) {
			cfg = tlsprof.WithHello(cfg, r.clientHello)
		}
		cfg = withH2Switch(cfg, r)      // http2rules.go
		cfg = r.watchClient(cfg, hc, t) // sslhello.go
		under = hc
	} else if len(head) > 0 {
		under = &prefixConn{TCPConn: c, head: head}
	}
	under, cfg = t.WatchClient(under, cfg)
	if tag != nil {
		cfg = tlsprof.TagSessions(cfg, tag)
	}
	fc := &frontConn{raw: c, tls: tls.Server(under, cfg), peek: peek, max: t.ClientMaxRecord}
	if t.Choosable != nil && r != nil {
		fc.remake = func(nt *config.TLS) *frontConn {
			n, _ := clientTLS(c, head, nt, r, tag).(*frontConn)
			return n
		}
	}
	return fc
}

// tlsHandshakeRecord is the first byte of a TLS client's first record.
const tlsHandshakeRecord = 0x16

// clientHello runs CLIENTSSL_CLIENTHELLO over the client's hello, which
// SSL:: commands read meanwhile; false means the rule ended the client.
func (r *mblbRules) clientHello(h *tls.ClientHelloInfo) bool {
	r.f.hello = h
	defer func() { r.f.hello = nil }()
	return r.sslEvent(rules.ClientSSLClientHello) && r.awaitResume() // SSL::handshake hold (sslhello.go)
}

// clientSSLEvents runs CLIENTSSL_CLIENTCERT (when the client sent a
// certificate) and CLIENTSSL_HANDSHAKE after the client's handshake;
// false means a rule ended the client.
func (f *mblbFlow) clientSSLEvents(tc *tls.Conn) bool {
	r := f.rr
	if r == nil {
		return true
	}
	if len(tc.ConnectionState().PeerCertificates) > 0 && !r.sslEvent(rules.ClientSSLClientCert) {
		return false
	}
	return r.sslEvent(rules.ClientSSLHandshake)
}

// handshake completes the client's TLS handshake within the profile's
// handshake-timeout (a client of allow-non-ssl whose first byte is not a
// handshake record goes on in plaintext instead), then runs CLIENTSSL_CLIENTCERT (when the client sent
// a certificate) and CLIENTSSL_HANDSHAKE; false means the client is gone
// (and was reset).
func (f *mblbFlow) handshake(conn net.Conn, t *config.TLS) bool {
	fc, ok := conn.(*frontConn)
	if !ok || fc.clear {
		return true
	}
	if ct := f.clientTLS; ct != nil && fc.remake != nil { // SSL::profile in CLIENT_ACCEPTED
		if n := fc.remake(ct); n != nil {
			fc.tls, fc.peek, fc.max, fc.remake = n.tls, n.peek, n.max, nil
			t = ct
		}
	}
	fc.raw.SetDeadline(time.Now().Add(t.Handshake()))
	if fc.peek { // allow-non-ssl
		b, err := rawsock.PeekByte(fc.raw)
		if err != nil {
			fc.raw.SetLinger(0)
			fc.raw.Close()
			return false
		}
		if b != tlsHandshakeRecord {
			fc.raw.SetDeadline(time.Time{})
			fc.clear = true
			if r := f.rr; r != nil {
				return r.sslEvent(rules.ClientSSLPassthrough) // allow-non-ssl: the client goes on in plaintext
			}
			return true
		}
	}
	if err := f.vs.Snap.Load().NoteClientTLS(fc.tls, t.ClientHandshake(fc.tls.Handshake), &f.cssl); err != nil {
		f.mv.env.Rst.Reset(rstArea, f.Local, f.Client, rstcause.TLSHandshake)
		fc.raw.SetLinger(0)
		fc.raw.Close()
		return false
	}
	fc.raw.SetDeadline(time.Time{})
	fc.done = true
	f.noteSession()
	if t.ServerUseSNI && t.Server != nil {
		if sni := fc.tls.ConnectionState().ServerName; sni != "" {
			f.mv.clientSNI.Store(f.Client, sni)
			f.sni = sni
			f.sniTag.Store(sniTagOf(sni))
		}
	}
	if t.C3D != nil && t.Server != nil {
		if err := f.delegate(t.C3D, fc.tls.ConnectionState().PeerCertificates); err != nil {
			f.mv.env.Log.Warn("ssl c3d", "virtual", f.vs.Name, "error", err)
		}
	}
	return f.clientSSLEvents(fc.tls)
}

// sslEvent runs one of the TLS events; false means the rule ended the
// client.
func (r *mblbRules) sslEvent(ev rules.Event) bool {
	prog := irules.Program(r.rules)
	if prog == nil || !prog.Handles(ev) {
		return true
	}
	r.mu.Lock()
	err := r.runEvent(ev)
	v := r.verdict
	r.mu.Unlock()
	return r.goOn(err, v)
}

// ForwardProxyPolicy implements rules.ForwardProxyConn: the SSL forward
// proxy's bypass or intercept decision for this client, read and changed
// in CLIENTSSL_CLIENTHELLO, before it is acted on.
func (r *mblbRules) ForwardProxyPolicy(set string) (string, error) {
	b := r.f.fwdBypass
	if b == nil {
		if tc := r.snap.Cfg.TLS; tc == nil || tc.Forward == nil {
			return "", errors.New("SSL::forward_proxy: the virtual server's SSL profiles do not have ssl-forward-proxy enabled")
		}
		return "", errors.New("SSL::forward_proxy policy: the decision is made in CLIENTSSL_CLIENTHELLO")
	}
	switch set {
	case "bypass":
		*b = true
	case "intercept":
		*b = false
	}
	if *b {
		return "bypass", nil
	}
	return "intercept", nil
}

// SSL implements rules.SSLConn: the client side's TLS once its handshake
// is done. The server side's connections belong to the engine (one per
// member, or shared), so no single one answers for the client.
func (r *mblbRules) SSL(s rules.Side) (*rules.SSLInfo, bool) {
	if info, ok := r.helloSSL(s); ok { // a hello or certificate event (sslhello.go)
		return info, true
	}
	if s == rules.ServerSide && r.f.stls != nil {
		return irules.SSLInfo(r.f.stls, r.f.stlsCfg, rules.ServerSide), true
	}
	ct := r.snap.Cfg.TLS
	if r.f.clientTLS != nil {
		ct = r.f.clientTLS
	}
	if s == rules.ClientSide && r.f.loopTLS != nil {
		return irules.SSLInfo(r.f.loopTLS, ct, rules.ClientSide), true
	}
	if s == rules.ClientSide && r.f.quicTLS != nil {
		return irules.QUICInfo(*r.f.quicTLS, ct), true // an HTTP/3 client (http3.go)
	}
	fc := r.f.front
	if s == rules.ClientSide && r.f.hello != nil {
		return irules.HelloInfo(r.f.hello, ct), true
	}
	if s != rules.ClientSide || fc == nil || fc.clear || !fc.done {
		return nil, false
	}
	return irules.SSLInfo(fc.tls, ct, rules.ClientSide), true
}

// SSLDisable implements rules.SSLConn: on the client side before the
// handshake (CLIENT_ACCEPTED), the client then speaks plaintext; on the
// server side, the client's next messages go to their members in
// plaintext (serverClear) until SSL::enable serverside.
func (r *mblbRules) SSLDisable(s rules.Side) error {
	if s == rules.ServerSide {
		return r.serverSSL(true)
	}
	if r.f.loopFront {
		if r.connPhase() != phaseAccepted {
			return errors.New("SSL::disable: the client's handshake is done; disable it in CLIENT_ACCEPTED")
		}
		r.f.loopClear = true
		return nil
	}
	fc := r.f.front
	if fc == nil {
		return errors.New("SSL::disable: the virtual server has no client-ssl profile")
	}
	if fc.done {
		return errors.New("SSL::disable: the client's handshake is done; disable it in CLIENT_ACCEPTED")
	}
	fc.clear = true
	return nil
}

// SSLEnable implements rules.SSLConn: it undoes SSLDisable, on the client
// side while its handshake has not started, on the server side for the
// client's next messages.
func (r *mblbRules) SSLEnable(s rules.Side) error {
	if s == rules.ServerSide {
		return r.serverSSL(false)
	}
	if r.f.loopFront {
		if r.connPhase() != phaseAccepted && r.f.loopClear {
			return errors.New("SSL::enable: the client already speaks plaintext; enable it in CLIENT_ACCEPTED")
		}
		r.f.loopClear = false
		return nil
	}
	fc := r.f.front
	if fc == nil {
		return errors.New("SSL::enable: the virtual server has no client-ssl profile")
	}
	if fc.clear && (r.httpEv != rules.RuleInit || r.ev != config.EventClientAccepted) { // r.ev names the event only outside runEvent
		return errors.New("SSL::enable: the client already speaks plaintext; enable it in CLIENT_ACCEPTED")
	}
	fc.clear = false
	return nil
}

// SSLProfile implements rules.SSLProfileConn. A server-ssl profile
// chosen in SERVER_CONNECTED is that connection's (closed after its
// response rather than lent by OneConnect); chosen earlier (CLIENT_ACCEPTED,
// a CLIENTSSL_ event, HTTP_REQUEST, LB_SELECTED), it is the client's for
// its following messages, whose members are marked with the profile
// (profTag) so that the engine's connections, own or pooled, made with
// one profile never carry a message that chose another. A client-ssl
// profile is chosen in CLIENT_ACCEPTED, before the handshake.
func (r *mblbRules) SSLProfile(name string) error {
	base := r.snap.Cfg.TLS
	if ft := r.f.sslTLS.Load(); ft != nil {
		base = ft
	}
	c, err := base.Choose(name)
	if err != nil {
		return err
	}
	if !c.Server {
		return r.clientProfile(base, c)
	}
	if p := r.beforeTLS; p != nil {
		p.tls = base.With(c)
		return nil
	}
	if r.serverDecided() {
		return errors.New("SSL::profile: the server connection's handshake is already done; choose the server-ssl profile in CLIENT_ACCEPTED, HTTP_REQUEST, LB_SELECTED or SERVER_CONNECTED")
	}
	r.f.sslTLS.Store(base.With(c))
	r.f.profTag.Store(c.Tag)
	return nil
}

// clientProfile is SSLProfile for a client-ssl profile: the client's
// handshake, not started yet (CLIENT_ACCEPTED), uses it.
func (r *mblbRules) clientProfile(base *config.TLS, c *config.Choosable) error {
	const late = "SSL::profile: the client's handshake has started; choose the client-ssl profile in CLIENT_ACCEPTED"
	if r.f.loopFront {
		if r.connPhase() != phaseAccepted {
			return errors.New(late)
		}
	} else if fc := r.f.front; fc == nil || fc.done || fc.remake == nil || r.httpEv != rules.RuleInit || r.ev != config.EventClientAccepted {
		return errors.New(late)
	}
	r.f.clientTLS = base.With(c)
	return nil
}

// serverSSL is SSL::disable serverside (clear) or SSL::enable
// serverside. The server connection of a message is chosen, and its TLS
// handshake done, before SERVER_CONNECTED runs: from then on until the
// response the choice is made, so a change there is refused unless it
// changes nothing.
func (r *mblbRules) serverSSL(clear bool) error {
	if p := r.beforeTLS; p != nil {
		p.clear = clear
		return nil
	}
	if r.f.serverClear.Load() == clear {
		return nil
	}
	if r.serverDecided() {
		verb := "SSL::enable"
		if clear {
			verb = "SSL::disable"
		}
		return fmt.Errorf("%s serverside: the server connection's handshake is already done; use it in CLIENT_ACCEPTED, HTTP_REQUEST, LB_SELECTED or SERVER_CONNECTED", verb)
	}
	r.f.serverClear.Store(clear)
	return nil
}

// inClientHandshake reports whether the running event is one of the
// client handshake's (CLIENTSSL_HANDSHAKE, CLIENTSSL_CLIENTCERT): they
// run after CLIENT_ACCEPTED and before the session reads its first
// request, so a pool chosen there is the client's for its requests, as
// on BIG-IP (SNI routing).
func (r *mblbRules) inClientHandshake() bool {
	return r.hx == nil && r.d == nil && (r.httpEv == rules.ClientSSLHandshake || r.httpEv == rules.ClientSSLClientCert)
}

// serverDecided reports whether the running event comes after the
// server connection of its message was chosen: the server-side events.
func (r *mblbRules) serverDecided() bool {
	switch r.httpEv {
	case rules.RuleInit: // an event of the proxy hook (run), named by r.ev
		return r.ev == config.EventServerConnected || r.ev == config.EventServerData || r.ev == config.EventServerClosed
	case rules.HTTPRequest, rules.HTTPRequestData, rules.ClientSSLHandshake, rules.ClientSSLClientCert:
		return false
	}
	return true
}

// plainBit marks, in the member ID handed to the engine, a member chosen
// for a message that goes in plaintext although the virtual has a
// server-ssl profile (SSL::disable serverside). The engine keeps server
// connections by member ID, a client's own as OneConnect's shared ones,
// so a plaintext connection and a TLS one to the same member are never
// taken for one another. memberID and nodeID leave the bit clear.
const plainBit mblb.MemberID = 1 << 62

// pickTLS is the engine's Pick: pick, and the member marked plainBit when
// the client's rules turned the server side's TLS off.
func (mv *VS) pickTLS(c mblb.Choice) (mblb.Member, error) {
	f, _ := c.Tag.(*mblbFlow)
	var tag mblb.MemberID
	if f != nil {
		tag = mblb.MemberID(f.sniTag.Load() ^ f.profTag.Load())
	}
	for _, id := range c.Exclude {
		if id&plainBit != 0 || tag != 0 { // members that failed, whichever way they were spoken to
			ex := make([]mblb.MemberID, len(c.Exclude))
			for j, id := range c.Exclude {
				ex[j] = id&^plainBit ^ tag
			}
			c.Exclude = ex
			break
		}
	}
	m, err := mv.pick(c)
	if err == nil && f != nil {
		m.ID ^= mblb.MemberID(f.sniTag.Load() ^ f.profTag.Load()) // LB_SELECTED may have chosen the profile
		if f.serverClear.Load() {
			m.ID |= plainBit
		}
	}
	return m, err
}

// sniTagOf is the mark a member's ID carries for the clients that sent
// the server name sni, on a virtual with serverssl-use-sni: the engine
// keeps server connections by member ID, so a connection whose
// handshake sent one name is never lent (OneConnect) to a client that
// sent another [M]. It leaves the ID's two top bits (node, plainBit) as
// they are; never 0.
func sniTagOf(sni string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(sni))
	return max(h.Sum64()&(1<<62-1), 1)
}

// delegate keeps, for a C3D virtual, the certificate its member
// connections are shown a copy of (sslfwd.C3D.Chosen: the client's
// certificate peer, or the fallback, after the rules' SSL::c3d), by the
// client's address, and marks the members picked for the client with it
// as sniTagOf marks them with the server name: a member connection
// authenticated as one client is never lent (OneConnect) to another.
func (f *mblbFlow) delegate(d *sslfwd.C3D, peer []*x509.Certificate) error {
	if f.c3d == nil {
		f.c3d = new(flowC3D)
	}
	c := f.c3d
	c.peer = peer
	src, err := d.Chosen(peer, &c.rule)
	if err != nil || src == nil {
		return err
	}
	ch := &c3dChoice{src: src}
	k := c.rule.Key()
	if k != ([32]byte{}) { // SSL::c3d extension, cert_lifespan, cert_start_date
		r := c.rule
		r.Extensions = slices.Clone(r.Extensions)
		ch.rule = &r
	}
	c.src = ch
	f.mv.clientC3D.Store(f.Client, ch)
	h := fnv.New64a()
	h.Write([]byte(f.sni))
	h.Write([]byte{0})
	h.Write(src.Raw)
	h.Write(src.RawSubject)
	h.Write(k[:])
	f.sniTag.Store(max(h.Sum64()&(1<<62-1), 1))
	return nil
}

// C3DCert implements rules.C3DConn: the client's next member
// connections show a copy of c instead of its certificate.
func (r *mblbRules) C3DCert(c *x509.Certificate) error {
	return r.c3d(func(cr *sslfwd.C3DRule) error { cr.Cert = c; return nil })
}

// C3DCommonName implements rules.C3DConn: the client's next member
// connections show a subject with the common name cn.
func (r *mblbRules) C3DCommonName(cn string) error {
	return r.c3d(func(cr *sslfwd.C3DRule) error { cr.CN, cr.SetCN = cn, true; return nil })
}

// C3DExtension implements rules.C3DConn: the client's next member
// connections are shown a certificate with the extension added.
func (r *mblbRules) C3DExtension(oid string, value []byte) error {
	return r.c3d(func(cr *sslfwd.C3DRule) error { return cr.AddExtension(oid, value) })
}

// C3DLifespan implements rules.C3DConn (SSL::c3d cert_lifespan).
func (r *mblbRules) C3DLifespan(hours string) error {
	return r.c3d(func(cr *sslfwd.C3DRule) error { return cr.SetLifespan(hours) })
}

// C3DStartDate implements rules.C3DConn (SSL::c3d cert_start_date).
func (r *mblbRules) C3DStartDate(date string) error {
	return r.c3d(func(cr *sslfwd.C3DRule) error { return cr.SetStart(date) })
}

// c3d applies set to the flow's SSL::c3d choices and delegates again
// with them.
func (r *mblbRules) c3d(set func(*sslfwd.C3DRule) error) error {
	t := r.snap.Cfg.TLS
	if t == nil || t.C3D == nil || t.Server == nil {
		return errors.New("SSL::c3d: the virtual server's SSL profiles do not have ssl-c3d enabled")
	}
	f := r.f
	if f.c3d == nil {
		f.c3d = new(flowC3D)
	}
	if err := set(&f.c3d.rule); err != nil {
		return err
	}
	// Before the client's handshake (CLIENT_ACCEPTED) peer is nil, and
	// the handshake's delegate decides again.
	return f.delegate(t.C3D, f.c3d.peer)
}

// flowC3D is a client's delegation: what its rules chose (SSL::c3d),
// its certificates, and the certificate kept in mv.clientC3D until
// finish (nil: none).
type flowC3D struct {
	rule sslfwd.C3DRule
	peer []*x509.Certificate
	src  *c3dChoice
}

// c3dChoice is what a client's member connections are shown a copy of:
// the certificate, and the rules' forging choices when they made any.
type c3dChoice struct {
	src  *x509.Certificate
	rule *sslfwd.C3DRule
}

// trackTLS makes f findable by its client's address while it runs, so
// that a server connection dialled for it runs its SERVER_CONNECTED
// before the handshake and its SERVERSSL_HANDSHAKE after; the returned
// function forgets it.
func (mv *VS) trackTLS(f *mblbFlow, t *config.TLS) func() {
	if t == nil || t.Server == nil || f.rr == nil ||
		!f.rr.handlesEvent(rules.ServerSSLHandshake) && !f.rr.handlesEvent(rules.ServerSSLClientHelloSend) &&
			!f.rr.handlesEvent(rules.ServerSSLServerHello) && !f.rr.handlesEvent(rules.ServerSSLServerCert) && !irules.Program(f.rr.rules).ChecksPeers() &&
			!f.rr.rules.Handles(config.EventServerConnected) && t.Choosable == nil {
		return func() {}
	}
	mv.tlsClients.Store(f.Client, f)
	return func() { mv.tlsClients.CompareAndDelete(f.Client, f) }
}

// keyLog is cfg for a connection over hc, with its key material kept
// when r's rules read it (SSL::sessionsecret, SSL::tls13_secret).
func (r *mblbRules) keyLog(cfg *tls.Config, hc *tlsprof.HelloConn) *tls.Config {
	if p := irules.Program(r.rules); p != nil && p.KeepsSecrets() {
		return tlsprof.WithKeyLog(cfg, hc.KeepKeys())
	}
	return cfg
}

func (r *mblbRules) handlesEvent(ev rules.Event) bool {
	p := irules.Program(r.rules)
	return p != nil && p.Handles(ev)
}

// serverHandshake runs SERVERSSL_HANDSHAKE for the client a new server
// connection was dialled for, the connection's TLS visible to SSL::
// commands on the server side; a rule that ends the client closes it.
func (mv *VS) serverHandshake(client netip.AddrPort, c net.Conn, t *config.TLS) {
	v, ok := mv.tlsClients.Load(client)
	tc, isTLS := c.(*tls.Conn)
	if !ok || !isTLS {
		return
	}
	r := v.(*mblbFlow).rr
	r.mu.Lock()
	r.f.stls, r.f.stlsCfg = tc, t
	err := r.runEvent(rules.ServerSSLHandshake)
	r.f.stls, r.f.stlsCfg = nil, nil
	verdict := r.verdict
	r.mu.Unlock()
	if err != nil || verdict != irules.GoOn {
		// At once, not on a goroutine of its own: the dial that runs
		// this (serverTLS) then finds the client closed and sends it
		// nothing, where a later close let the member's answer reach
		// the client first. The dial holds no lock Close takes.
		r.f.sess.Close(err != nil || verdict == irules.Reject)
	}
}

// errHelloSendRefused is a server connection's failure when the rule
// ended its client in SERVERSSL_CLIENTHELLO_SEND.
var errHelloSendRefused = errors.New("the rule ended the client before the server-side hello")

// serverHelloSend runs SERVERSSL_CLIENTHELLO_SEND for the client a new
// server connection was dialled for, just before the connection's hello
// leaves; false means the rule ended the client (closed at once, as
// serverHandshake does). f is the client's flow when it is tracked
// (trackTLS), for the handshake to follow.
func (mv *VS) serverHelloSend(client netip.AddrPort) (f *mblbFlow, goOn bool) {
	v, ok := mv.tlsClients.Load(client)
	if !ok {
		return nil, true
	}
	f = v.(*mblbFlow)
	r := f.rr
	if !r.handlesEvent(rules.ServerSSLClientHelloSend) {
		return f, true
	}
	r.mu.Lock()
	err := r.runEvent(rules.ServerSSLClientHelloSend)
	verdict := r.verdict
	r.mu.Unlock()
	if err != nil || verdict != irules.GoOn {
		r.f.sess.Close(err != nil || verdict == irules.Reject)
		return f, false
	}
	return f, true
}

// serverTLS makes c, a new server connection to m for the client at
// client, TLS for a server-ssl virtual: it handshakes within ctx and the
// profile's handshake-timeout, counts the handshake and the connection at
// the server-ssl profile, and runs SERVERSSL_HANDSHAKE. A connection for
// a message the rules sent in plaintext (plainBit) stays as it is.
func (mv *VS) serverTLS(ctx context.Context, client netip.AddrPort, c *net.TCPConn, t *config.TLS, m mblb.Member) (net.Conn, error) {
	if t == nil || t.Server == nil || m.ID&plainBit != 0 {
		return c, nil
	}
	p := mv.connectedBeforeTLS(client, c)
	if p.clear {
		return c, nil
	}
	f, goOn := mv.serverHelloSend(client)
	if !goOn {
		c.SetLinger(0)
		c.Close()
		return nil, errHelloSendRefused
	}
	if p.tls != nil { // SSL::profile in SERVER_CONNECTED: this connection's
		t = p.tls
	} else if f != nil {
		if ft := f.sslTLS.Load(); ft != nil { // the client's, its member ID tagged (pickTLS)
			t = ft
		}
	}
	ctx, cancel := context.WithTimeout(ctx, t.Handshake())
	defer cancel()
	hc := tlsprof.NewHelloConn(c, false) // SERVERSSL_HANDSHAKE's SSL::sessionid
	cfg := t.Server.Config
	if t.ServerUseSNI || t.Forward != nil { // a forward proxy always sends the client's name (sslfwd.go)
		if sni, ok := mv.clientSNI.Load(client); ok {
			cfg = t.Server.ForServerName(sni.(string))
		}
	}
	if t.C3D != nil {
		if v, ok := mv.clientC3D.Load(client); ok {
			ch := v.(*c3dChoice)
			c3d, err := t.C3D.ServerSide(cfg, ch.src, ch.rule, time.Now())
			if err != nil {
				c.SetLinger(0)
				c.Close()
				return nil, err
			}
			cfg = c3d
		}
	}
	if f != nil {
		cfg = f.rr.keyLog(cfg, hc)
		cfg = mv.memberChecks(f, cfg, hc, t) // sslhello.go
	}
	sc := tls.Client(t.WatchMember(hc, cfg), cfg)
	if err := mv.vs.Prof.ServerSSL.Note(sc, t.ServerFailed(sc, t.ServerHandshake(func() error { return sc.HandshakeContext(ctx) }))); err != nil {
		if !t.ServerPublishes() {
			mv.vs.Snap.Load().SSLLog.HandshakeFailed(sc, false, err)
		}
		mv.ranConnected.Delete(rawsock.AddrPortOf(c.LocalAddr()))
		c.SetLinger(0)
		c.Close()
		return nil, err
	}
	mv.serverHandshake(client, sc, t)
	out := &heldConn{Conn: sc, unshared: p.tls != nil}
	out.held.Hold(&mv.vs.Prof.ServerSSL)
	return out, nil
}

// pendingTLS is a server-ssl connection's TLS while SERVER_CONNECTED runs
// before its handshake: clear once the rule said SSL::disable serverside,
// tls the TLS of the server-ssl profile its SSL::profile chose (nil: none).
type pendingTLS struct {
	clear bool
	tls   *config.TLS
}

// connectedBeforeTLS runs SERVER_CONNECTED for c, a new server connection
// of a server-ssl virtual dialled for the client at client, before its
// handshake, as BIG-IP orders them, when the client's rules handle the
// event; it reports whether the rule turned this connection's TLS off
// (SSL::disable serverside, or SSL::disable in the event). That choice is
// the connection's: it keeps it while OneConnect lends it to later
// requests for the same member (BIG-IP's server-side flow keeps its
// filters, as we read it; unverified), and the client's next connections
// start with TLS again
// (SSL::disable serverside in CLIENT_ACCEPTED, HTTP_REQUEST or LB_SELECTED
// is the client's, for its following requests). legOpened then does not
// run the event again (ranConnected). A rule that ends the client resets
// it, as in SERVER_CONNECTED after the handshake; the connection goes on.
func (mv *VS) connectedBeforeTLS(client netip.AddrPort, c *net.TCPConn) *pendingTLS {
	v, ok := mv.tlsClients.Load(client)
	if !ok {
		return &noPending
	}
	r := v.(*mblbFlow).rr
	if !r.rules.Handles(config.EventServerConnected) {
		return &noPending
	}
	local := rawsock.AddrPortOf(c.LocalAddr())
	mv.ranConnected.Store(local, struct{}{})
	p := &pendingTLS{}
	r.mu.Lock()
	r.server, r.local, r.beforeTLS = rawsock.AddrPortOf(c.RemoteAddr()), local, p
	err := r.run(config.EventServerConnected, nil)
	r.server, r.local, r.beforeTLS = netip.AddrPort{}, netip.AddrPort{}, nil
	verdict := r.verdict
	r.mu.Unlock()
	if err != nil || verdict != irules.GoOn {
		r.rstConnected(err)
		r.f.sess.Close(true) // at once, as in serverHandshake
	}
	return p
}

// noPending is connectedBeforeTLS's answer when SERVER_CONNECTED did not
// run: nothing chosen. Read only.
var noPending pendingTLS

// heldConn is a server-ssl connection of the engine, held in the
// profile's current connections until the engine closes it (every end of
// a server connection does).
type heldConn struct {
	*tls.Conn
	held state.SSLHeld
	// unshared: SSL::profile in SERVER_CONNECTED made it with a profile
	// its member ID does not say (mblb.Unshared).
	unshared bool
}

// Unshared implements mblb.Unshared: OneConnect closes the connection
// after its response instead of lending it to a request that chose
// another server-ssl profile, or none.
func (c *heldConn) Unshared() bool { return c.unshared }

func (c *heldConn) Close() error {
	c.held.Release()
	return c.Conn.Close()
}
