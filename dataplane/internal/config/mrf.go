package config

import "github.com/openltm/openltm/dataplane/mrf"

// MRF is a virtual's generic protocol and router profiles, resolved:
// messages cut by the terminator and routed to peers (dataplane/mrf).
type MRF = mrf.Config
