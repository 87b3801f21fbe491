//go:build linux

package l4

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// idleEnd ends a loop flow whose idle timeout fired: both sides reset
// (reset-on-timeout enabled, BIG-IP's default), or both closed with a
// FIN (disabled).
func (lf *loopFlow) idleEnd() {
	if lf.snap == nil || !lf.snap.Cfg.IdleFIN || lf.sfd < 0 {
		lf.flow.because(rstcause.IdleTimeout)
		lf.abort(true)
		return
	}
	lf.closeBoth()
}

// ListenOpts sets the listener's deferred accept, fast open queue and
// MSS as its virtual's client side says (tcp profile deferred-accept,
// fast-open, max-segment-size), and whether it keeps the clients' SYNs
// (saveSYN: the virtual's profiles or rules read them), before it
// accepts and at each commit; the socket is touched only when they
// changed. A VLAN list (vl, nil without one) binds the listener to its
// one interface, if it is enabled on exactly one, and keeps each
// connection's arrival interface for the accept to check; arrival keeps
// it for rules that read it (LINK::vlan_id) too. The caller holds the
// plane's lock.
func (l *Listener) ListenOpts(s *sockopt.Side, saveSYN bool, vl *config.VLANFilter, arrival bool) {
	lo := s.ListenerOf()
	lo.SaveSYN = saveSYN
	lo.Arrival = arrival
	if vl != nil {
		lo.Device, lo.Arrival = vl.Device, true
	}
	if lo == l.lopts {
		return
	}
	l.lopts = lo
	lo.ApplyListener(l.fd)
}
