package dnsvs

import (
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnsexpress"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// transferer is DNS Express as process-xfr asks it (dnsexpress.Store).
type transferer interface {
	Transfer(r *dns.Msg, wire []byte, src netip.Addr) [][]byte
}

// isXfr reports whether r asks for a zone transfer.
func isXfr(r *dns.Msg) bool {
	return r.Opcode == dns.OpcodeQuery && !r.Response && len(r.Question) == 1 &&
		(r.Question[0].Qtype == dns.TypeAXFR || r.Question[0].Qtype == dns.TypeIXFR)
}

// transfer is process-xfr yes: DNS Express answers the transfer request
// r (b as received) on c, before the virtual's iRules and steps [M];
// without DNS Express (or with enable-dns-express no) it is REFUSED
// [M]. It reports whether the connection may carry on.
func (s *Service) transfer(vs *state.Virtual, c *net.TCPConn, r *dns.Msg, b []byte, client netip.Addr, idle time.Duration) bool {
	s.st.Queries.Add(1)
	var msgs [][]byte
	if x := s.e.x.Load(); x != nil && s.p.Express {
		if t, ok := x.x.(transferer); ok {
			msgs = t.Transfer(r, b, client)
		}
	}
	if msgs == nil {
		out, err := reply(r, dns.RcodeRefused).Pack()
		if err != nil {
			return false
		}
		msgs = [][]byte{out}
	}
	for _, m := range msgs {
		c.SetWriteDeadline(time.Now().Add(idle))
		n, err := c.Write(dnsexpress.Frame(m))
		vs.Stats.Out(n, 1)
		if err != nil {
			return false
		}
	}
	return true
}
