package config

import "github.com/openltm/openltm/dataplane/fix"

// FIX is a virtual's fix profile: its TCP flows are read message by
// message (dataplane/fix), checked, mapped per sender and run through
// FIX_HEADER and FIX_MESSAGE, the member chosen after the first message.
// An alias so that the daemon, which may not import this package, can
// build it.
type FIX = fix.Options
