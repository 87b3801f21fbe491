package l4

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/socks"
	"github.com/openltm/openltm/rules"
)

// A virtual with a socks profile (dataplane/socks): its client speaks
// SOCKS first and names its destination; the flow then connects there
// itself, instead of to a pool member, and copies both ways as a plain
// flow does. Its iRules run CLIENT_ACCEPTED, SOCKS_REQUEST and
// CLIENT_CLOSED.

// eventSOCKSRequest is SOCKS_REQUEST, which the proxy's event mask does
// not carry: it runs once per flow, asked of the program directly.
const eventSOCKSRequest config.Event = "SOCKS_REQUEST"

// socksTimeout bounds the client's negotiation when the virtual has no
// idle timeout, and the resolving of a name.
const socksTimeout = 5 * time.Second

// serveSocks runs one SOCKS client to its end.
func (pr *proxied) serveSocks() {
	sp := pr.snap.Cfg.Socks
	c := pr.client
	if pr.rs != nil {
		warmStack()
		if pr.handles(config.EventClientAccepted) && !pr.runEvent(config.EventClientAccepted) {
			pr.finish(false)
			return
		}
	}
	wait := pr.snap.Idle
	if wait <= 0 {
		wait = socksTimeout
	}
	c.SetDeadline(time.Now().Add(wait))
	req, err := socks.ReadRequest(c, sp.Versions)
	if err != nil {
		var se *socks.Error
		switch {
		case errors.As(err, &se) && se.Version != 0:
			pr.socksRefuse(se.Version, se.Code)
		case errors.Is(err, socks.ErrNoAcceptableMethod):
			pr.closeGraceful()
			pr.finish(false)
		default:
			// Not SOCKS, a version the profile does not take, or a
			// client gone: reset [M].
			pr.finish(true)
		}
		return
	}
	c.SetDeadline(time.Time{})

	cfg := pr.e.env.Running
	// deny: only a destination where another virtual server listens.
	allowedAt := func(a netip.AddrPort) bool {
		return sp.ConnectAllow || (cfg != nil && listensAt(cfg(), a, pr.Virtual))
	}
	allowed := sp.ConnectAllow || (req.Host == "" && allowedAt(netip.AddrPortFrom(req.Addr, req.Port)))
	decided := false // a rule set SOCKS::allowed
	if pr.rs != nil {
		if prog := irules.Program(pr.rules); prog != nil && prog.Handles(rules.SOCKSRequest) {
			st := &rules.SOCKSState{Version: req.Version, Allowed: allowed,
				Destination: req.Destination,
				SetDestination: func(s string) error {
					h, a, p, err := socks.ParseDestination(s)
					if err != nil {
						return err
					}
					req.Host, req.Addr, req.Port = h, a, p
					return nil
				}}
			if !pr.runSOCKSRequest(prog, st) {
				pr.finish(false)
				return
			}
			decided = st.Allowed != allowed
			allowed = st.Allowed
		}
	}
	if decided && !allowed {
		pr.socksRefuse(req.Version, socks.NotAllowed)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), socksTimeout)
	addr, code, err := sp.Resolve(ctx, req)
	cancel()
	if err != nil {
		pr.socksRefuse(req.Version, code)
		return
	}
	dst := netip.AddrPortFrom(addr, req.Port)
	// Without a rule's verdict, the profile's, on the address the
	// request (or the rule's SOCKS::destination) resolved to.
	if !decided && !allowedAt(dst) {
		pr.socksRefuse(req.Version, socks.NotAllowed)
		return
	}
	sc, err := pr.dialServer(dst, nil) // lsn.go: from the lsn pool too
	if err != nil {
		pr.socksRefuse(req.Version, socks.DialCode(err))
		return
	}
	s := pr.newServerConn()
	s.conn = sc
	local := rawsock.AddrPortOf(sc.LocalAddr())
	s.leg = flows.Leg{Client: local, Server: dst}
	srv, err := pr.attach(s)
	if err != nil {
		pr.finish(false)
		return
	}
	if socks.WriteReply(c, req.Version, socks.Succeeded, local) != nil {
		pr.finish(true)
		return
	}
	pr.legsLeft.Store(2)
	go pr.copy(srv.conn, pr.client, false, srv)
	pr.copy(pr.client, srv.conn, true, srv)
}

// socksRefuse answers the client's request with code and closes it.
func (pr *proxied) socksRefuse(version int, code byte) {
	pr.client.SetWriteDeadline(time.Now().Add(socksTimeout))
	socks.WriteReply(pr.client, version, code, netip.AddrPort{})
	pr.closeGraceful()
	pr.finish(false)
}

// runSOCKSRequest runs SOCKS_REQUEST over st and carries out what the
// rule asked (runEvent's part for this event); it reports whether the
// flow goes on.
func (pr *proxied) runSOCKSRequest(prog *rules.Program, st *rules.SOCKSState) bool {
	rs := pr.rs
	rs.mu.Lock()
	if rs.done {
		rs.mu.Unlock()
		return false
	}
	rs.ev, rs.socks = eventSOCKSRequest, st
	err := pr.RuleSession(prog).Run(rules.SOCKSRequest)
	rs.socks = nil
	v, detach := rs.verdict, rs.detach
	rs.verdict, rs.detach, rs.prime = irules.GoOn, false, false
	rs.mu.Unlock()
	return pr.applyRule(eventSOCKSRequest, err, v, detach)
}

// SOCKS implements rules.SOCKSConn: the request SOCKS_REQUEST is
// deciding, nil at any other time.
func (pr *proxied) SOCKS() *rules.SOCKSState {
	if pr.rs == nil {
		return nil
	}
	return pr.rs.socks
}

// listensAt reports whether an enabled TCP virtual server other than
// self listens at dst (a wildcard address or port included): where
// default-connect-handling deny lets a SOCKS client go.
func listensAt(cfg *config.Config, dst netip.AddrPort, self string) bool {
	if cfg == nil {
		return false
	}
	for name, v := range cfg.Virtuals {
		if name == self || v.IsUDP() || !v.Enabled {
			continue
		}
		ls, err := v.Listeners()
		if err != nil {
			continue
		}
		for _, l := range ls {
			if (l.Addr() == dst.Addr() || l.Addr().IsUnspecified()) && (l.Port() == dst.Port() || l.Port() == 0) {
				return true
			}
		}
	}
	return false
}
