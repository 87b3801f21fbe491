package lsn

import (
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Steer is what a client's LSN:: commands chose (LSN::pool, address,
// port, persistence, inbound, disable) for the translations opened for
// it afterwards. Standard, UDP and http virtuals keep one per client,
// each under a lock of its own (the commands run inside an event while
// a member connection may be dialled): its methods do not lock.
type Steer struct {
	disabled bool
	pool     *Pool
	want     Want
}

// Disable is LSN::disable: the client's next connections keep its own
// address.
func (s *Steer) Disable() { s.disabled = true }

// SetPool is LSN::pool: p instead of the virtual's pool, and translation
// on again after a LSN::disable.
func (s *Steer) SetPool(p *Pool) { s.pool, s.disabled = p, false }

// SetAddr is LSN::address: the translation address to take when free.
func (s *Steer) SetAddr(a netip.Addr) { s.want.Addr = a }

// SetPort is LSN::port: the translation port to take when free.
func (s *Steer) SetPort(port uint16) { s.want.Port = port }

// SetPersistence is LSN::persistence: mode and timeout instead of the
// pool's.
func (s *Steer) SetPersistence(mode string, timeout time.Duration) {
	s.want.Persist, s.want.PersistTimeout = config.LSNPersist(mode), timeout
}

// SetInbound is LSN::inbound: inbound connections to the translation
// enabled or disabled whatever the pool says.
func (s *Steer) SetInbound(enable bool) {
	s.want.Inbound = "disabled"
	if enable {
		s.want.Inbound = "enabled"
	}
}

// Named is the pool LSN::pool named, nil if none.
func (s *Steer) Named() *Pool { return s.pool }

// Disabled reports whether LSN::disable is in force.
func (s *Steer) Disabled() bool { return s.disabled }

// Choose applies the choice to the virtual's pool lp: the pool to
// translate through (the one LSN::pool named, else lp), the wishes for
// the translation (nil: the pool's own), and off when LSN::disable
// turned translation off (pool and wishes nil then).
func (s *Steer) Choose(lp *Pool) (_ *Pool, want *Want, off bool) {
	if s.disabled {
		return nil, nil, true
	}
	if s.pool != nil {
		lp = s.pool
	}
	if s.want != (Want{}) {
		w := s.want
		want = &w
	}
	return lp, want, false
}
