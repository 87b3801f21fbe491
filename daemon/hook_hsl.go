package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/hsl"
)

// attachHSL gives rules' HSL::open and HSL::send a sender that balances
// over the plane's live pool members; Close stops it.
func (e *Engine) attachHSL(p *dataplane.Plane) {
	h := hsl.New(hsl.Options{Members: p.PoolAvailable, Logger: e.log})
	e.rules.rt.sharedEnv(e.log).HSL = h
	e.hsl = h
}

// HSLStats is the high-speed logging counters (messages sent and dropped
// per pool), empty before a dataplane is attached.
func (e *Engine) HSLStats() []hsl.Stats {
	if e.hsl == nil {
		return nil
	}
	return e.hsl.Stats()
}
