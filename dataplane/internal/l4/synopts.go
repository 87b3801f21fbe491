package l4

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/rawsock"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
	"github.com/openltm/openltm/dataplane/synhdr"
	"github.com/openltm/openltm/rules"
)

// What the client's SYN carried, for a virtual whose listener keeps SYNs
// (state.VirtualSnap.SYN: tcp-options, proxy-mss, rules reading the
// SYN): each engine reads it once as the flow starts, one getsockopt and
// one small allocation; other virtuals' flows pay one test of the flag.

// readSYNConn reads the SYN of c, a client of the net package.
func readSYNConn(c *net.TCPConn) *synhdr.SYN {
	var s *synhdr.SYN
	rawsock.Control(c, func(fd int) error {
		s = synhdr.Read(fd)
		return nil
	})
	return s
}

// serverSide is the server side's settings for a member connect: the
// virtual's, with proxy-mss the client's MSS (no larger than
// max-segment-size, when that is set too) as the TCP_MAXSEG the
// member's SYN advertises; a copy is made only then.
func (fl *flow) serverSide() *sockopt.Side {
	s := fl.snap.Cfg.ServerTCP
	if s == nil || !s.ProxyMSS || fl.syn == nil || fl.syn.MSS == 0 {
		return s
	}
	c := *s
	if c.MaxSeg == 0 || int(fl.syn.MSS) < c.MaxSeg {
		c.MaxSeg = int(fl.syn.MSS)
	}
	return &c
}

var _ rules.SYNConn = (*proxied)(nil)

// ClientSYN implements rules.SYNConn.
func (pr *proxied) ClientSYN() (*synhdr.SYN, synhdr.Picks) {
	var p synhdr.Picks
	if c := pr.snap.Cfg.ClientTCP; c != nil {
		p = c.TCPOptions
	}
	return pr.syn, p
}
