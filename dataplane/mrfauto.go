package dataplane

import "github.com/openltm/openltm/dataplane/mrf"

// applyMRF tells the L4 engine which virtuals route messages once a
// configuration is in place: the routers of the others close, and those
// keeping their peers connected (auto-initialization) start.
func (p *Plane) applyMRF(b *generation) {
	cfgs := map[string]*mrf.Config{}
	counts := map[string]*mrf.Counters{}
	for name, v := range b.virtuals {
		if sn := v.Snap.Load(); sn != nil && sn.Cfg.MRF != nil {
			cfgs[name] = sn.Cfg.MRF
			counts[name] = &v.Prof.MRF
		}
	}
	p.l4.MRFApply(cfgs, counts)
}
