package cluster

import (
	"strconv"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// SetCapacity sets this device's ha-capacity (`cm device NAME ha-capacity`):
// how much traffic it can carry relative to its peers, which load-aware
// failover divides each device's load by. 0 (BIG-IP's default) leaves the
// device without one; negative values count as 0.
func (m *Member) SetCapacity(n int) {
	n = max(n, 0)
	m.mu.Lock()
	same := m.capacity == n
	m.capacity = n
	m.mu.Unlock()
	if !same {
		m.poke()
	}
}

// capKey is where a device publishes its ha-capacity, under its lease, so
// the key goes with the device.
func (m *Member) capKey(device string) string { return "capacity/" + device }

// publishCapacity writes the device's ha-capacity under its lease when it
// changed or the lease did (0 is written too, so a peer sees it was
// cleared); it runs in the election's goroutine.
func (m *Member) publishCapacity(n int, lease clientv3.LeaseID) {
	want := pubScore{score: n, lease: lease}
	if m.pubCap == want {
		if kv := m.mr.get(m.capKey(m.me)); kv != nil && string(kv.Value) == strconv.Itoa(n) {
			return
		}
	}
	rctx, cancel := m.c.reqCtx(m.ctx)
	defer cancel()
	_, err := m.c.cli.Put(rctx, m.mr.prefix+m.capKey(m.me), strconv.Itoa(n), clientv3.WithLease(lease))
	if m.c.note("publish the device's ha-capacity", err) == nil {
		m.pubCap = want
	}
}

// capacities are the ha-capacity values the online devices published,
// when every one of them has one above 0; nil otherwise, and load alone
// then decides [M: BIG-IP asks for a capacity on every device of the
// group or on none; openltm uses them only when all are there].
func (m *Member) capacities(alive map[string]bool) map[string]int {
	if m.mr == nil { // the offline election's tests make members without etcd
		return nil
	}
	pub := m.mr.under("capacity/")
	var out map[string]int
	for d := range alive {
		kv, ok := pub[d]
		if !ok {
			return nil
		}
		n, err := strconv.Atoi(string(kv.Value))
		if err != nil || n <= 0 {
			return nil
		}
		if out == nil {
			out = make(map[string]int, len(alive))
		}
		out[d] = n
	}
	return out
}

// Capacities are the ha-capacity values the devices published (0 for
// none), for show cm traffic-group.
func (m *Member) Capacities() map[string]int {
	out := map[string]int{}
	for d, kv := range m.mr.under("capacity/") {
		if n, err := strconv.Atoi(string(kv.Value)); err == nil {
			out[d] = n
		}
	}
	return out
}

// lessUsed reports whether device a, given load la, is less used than
// device b with load lb: the loads themselves, or with capacities (caps
// not nil) the loads divided by the devices' capacities, compared
// without division. equal reports a tie.
func lessUsed(a, b string, la, lb int, caps map[string]int) (less, equal bool) {
	if caps != nil {
		la, lb = la*caps[b], lb*caps[a]
	}
	return la < lb, la == lb
}
