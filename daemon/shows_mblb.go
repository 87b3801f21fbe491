package daemon

import "github.com/openltm/openltm/dataplane"

// registerMBLBShows installs the shows of message-based load balancing and
// OneConnect (show ltm profile one-connect).
func registerMBLBShows(e *Engine, p *dataplane.Plane) {}
