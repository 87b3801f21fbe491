package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// virtualIPForward is the ip-forward type flag: a forwarding (IP)
// virtual server, which sends each connection on to the address and port
// the client asked for.
var virtualIPForward = ltmVirtual.MustProp("ip-forward")

// anyPort admits a virtual on every port of its address (`destination
// ADDR:any`, no traffic-matching-criteria port ranges) where the plane
// can steer every port here (a BPF sk_lookup program: Linux 5.9 and
// later, as root), and keeps with a warning, saying why, one it cannot:
// the kernel or the privileges refuse, or the virtual is of a kind the
// plane serves on given ports only (dataplane.AnyPortUnsupported). It
// also keeps an ip-forward virtual on a given port, which would forward
// to its own listener here.
func (t *translator) anyPort(o *objects.Object, v *dataplane.Virtual) bool {
	if why := dataplane.AnyPortUnsupported(v); why != "" {
		if v.AnyPort() {
			t.keep(o, "destination %s listens on every port: %s", virtualDestination.Str(o), why)
		} else {
			t.keep(o, "%s", why)
		}
		return false
	}
	if !v.AnyPort() {
		return true
	}
	if err := dataplane.AnyPortSupport(); err != nil {
		t.keep(o, "destination %s listens on every port, which openltm cannot do here: %v", virtualDestination.Str(o), err)
		return false
	}
	return true
}
