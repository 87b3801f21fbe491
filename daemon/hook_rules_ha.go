package daemon

import (
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// What the iRule commands HA::status and cpu usage read of the device:
// its failover state for a virtual server's traffic group, and ltmd's
// processor load.

// haStatus answers HA::status for a virtual server (full path; "" when
// the connection names none): a device whose traffic groups do not float
// (standalone, or in a sync-only group) serves every address and is
// active, as its prompt says; a virtual whose address floats follows its
// traffic group's state on this device; one whose address does not float
// (traffic-group-local-only) follows the device's, active while it is
// active for some traffic group, as the prompt's (Active) [M: F5 says
// the answer is in the context of the virtual address's traffic group
// and does not say what a local-only one answers].
// https://clouddocs.f5.com/api/irules/HA__status.html
func (rt *ruleRuntime) haStatus(virtual string) bool {
	if rt.float == nil {
		return true
	}
	f := rt.float.Load()
	if f == nil {
		return true
	}
	if tg := (*rt.vsFloat.Load())[virtual]; tg != "" {
		return f.active[tg]
	}
	for _, a := range f.active {
		if a {
			return true
		}
	}
	return false
}

// cpuUsage answers cpu usage: ltmd's load averaged over the interval.
func (rt *ruleRuntime) cpuUsage(interval time.Duration) float64 {
	if rt.cpu == nil {
		return 0
	}
	return rt.cpu.Usage(interval)
}

// virtualFloats are the floating traffic groups (short names) of dc's
// virtual servers' addresses, "" for an address that does not float.
func virtualFloats(cfg *objects.Config, dc *dataplane.Config) map[string]string {
	if dc == nil {
		return nil
	}
	tgOf := addressTrafficGroups(cfg) // hook_cluster.go
	m := make(map[string]string, len(dc.Virtuals))
	for name, v := range dc.Virtuals {
		if tg := tgOf(v.Destination.Addr()); tg != "" {
			m[name] = tg
		}
	}
	return m
}
