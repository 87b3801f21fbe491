package daemon

import "github.com/openltm/openltm/dataplane"

// registerPersistShows installs show / delete ltm persistence
// persist-records.
func registerPersistShows(e *Engine, p *dataplane.Plane) {}
