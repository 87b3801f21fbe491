package dataplane

import "github.com/openltm/openltm/dataplane/mrf"

// MRFDynamicRoutes are the dynamic routes the message router of a
// virtual learnt from its clients (a Diameter CER's Origin-Host and
// Origin-Realm with dynamic-route-insertion), for show; nil when the
// virtual routes no messages or no client made one.
func (p *Plane) MRFDynamicRoutes(virtual string) []mrf.DynamicRoute {
	if r := p.l4.MRFRunning(virtual); r != nil {
		return r.DynamicRoutes()
	}
	return nil
}
