package daemon

import (
	"errors"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/hsl"
)

// hslSwitch is the rules' HSL sender, set once a dataplane is attached:
// rules (the GSLB's DNS rules among them) may run before that, and read
// it without a lock.
type hslSwitch struct{ hub atomic.Pointer[hsl.Hub] }

var errNoHSL = errors.New("HSL::open: high-speed logging needs the dataplane, which is not running")

// Open implements rules.HSL.
func (s *hslSwitch) Open(proto, pool string) (string, error) {
	h := s.hub.Load()
	if h == nil {
		return "", errNoHSL
	}
	return h.Open(proto, pool)
}

// Send implements rules.HSL.
func (s *hslSwitch) Send(handle string, data []byte) (bool, error) {
	h := s.hub.Load()
	if h == nil {
		return false, errNoHSL
	}
	return h.Send(handle, data)
}

// attachHSL gives rules' HSL::open and HSL::send a sender that balances
// over the plane's live pool members; Close stops it.
func (e *Engine) attachHSL(p *dataplane.Plane) {
	h := hsl.New(hsl.Options{Members: p.PoolAvailable, Pick: p.PoolPick, Logger: e.log})
	e.hsl = h
	e.rules.rt.hsl.hub.Store(h)
}

// HSLStats is the high-speed logging counters (messages sent and dropped
// per pool), empty before a dataplane is attached.
func (e *Engine) HSLStats() []hsl.Stats {
	if e.hsl == nil {
		return nil
	}
	return e.hsl.Stats()
}
