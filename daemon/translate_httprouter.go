package daemon

import (
	"strconv"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

var (
	httpRouterPendingBytes = profileHTTPRouter.MustProp("max-pending-bytes")
	httpRouterPendingMsgs  = profileHTTPRouter.MustProp("max-pending-messages")
)

// httpRouter applies the httprouter profile's pending limits to an HTTP
// virtual: what one client's requests may hold in the proxy while they
// wait for a member connection to take them. Over either, the client is
// not read until they drain (back-pressure through its TCP window) [M:
// BIG-IP's router returns further messages as undeliverable; an HTTP
// client pipelining has nothing to take that but an error]. 0 leaves a
// bound off [M]. It returns false when the virtual was left out.
func (t *translator) httpRouter(o *objects.Object, v *dataplane.Virtual) bool {
	prof := t.profile(o, profileHTTPRouter)
	if prof == nil || v.MBLB == nil {
		return true
	}
	var n [2]int64
	for i, p := range []*objects.Prop{httpRouterPendingBytes, httpRouterPendingMsgs} {
		s := p.Effective(t.cfg, prof)
		x, err := strconv.ParseInt(s, 10, 64)
		if err != nil || x < 0 {
			t.skip(o, "profile %s: %s %q is not a count", prof.Name, p.Name, s)
			return false
		}
		n[i] = x
	}
	v.MBLB.Flow.PendingBytes, v.MBLB.Flow.PendingMessages = n[0], n[1]
	return true
}
