package dnsvs

import (
	"net"
	"net/netip"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnsexpress"
	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/dataplane/internal/state"
)

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
		if t, ok := x.x.(gslb.Transferer); ok {
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

// transferUDP is process-xfr yes for a transfer request r (b as
// received) that came over UDP: DNS Express answers it as BIND does
// (gslb.Transferer.TransferUDP: an AXFR is FORMERR, an IXFR gets the
// zone when it fits in the client's UDP size, else its SOA) [M]; without
// DNS Express it is REFUSED.
func (s *Service) transferUDP(vs *state.Virtual, conn *net.UDPConn, client netip.AddrPort, r *dns.Msg, b []byte) {
	s.st.Queries.Add(1)
	if x := s.e.x.Load(); x != nil && s.p.Express {
		if t, ok := x.x.(gslb.Transferer); ok {
			if out := t.TransferUDP(r, b, client.Addr(), clientUDPSize(r)); out != nil {
				if n, err := conn.WriteToUDPAddrPort(out, client); err == nil {
					vs.Stats.Out(n, 1)
				}
			}
			return
		}
	}
	s.sendUDP(vs, conn, client, reply(r, dns.RcodeRefused), r)
}
