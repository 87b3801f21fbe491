package state

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/pktfilter"
)

// RefusedCause is why Admit refused client, for the reset's log line: the
// first of Admit's checks that fails, in Admit's order. It is asked only
// while tm.rstcause.log is on, after Admit, so a limit that freed up
// meanwhile still reads as the limit.
func (s *VirtualSnap) RefusedCause(client netip.AddrPort) rstcause.Cause {
	cfg := s.Cfg
	if s.PF.Load() != nil {
		p := pktfilter.Packet{Proto: s.proto(), Src: unmap(client), Dst: unmap(cfg.Destination)} // the virtual's address: the log's cause only
		if s.PF.Verdict(&p) == pktfilter.Reject {
			return rstcause.PacketFilter // net packet-filter, first of all (Admit)
		}
	}
	switch {
	case !cfg.Enabled:
		return rstcause.VirtualDisabled
	case cfg.Source.IsValid() && cfg.Source.Bits() > 0 && !cfg.Source.Contains(client.Addr()),
		cfg.Match != nil && !cfg.Match.Admits(client):
		return rstcause.NoListener
	case s.Addr != nil && !cfg.Address.Enabled:
		return rstcause.VirtualDisabled
	case cfg.Reject:
		return rstcause.RejectVirtual
	case cfg.DownImmediate != "" && cfg.DownImmediate != config.DownNone && s.Pool.Offline():
		return rstcause.ServiceDown
	case s.Rate != nil && cfg.ConnectionLimit <= 0:
		return rstcause.RateLimit
	}
	return rstcause.ConnLimit
}
