package daemon

import (
	"context"
	"io"
	"slices"

	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// mrfRouteCommands answers reset-stats of the message-routing routes
// (generic, sip, diameter, mqtt: `reset-stats ltm message-routing
// generic route [NAME]`), which BIG-IP's route components take. BIG-IP
// has no show of a route or a peer (their statistics are the protocol's
// and router profile's: show ltm message-routing generic protocol|router),
// and openltm keeps a message's counts there too, so a route's reset
// has nothing of its own to zero: the names are checked (an unknown one
// is refused as on BIG-IP) and the command succeeds [M].
func mrfRouteCommands() []RuntimeCommand {
	var out []RuntimeCommand
	for _, f := range mrfFamilies { // translate_mrf.go
		out = append(out, RuntimeCommand{"reset-stats", f.route.Key(), func(ctx context.Context, s *Session, names, words []string, w io.Writer) error {
			return nil
		}})
	}
	return out
}

// mrfDynamicRoutes prints, for `show ltm message-routing diameter
// profile router NAME detail`, the dynamic routes the routers of the
// virtuals using the profile learnt from their clients [M: BIG-IP
// documents dynamic-route-insertion, not a listing of the routes it
// makes]; a virtual without any prints an empty table.
func mrfDynamicRoutes(w io.Writer, p *dataplane.Plane, virtuals []string, o render.Options) error {
	for _, v := range slices.Sorted(slices.Values(virtuals)) {
		if err := render.MRFDynamicRoutes(w, v, p.MRFDynamicRoutes(v), o); err != nil {
			return err
		}
	}
	return nil
}
