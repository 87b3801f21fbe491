package l4

import (
	"crypto/tls"
	"time"

	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/rules"
)

// SSL forward proxy on a standard virtual (config.TLS.Forward): the
// client's hello is read first, for its server name; the bypass lists
// decide whether the connection is intercepted. Either way the member
// (for a transparent virtual, the address the client asked for) is
// connected as for any flow. Bypassed, the hello goes on as it was and
// the flow is a plain one. Intercepted, the member's handshake (server-
// ssl, sending the hello's name, checking the member's certificate) comes
// first, then the client's, answered with the certificate forged for the
// member's, and the flow moves the plaintext as any TLS flow.

// serveForward runs a forward proxy's flow to its end.
func (pr *proxied) serveForward() {
	tc := pr.snap.Cfg.TLS
	fwd := tc.Forward
	head, hello, err := sslfwd.ReadHello(pr.client, pr.head, time.Now().Add(tc.Handshake()))
	pr.head = nil
	if err != nil {
		pr.finish(true) // not TLS, or nothing in time: reset, as a failed handshake
		return
	}
	bypass := fwd.Bypasses().Decide(pr.Client.Addr(), pr.Local.Addr(), hello.ServerName)
	sc, err := pr.connect()
	if err != nil {
		pr.finish(true)
		return
	}
	if !bypass {
		var ok bool
		if bypass, ok = pr.forwardServer(sc, hello.ServerName); !ok && !bypass {
			pr.finish(true)
			return
		}
		if bypass && !pr.redial(sc) {
			pr.finish(true)
			return
		}
	}
	if bypass {
		if pr.rs != nil && !pr.runSSLEvent(rules.ClientSSLPassthrough) { // the client's TLS passes through
			return
		}
		if !pr.passHead(sc, head) {
			pr.finish(true)
			return
		}
	} else {
		cfg, err := fwd.ClientConfig(sslfwd.PeerLeaf(sc.tls), time.Now())
		if err != nil {
			pr.e.env.Log.Warn("ssl forward proxy", "virtual", pr.vs.Name, "error", err)
			pr.finish(true)
			return
		}
		conn := tls.Server(clientTLSConn(pr.client, nil, head), cfg)
		pr.client.SetDeadline(time.Now().Add(tc.Handshake()))
		if err := pr.snap.NoteClientTLS(conn, tc.ClientHandshake(conn.Handshake), &pr.cssl); err != nil {
			pr.finish(true)
			return
		}
		pr.client.SetDeadline(time.Time{})
		pr.ctls = conn
	}
	pr.legsLeft.Store(2)
	go pr.copy(sc.conn, pr.client, false, sc)
	pr.copy(pr.client, sc.conn, true, sc)
}

// forwardServer makes sc's connection TLS for the hello's server name
// sni, the member's certificate checked as the server-ssl profile says.
// ok reports success; with bypass-on-handshake-alert, a member that
// answered the hello with an alert reports bypass instead, and with
// bypass-on-client-cert-fail one that asked for a client certificate.
func (pr *proxied) forwardServer(sc *serverConn, sni string) (bypass, ok bool) {
	tc := pr.snap.Cfg.TLS
	conn := tls.Client(sc.conn, tc.Forward.ServerSide(tc.Server.ForServerName(sni)))
	sc.conn.SetDeadline(time.Now().Add(tc.Handshake()))
	err := pr.vs.Prof.ServerSSL.Note(conn, tc.ServerHandshake(conn.Handshake))
	if err != nil {
		return tc.Forward.Bypassable(err), false
	}
	sc.conn.SetDeadline(time.Time{})
	sc.tls = conn
	sc.ssl.Hold(&pr.vs.Prof.ServerSSL)
	return false, true
}

// redial replaces sc's connection, which the member ended after its
// alert, by a new one to the same member from the same source address
// (bypass-on-handshake-alert), for the client's hello to go through;
// with an lsn pool, from a new translation (the old one's port may
// linger in TIME-WAIT toward the same member).
func (pr *proxied) redial(sc *serverConn) bool {
	dst := sc.leg.Server
	sc.conn.Close()
	c, err := pr.dialServer(dst, sc.pool) // lsn.go
	if err != nil {
		return false
	}
	sc.conn = c
	return !pr.ended.Load()
}
