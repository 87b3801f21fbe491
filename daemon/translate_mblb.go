package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// mblb fills the virtual's message-based load balancing settings from its
// mblb and one-connect profiles. It returns false when the virtual was
// skipped (t.skip says why).
func (t *translator) mblb(o *objects.Object, v *dataplane.Virtual) bool { return true }
