package l4

import (
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/openltm/openltm/dataplane/ilx"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// A virtual with an ilx profile (dataplane/ilx): each client connection
// is streamed through the plugin's extension that started an ILXPlugin.
// The extension decides when the server side connects (flow.client.allow)
// and where (flow.lbSelect: a pool, a member, or the virtual's pool and
// what CLIENT_ACCEPTED chose), and reads and writes both sides; this
// side balances, connects and counts as a plain flow does. Its rules run
// CLIENT_ACCEPTED and CLIENT_CLOSED.

// serveILX runs one client of an ilx-profile virtual to its end.
func (pr *proxied) serveILX() {
	sp := pr.snap.Cfg.ILX
	if pr.rs != nil {
		warmStack()
		if pr.handles(config.EventClientAccepted) && !pr.runEvent(config.EventClientAccepted) {
			pr.finish(false)
			return
		}
	}
	client := &ilxClient{TCPConn: pr.client, pr: pr}
	err := sp.Serve(client, ilx.FlowInfo{Virtual: pr.Virtual, VirtualAddr: pr.Local, Client: pr.Client}, pr.ilxDial)
	pr.finish(err != nil)
}

// ilxDial opens the server side the extension chose.
func (pr *proxied) ilxDial(ch ilx.Choice) (net.Conn, error) {
	if ch.Pool != "" || ch.Member.IsValid() {
		// The extension's choice goes before the rule's.
		if rs := pr.rs; rs != nil {
			rs.mu.Lock()
			rs.Pool, rs.Node = nil, false
			rs.mu.Unlock()
		}
	}
	if ch.Pool != "" {
		var p *state.Pool
		if pr.e.env.Pools != nil {
			p = pr.e.env.Pools().Named(pr.Virtual, ch.Pool)
		}
		if p == nil {
			return nil, fmt.Errorf("lbSelect: pool %s does not exist", ch.Pool)
		}
		pr.pool = p
	}
	if ch.Member.IsValid() {
		// The member the flow must go to, as an RTSP session's is
		// (connect); one not in the pool fails the connect.
		pr.rtspWant = ch.Member
	}
	sc, err := pr.connect()
	if err != nil {
		return nil, fmt.Errorf("no server: %v", err)
	}
	return &ilxServer{TCPConn: sc.conn, pr: pr, sc: sc}, nil
}

// ilxClient counts the client's bytes as the flow's.
type ilxClient struct {
	*net.TCPConn
	pr *proxied
}

// Read reads the client, ending the flow once it has been idle (either
// way) for the virtual's idle timeout, as the copy loops do.
func (c *ilxClient) Read(b []byte) (int, error) {
	if idle := c.pr.IdleTimeout(); idle > 0 {
		c.TCPConn.SetReadDeadline(idleDeadline(idle, c.pr.LastActive()))
	}
	for {
		n, err := c.TCPConn.Read(b)
		if n > 0 {
			c.pr.Touch(time.Now().UnixNano())
			c.pr.clientIn(n, state.Packets(n))
		}
		if n == 0 && errors.Is(err, os.ErrDeadlineExceeded) && c.pr.stillActive(c.TCPConn) {
			continue
		}
		return n, err
	}
}

func (c *ilxClient) Write(b []byte) (int, error) {
	n, err := c.TCPConn.Write(b)
	if n > 0 {
		c.pr.clientOut(n, state.Packets(n))
	}
	return n, err
}

// ilxServer counts the server's bytes as the leg's, member's and pool's.
type ilxServer struct {
	*net.TCPConn
	pr *proxied
	sc *serverConn
}

func (s *ilxServer) Read(b []byte) (int, error) {
	n, err := s.TCPConn.Read(b)
	if n > 0 {
		s.pr.Touch(time.Now().UnixNano())
		s.sc.in(n, state.Packets(n))
	}
	return n, err
}

func (s *ilxServer) Write(b []byte) (int, error) {
	n, err := s.TCPConn.Write(b)
	if n > 0 {
		s.sc.out(n, state.Packets(n))
	}
	return n, err
}
