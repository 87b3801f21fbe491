package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// persist fills the virtual's persistence settings from its persist and
// fallback-persistence profiles. It returns false when the virtual was
// skipped (t.skip says why).
func (t *translator) persist(o *objects.Object, v *dataplane.Virtual) bool { return true }
