package l4

import (
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/rulelisten"
	"github.com/openltm/openltm/rules"
)

// A rule's listen opens a related listener (dataplane/rulelisten) for a
// standard virtual's connection. The connection it takes is a flow of
// the same virtual server: admitted and counted as the virtual's, with
// its client-side tcp settings, idle timeout, source address
// translation and connection table entry, and proxied to the rule's
// server (as a rule's node decision is, no pool, no member accounting).
// It runs none of the virtual's rules and none of its other profiles
// (client-ssl, a protocol gateway): it is the related flow, not a new
// client of the virtual [M: F5 documents nothing of it; its later
// XLAT::listen has to be told -inherit-main-rules to run them]. A UDP
// listener (proto 17) relays its first allowed peer's datagrams to the
// server from the virtual's SNAT source (rulelisten.OpenUDP); that relay
// is a flow of the connection table while it lasts and is counted in
// the virtual's Ephemeral column, not its clients' [M]; its idle timeout
// is the virtual's timer policy's for udp and the port the peer reached
// on the listener, else relatedUDPIdle [M]. A TCP related connection is
// counted on the client side too: it is admitted as a client is
// (limits, rate limits, packet filters), and its bytes are counted where
// a client's are, which the copy loops' hot path decides; it is also
// counted in the Ephemeral column (current, maximum and total while it
// lasts, its bytes and packets when it ends) [M].

// relatedUDPIdle is how long a UDP related listener's relay lasts
// without a datagram either way [M: the udp profile's default
// idle-timeout; a TCP virtual has no udp profile to take it from].
const relatedUDPIdle = 60 * time.Second

// Listen implements rules.ListenConn. The rule lock is held; opening
// does not wait. The listener outlives the connection if it must: it
// closes at its timeout.
func (pr *proxied) Listen(spec rules.ListenSpec) (netip.AddrPort, error) {
	bind := spec.Bind
	if !bind.Addr().IsValid() {
		bind = netip.AddrPortFrom(pr.Local.Addr(), bind.Port())
	}
	e, vs, snap, server := pr.e, pr.vs, pr.snap, spec.Server
	rs := rulelisten.Spec{Bind: bind, Allow: spec.Allow, AllowPort: spec.AllowPort, Timeout: spec.Timeout,
		Arrival: snap.SNATArrival} // a VLAN-limited SNAT or NAT: the related connection's arrival kept
	var l *rulelisten.Listener
	var err error
	if spec.Proto == 17 {
		local := pr.Local
		if snap.Cfg.Timers != nil { // the virtual's timer policy's rule for udp and the listener's port
			rs.IdleAt = func(at netip.AddrPort) time.Duration { return snap.RelatedIdle(17, at.Port(), relatedUDPIdle) }
		}
		l, err = rulelisten.OpenUDP(rs, server, func(peer netip.AddrPort, ifx int) rulelisten.Source {
			h := state.SNATSourceHeldOn(vs, snap, peer, local, server, nil, nil, ifx) // held while the relay lasts
			return rulelisten.Source{Src: h.Src, Hold: h.Hold, Err: h.Err, Strict: h.Strict}
		}, relatedUDPIdle, &rulelisten.Track{Table: e.env.Table, Virtual: vs.Name, Counts: &vs.Ephemeral})
	} else {
		l, err = rulelisten.Open(rs, func(c *net.TCPConn) { e.serveRelated(vs, c, server) })
	}
	if err != nil {
		return netip.AddrPort{}, err
	}
	return l.Addr(), nil
}

// serveRelated runs a connection a related listener took to its end,
// proxied to server.
func (e *Engine) serveRelated(vs *state.Virtual, c *net.TCPConn, server netip.AddrPort) {
	snap := vs.Snap.Load()
	if snap == nil { // the virtual server was deleted meanwhile
		reset(c)
		return
	}
	cfg := snap.Cfg
	client, local := rawsock.AddrPortOf(c.RemoteAddr()), rawsock.AddrPortOf(c.LocalAddr())
	ok, _, ifx := vs.AdmitArrival(snap, client, local, func() (ifx int) {
		// Read only while a SNAT or NAT of the commit has a VLAN list
		// (the listener kept it: Listen's rs.Arrival).
		rawsock.Control(c, func(fd int) error { ifx = rawsock.ArrivalIf(fd); return nil })
		return ifx
	})
	if !ok {
		reset(c)
		return
	}
	if s := cfg.ClientTCP; s != nil {
		s.ApplyConn(c) // tcpopts.go
	}
	pr := &proxied{client: c, related: server}
	pr.init(e, vs, snap, client, local, pr)
	pr.Flow.Arrival = int32(ifx) // the SNAT's choice by VLAN (connect)
	vs.Ephemeral.TryOpen(0)
	defer pr.countEphemeral()
	e.env.Table.Add(&pr.Flow)
	pr.watchClose() // tcpclose.go
	sc, err := pr.connect()
	if err != nil {
		pr.finish(true)
		return
	}
	pr.legsLeft.Store(2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		pr.copy(sc.conn, pr.client, false, sc)
	}()
	pr.copy(pr.client, sc.conn, true, sc)
	<-done // both directions ended: the flow's bytes are final
}

// countEphemeral closes a related connection in the virtual's Ephemeral
// column and adds its bytes and packets there, from the flow's own
// counts, once it ended [M: the column shows a TCP related connection's
// bytes when it closes; counting them as they pass would cost every
// flow's copy loop a second counter].
func (pr *proxied) countEphemeral() {
	eph := &pr.vs.Ephemeral
	eph.In(int(pr.BytesIn.Load()), pr.PktsIn.Load())
	eph.Out(int(pr.BytesOut.Load()), pr.PktsOut.Load())
	eph.Close()
}
