package mblbvs

import (
	"crypto/tls"
	"io"
	"net"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/sslfwd"
	"github.com/openltm/openltm/rules"
)

// SSL forward proxy on an http virtual (config.TLS.Forward): the client's
// hello is read for its server name before anything else; the bypass
// lists decide. The engine opens its member connections per request,
// after the client's handshake, so the origin's certificate is fetched
// first by a connection of the proxy's own (the probe) to the member the
// pool's balancing picks (the address the client asked for on a
// translate-address disabled virtual), handshaken with the server-ssl
// profile and the hello's name, its certificate checked as the profile
// says; then the probe is closed and the client answered with the
// certificate forged for the origin's, and the engine serves the client
// as on any client-ssl virtual, its member connections sending the
// hello's name. A bypassed client is connected to that member and its
// bytes copied both ways, the hello first.

// serveForward runs one client of an http virtual with the SSL forward
// proxy to its end.
func (mv *VS) serveForward(snap *state.VirtualSnap, c *net.TCPConn, head []byte) {
	f, opts := mv.newFlow(snap, rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr()))
	mv.noteArrival(snap, f, c, &opts) // arrival.go
	tc := snap.Cfg.TLS
	fwd := tc.Forward
	// The session is made now (its TLS once the certificate is forged):
	// CLIENT_ACCEPTED runs first, as on any virtual, and may end it.
	front := &frontConn{raw: c, max: tc.ClientMaxRecord}
	f.front = front
	f.sess = mv.eng.NewClientConn(front, opts)
	sess := f.sess
	f.Closer = func(reset bool) { sess.Close(reset) }
	mv.env.Table.Add(&f.Flow)
	defer f.finish()
	defer mv.trackTLS(f, tc)() // tls.go
	if f.rr != nil && !f.rr.accepted() {
		return
	}
	reset := func() { sess.Close(true) }
	deadline := time.Now().Add(tc.Handshake())
	raw, hello, err := sslfwd.ReadHello(c, head, deadline)
	if err != nil {
		reset()
		return
	}
	dst := f.Local
	if snap.Cfg.TranslateAddress {
		if _, dst, err = state.LBSelect(snap.Pool, nil); err != nil {
			reset()
			return
		}
	}
	sni := hello.ServerName
	bypass := fwd.Bypasses().Decide(f.Client.Addr(), f.Local.Addr(), sni)
	if r := f.rr; r != nil && r.handlesEvent(rules.ClientSSLClientHello) {
		// CLIENTSSL_CLIENTHELLO over the hello, with the bypass lists'
		// decision, which SSL::forward_proxy policy may change.
		f.fwdBypass = &bypass
		ok := r.clientHello(hello)
		f.fwdBypass = nil
		if !ok {
			return
		}
	}
	// intercept answers the client with cfg's forged certificate and
	// hands it to the engine.
	intercept := func(cfg *tls.Config) {
		if sni != "" {
			mv.clientSNI.Store(f.Client, sni) // the engine's member connections send it (serverTLS)
			f.sni = sni
			f.sniTag.Store(sniTagOf(sni))
		}
		front.tls = tls.Server(&prefixConn{TCPConn: c, head: raw}, cfg)
		c.SetDeadline(deadline)
		if err := snap.NoteClientTLS(front.tls, tc.ClientHandshake(front.tls.Handshake), &f.cssl); err != nil {
			sess.Close(true)
			return
		}
		c.SetDeadline(time.Time{})
		front.done = true
		if !f.clientSSLEvents(front.tls) {
			return
		}
		sess.Run()
	}
	if !bypass && sni == "" {
		// cert-lookup-by-ipaddr-port: no probe; the engine's member
		// connections still check the origin's certificate.
		if cfg := fwd.Lookup(dst, time.Now()); cfg != nil {
			intercept(cfg)
			return
		}
	}
	oc, done, err := mv.dialOwn(snap, f.Client, dst) // lsn.go
	if err != nil {
		reset()
		return
	}
	defer func() { done() }()
	if !bypass {
		probe := tls.Client(oc, fwd.ServerSide(tc.Server.ForServerName(sni)))
		oc.SetDeadline(deadline)
		err := mv.vs.Prof.ServerSSL.Note(probe, tc.ServerHandshake(probe.Handshake))
		oc.Close()
		done()
		if err != nil {
			if !fwd.Bypassable(err) {
				reset()
				return
			}
			if oc, done, err = mv.dialOwn(snap, f.Client, dst); err != nil {
				done = func() {}
				reset()
				return
			}
			bypass = true
		} else {
			cfg, err := fwd.ClientConfigAt(dst, sslfwd.PeerLeaf(probe), time.Now())
			if err != nil {
				reset()
				return
			}
			intercept(cfg)
			return
		}
	}
	front.clear = true // a bypassed client's bytes are not the engine's
	if r := f.rr; r != nil && !r.sslEvent(rules.ClientSSLPassthrough) {
		oc.Close()
		return
	}
	mv.passThrough(f, c, oc, raw, snap.Idle)
}

// passThrough copies a bypassed client's bytes (first what was read of
// them) to the member and the member's back until both directions ended;
// a direction quiet for idle (0: never) ends both.
func (mv *VS) passThrough(f *mblbFlow, c, oc *net.TCPConn, first []byte, idle time.Duration) {
	defer oc.Close()
	if _, err := oc.Write(first); err != nil {
		c.SetLinger(0)
		c.Close()
		return
	}
	f.Received(len(first))
	done := make(chan struct{})
	go func() {
		defer close(done)
		pipe(c, oc, idle, f.Sent, f.Touch)
		c.CloseWrite()
	}()
	pipe(oc, c, idle, f.Received, f.Touch)
	oc.CloseWrite()
	<-done
	c.Close()
}

// pipe copies src to dst, counting each read with count.
func pipe(dst, src *net.TCPConn, idle time.Duration, count func(int), touch func(int64)) {
	buf := make([]byte, 32<<10)
	for {
		if idle > 0 {
			src.SetReadDeadline(time.Now().Add(idle))
		}
		n, err := src.Read(buf)
		if n > 0 {
			count(n)
			touch(time.Now().UnixNano())
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if err != io.EOF {
				dst.SetLinger(0)
				dst.Close()
				src.Close()
			}
			return
		}
	}
}
