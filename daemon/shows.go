package daemon

import "github.com/openltm/openltm/dataplane"

// registerShows installs the runtime shows answered from the dataplane.
func registerShows(e *Engine, p *dataplane.Plane) {}
