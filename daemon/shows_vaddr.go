package daemon

import (
	"github.com/openltm/openltm/daemon/render"
	"github.com/openltm/openltm/dataplane"
)

// reasonVALimit is a virtual address at its connection-limit [M]: the
// virtual server's wording with "virtual address".
const reasonVALimit = "The virtual address has reached its connection limit"

// addressCounts adds to a virtual address's show what the dataplane
// counts of it when its connection-limit acts: unavailable while the
// limit is reached (as a virtual server at its own limit), and the
// connections the limit reset.
func addressCounts(st *render.VirtualAddressStats, c dataplane.VirtualAddressCount) {
	st.ConnectionLimit, st.LimitReset = c.ConnectionLimit, c.LimitReset
	if c.AtLimit() && st.Status.Availability != dataplane.Offline {
		st.Status.Availability, st.Status.Reason = dataplane.Unavailable, reasonVALimit
	}
}
