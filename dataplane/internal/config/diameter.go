package config

import "github.com/openltm/openltm/dataplane/diameter"

// Diameter is a virtual's diameter profile: its TCP flows are read
// message by message (dataplane/diammsg), each message balanced on its
// own and its answers routed back by hop-by-hop identifier.
type Diameter = diameter.Options
