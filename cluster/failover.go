package cluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// TrafficGroup is a `cm traffic-group`: the floating addresses that move
// together, and how the active device is chosen.
type TrafficGroup struct {
	Name string
	// HAOrder lists devices in order of preference (`ha-order { a b }`).
	// Devices of the group not listed come after, by name.
	HAOrder []string
	// AutoFailback (`auto-failback-enabled true`) hands the traffic group
	// back to the first available device of HAOrder once it has been
	// back for AutoFailbackTime (`auto-failback-time`, default 60 s).
	AutoFailback     bool
	AutoFailbackTime time.Duration
	// HAScore (`ha-group NAME`) ranks the devices by the HA score each
	// publishes (Member.SetScores) before ha-order: the active device
	// gives the traffic group up when another online device's score is
	// higher than its own plus ActiveBonus (the HA group's
	// `active-bonus`); a device that published no score counts as 0.
	// AutoFailback (an ha-order setting, as on BIG-IP) does not apply.
	HAScore     bool
	ActiveBonus int
	// LoadFactor (`ha-load-factor`, 1 to 1000, default 1) is the load
	// the traffic group puts on the device active for it, relative to
	// the other traffic groups. It counts only for a load-aware traffic
	// group (no ha-order, no ha-group; BIG-IP's default failover
	// method): such a group goes to the online device whose active
	// traffic groups' load factors add up to the least when it has to
	// go somewhere, and, with AutoFailback, moves there when that would
	// even the devices' loads out
	// (https://techdocs.f5.com/kb/en-us/products/big-ip_ltm/manuals/product/bigip-device-service-clustering-administration-12-1-1/13.html).
	LoadFactor int
}

// LoadAware reports whether the traffic group is placed by load: BIG-IP's
// failover method when neither ha-order nor an HA group is set.
func (tg TrafficGroup) LoadAware() bool { return !tg.HAScore && len(tg.HAOrder) == 0 }

func (tg TrafficGroup) factor() int {
	if tg.LoadFactor <= 0 {
		return 1
	}
	return tg.LoadFactor
}

// DefaultAutoFailbackTime is BIG-IP's auto-failback-time.
const DefaultAutoFailbackTime = 60 * time.Second

// TrafficGroupStatus is one line of `show cm failover-status` /
// `show cm traffic-group`.
type TrafficGroupStatus struct {
	Name   string
	Active bool   // this device is active for it
	Owner  string // the device active for it ("" while none is)
	Next   string // the device that would take over from the owner
	// Scored traffic groups (TrafficGroup.HAScore) carry this device's
	// published HA score, without the active bonus.
	Scored bool
	Score  int
	// LoadAware traffic groups carry their ha-load-factor.
	LoadAware  bool
	LoadFactor int
}

type tgState struct {
	active        bool
	vacantSince   time.Time
	failbackSince time.Time
	// releasedRev is the etcd revision at which this device gave the
	// traffic group up: an owner key it still sees from before then is
	// its mirror lagging behind the delete, not ownership.
	releasedRev int64
	// byHeartbeat: the device took the traffic group over by network
	// failover while etcd was unreachable; hbVacantSince is when it last
	// heard a peer claim it or reach etcd.
	byHeartbeat   bool
	hbVacantSince time.Time
}

func checkTrafficGroups(def GroupDef, tgs []TrafficGroup) error {
	if len(tgs) > 0 && def.Type != SyncFailover {
		return fmt.Errorf("Device group %s is %s: traffic groups fail over only in a sync-failover device group", def.Name, def.Type)
	}
	seen := map[string]bool{}
	for _, tg := range tgs {
		if tg.Name == "" {
			return errors.New("traffic group name is empty")
		}
		if seen[tg.Name] {
			return fmt.Errorf("traffic group %s is listed twice", tg.Name)
		}
		seen[tg.Name] = true
		for _, d := range tg.HAOrder {
			if !slices.Contains(def.Devices, d) {
				return fmt.Errorf("traffic group %s: ha-order device %s is not a member of device group %s", tg.Name, d, def.Name)
			}
		}
		if tg.ActiveBonus < 0 {
			return fmt.Errorf("traffic group %s: the active bonus must not be negative", tg.Name)
		}
		if tg.LoadFactor < 0 || tg.LoadFactor > 1000 {
			return fmt.Errorf("traffic group %s: ha-load-factor %d is out of range (1 to 1000)", tg.Name, tg.LoadFactor)
		}
		if tg.AutoFailbackTime < 0 {
			return fmt.Errorf("traffic group %s: auto-failback-time must not be negative", tg.Name)
		}
	}
	return nil
}

// SetTrafficGroups replaces the traffic groups this device can carry, after
// a configuration change; it gives up those no longer listed.
func (m *Member) SetTrafficGroups(tgs []TrafficGroup) error {
	if err := checkTrafficGroups(m.Group(), tgs); err != nil {
		return err
	}
	m.mu.Lock()
	m.tgs = slices.Clone(tgs)
	m.mu.Unlock()
	m.poke()
	return nil
}

func (m *Member) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

func (m *Member) tgKey(tg, rest string) string { return "tg/" + tg + "/" + rest }

// grant takes a new lease and announces the device with it.
func (m *Member) grant(ctx context.Context) error {
	sent := time.Now()
	rctx, cancel := m.c.reqCtx(ctx)
	defer cancel()
	resp, err := m.c.cli.Grant(rctx, int64((m.opts.LeaseTTL+time.Second-1)/time.Second))
	if err := m.c.note("join device group "+m.group, err); err != nil {
		return err
	}
	_, err = m.c.cli.Put(rctx, m.mr.prefix+"alive/"+m.me, "", clientv3.WithLease(resp.ID))
	if err := m.c.note("join device group "+m.group, err); err != nil {
		return err
	}
	m.mu.Lock()
	m.lease = resp.ID
	m.safeUntil = sent.Add(safeTTL(resp.TTL))
	m.lastOK = sent
	m.mu.Unlock()
	return nil
}

// safeTTL is how long after sending a renewal the device may assume its
// lease is still held. etcd counts the TTL from when it received the
// renewal, which is later, and frees expired leases only every half second;
// the device stops 15% short of the TTL (300 ms of 2 s) to allow for clock
// drift and for its own reaction.
func safeTTL(ttl int64) time.Duration {
	d := time.Duration(ttl) * time.Second
	return d - d*15/100
}

// keepLease renews the device's lease eight times per TTL (every 250 ms by
// default, so a crash leaves at most that much of the last renewal unused),
// takes a new one when etcd lost it, and so also probes etcd for the
// Disconnected status.
func (m *Member) keepLease() {
	every := m.opts.LeaseTTL / 8
	for m.ctx.Err() == nil {
		m.mu.Lock()
		lease := m.lease
		m.mu.Unlock()
		if lease == 0 {
			_ = m.grant(m.ctx)
		} else {
			// A slow answer still counts from when it was sent, so
			// the renewal may take up to half the TTL on a busy
			// machine; the next one starts when it returns.
			sent := time.Now()
			rctx, cancel := context.WithTimeout(m.ctx, m.opts.LeaseTTL/2)
			resp, err := m.c.cli.KeepAliveOnce(rctx, lease)
			cancel()
			switch {
			case err == nil && resp.TTL > 0:
				_ = m.c.note("renew the device's lease", nil)
				m.mu.Lock()
				if m.lease == lease {
					m.safeUntil = sent.Add(safeTTL(resp.TTL))
				}
				m.lastOK = sent
				m.mu.Unlock()
			case errors.Is(err, rpctypes.ErrLeaseNotFound) || (err == nil && resp.TTL <= 0):
				// Expired while etcd could not hear us: everything
				// held with it is gone. Start again.
				_ = m.c.note("renew the device's lease", nil)
				m.mu.Lock()
				if m.lease == lease {
					m.lease = 0
					m.safeUntil = time.Time{}
				}
				m.mu.Unlock()
				continue
			default:
				if m.ctx.Err() == nil {
					_ = m.c.note("renew the device's lease", err)
				}
			}
		}
		m.poke()
		select {
		case <-m.ctx.Done():
		case <-time.After(every):
		}
	}
}

func (m *Member) failoverLoop(changed <-chan struct{}) {
	tick := time.NewTicker(m.opts.LeaseTTL / 10)
	defer tick.Stop()
	deadline := time.NewTimer(time.Hour)
	defer deadline.Stop()
	for {
		m.evaluate()
		// Wake exactly when the lease stops being safe, so an active
		// device that lost etcd steps down on time, not a tick later.
		m.mu.Lock()
		until := time.Until(m.safeUntil)
		m.mu.Unlock()
		if until <= 0 {
			until = time.Hour
		}
		deadline.Reset(until)
		select {
		case <-m.ctx.Done():
			return
		case <-changed:
		case <-m.kick:
		case <-tick.C:
		case <-deadline.C:
		}
	}
}

// candidates ranks the online devices for a traffic group: ha-order first,
// then the rest by name; a device that was told to go standby comes last.
func (m *Member) candidates(tg TrafficGroup, def GroupDef, alive map[string]bool, standby map[string]bool) []string {
	var scores, loads, caps map[string]int
	if tg.HAScore {
		scores = m.scoresOf(tg.Name)
	}
	if tg.LoadAware() {
		m.mu.Lock()
		tgs := slices.Clone(m.tgs)
		m.mu.Unlock()
		loads = m.ownerLoads(tgs, tg.Name)
		caps = m.capacities(alive)
	}
	return rankByLoad(tg, def, alive, standby, scores, loads, caps)
}

// ownerLoads adds up, for each device, the load factors of the load-aware
// traffic groups etcd names it the owner of, but for the traffic group
// except: where a device stands before it takes that one.
func (m *Member) ownerLoads(tgs []TrafficGroup, except string) map[string]int {
	loads := map[string]int{}
	for _, tg := range tgs {
		if !tg.LoadAware() || tg.Name == except {
			continue
		}
		if kv := m.mr.get(m.tgKey(tg.Name, "owner")); kv != nil {
			loads[string(kv.Value)] += tg.factor()
		}
	}
	return loads
}

// DeviceLoads is each device's load (the ha-load-factors of the
// load-aware traffic groups it is active for), for show cm traffic-group.
func (m *Member) DeviceLoads() map[string]int {
	m.mu.Lock()
	tgs := slices.Clone(m.tgs)
	m.mu.Unlock()
	return m.ownerLoads(tgs, "")
}

// rankCandidates orders the online devices: a device told to go standby
// last; then, for a scored traffic group, the highest HA score first;
// then ha-order, then name.
func rankCandidates(tg TrafficGroup, def GroupDef, alive map[string]bool, standby map[string]bool, scores map[string]int) []string {
	return rankByLoad(tg, def, alive, standby, scores, nil, nil)
}

// rankByLoad is rankCandidates that puts, after the devices told to go
// standby, the least loaded device first when loads is not nil (a
// load-aware traffic group; loads leave the traffic group itself out).
// With caps (every device's ha-capacity) the least used: the load each
// device would carry with the traffic group, over its capacity.
func rankByLoad(tg TrafficGroup, def GroupDef, alive map[string]bool, standby map[string]bool, scores, loads, caps map[string]int) []string {
	var out []string
	for _, d := range def.Devices {
		if alive[d] {
			out = append(out, d)
		}
	}
	rank := func(d string) int {
		if i := slices.Index(tg.HAOrder, d); i >= 0 {
			return i
		}
		return len(tg.HAOrder)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if standby[a] != standby[b] {
			return !standby[a]
		}
		if scores != nil && scores[a] != scores[b] {
			return scores[a] > scores[b]
		}
		if loads != nil {
			if less, equal := lessUsed(a, b, loads[a]+tg.factor(), loads[b]+tg.factor(), caps); !equal {
				return less
			}
		}
		if rank(a) != rank(b) {
			return rank(a) < rank(b)
		}
		return a < b
	})
	return out
}

func setOf[V any](m map[string]V) map[string]bool {
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}

// evaluate runs one round of the election for every traffic group.
func (m *Member) evaluate() {
	now := time.Now()
	m.mu.Lock()
	lease := m.lease
	safe := lease != 0 && now.Before(m.safeUntil)
	tgs := slices.Clone(m.tgs)
	lastOK := m.lastOK
	capacity := m.capacity
	scores := make(map[string]int, len(m.scores))
	for k, v := range m.scores {
		scores[k] = v
	}
	m.mu.Unlock()
	def := m.Group()
	alive := setOf(m.mr.under("alive/"))
	heard := m.heard(def)
	switch {
	case safe && !m.net.wasSafe:
		m.net.safeSince, m.net.holdOn = now, false
	case !safe && m.net.wasSafe:
		// The moment the lease stops being safe: keep the traffic
		// groups only when no peer reached etcd after this device did.
		m.net.holdOn = heard != nil && !othersReachedEtcd(heard, lastOK, m.opts.LeaseTTL)
	}
	m.net.wasSafe = safe
	// The load-aware traffic groups' loads per device, kept up to date
	// with what this round claims and gives up, so that one round does
	// not give every group to the same device.
	var loads, caps map[string]int
	for _, tg := range tgs {
		if tg.LoadAware() {
			loads = m.ownerLoads(tgs, "")
			caps = m.capacities(alive)
			if safe {
				m.publishCapacity(capacity, lease)
			}
			break
		}
	}
	carried := map[string]bool{}
	for _, tg := range tgs {
		carried[tg.Name] = true
		st := m.fo[tg.Name]
		if st == nil {
			st = &tgState{}
			m.fo[tg.Name] = st
		}
		ownerKV := m.mr.get(m.tgKey(tg.Name, "owner"))
		standby := setOf(m.mr.under(m.tgKey(tg.Name, "standby/")))
		if !safe {
			m.setActive(tg.Name, st, m.evaluateOffline(tg, def, st, heard, standby, now))
			continue
		}
		st.byHeartbeat, st.hbVacantSince = false, time.Time{}
		if tg.HAScore {
			m.publishScore(tg.Name, scores[tg.Name], lease)
		}
		owner := ""
		if ownerKV != nil {
			owner = string(ownerKV.Value)
		}
		var cands []string
		if tg.LoadAware() {
			without := maps.Clone(loads)
			if owner != "" {
				without[owner] -= tg.factor()
			}
			cands = rankByLoad(tg, def, alive, standby, nil, without, caps)
		} else {
			cands = m.candidates(tg, def, alive, standby)
		}
		mine := owner == m.me && lease != 0 && ownerKV.Lease == int64(lease) && ownerKV.ModRevision > st.releasedRev
		if owner != "" {
			st.vacantSince = time.Time{}
		}
		keep := false
		switch {
		case owner == "" && st.active:
			// Active by network failover while etcd was away: the
			// etcd election takes over from here, this device first.
			m.claim(tg.Name, lease)
			keep = true
		case owner == "":
			if st.vacantSince.IsZero() {
				st.vacantSince = now
			}
			// The best candidate claims at once; each next one waits a
			// lease TTL more, in case a better one is online but not
			// taking part.
			if i := slices.Index(cands, m.me); safe && i >= 0 &&
				now.Sub(st.vacantSince) >= time.Duration(i)*m.opts.LeaseTTL {
				m.claim(tg.Name, lease)
				if tg.LoadAware() {
					loads[m.me] += tg.factor()
				}
			} else if tg.LoadAware() && len(cands) > 0 {
				// Counted where it will go, so that the next vacant
				// group of this round goes elsewhere.
				loads[cands[0]] += tg.factor()
			}
		case mine:
			switch {
			case standby[m.me] && len(cands) > 0 && cands[0] != m.me:
				m.release(tg.Name, lease, st)
				mine = false
			case tg.HAScore && outscored(m.scoresOf(tg.Name), cands, m.me, scores[tg.Name], tg.ActiveBonus):
				m.release(tg.Name, lease, st)
				mine = false
			case tg.LoadAware() && tg.AutoFailback && unbalanced(loads, caps, cands, standby, m.me, tg.factor()):
				// [M] A load-aware traffic group stays where it is
				// active, as on BIG-IP, where load decides only the
				// next active device; with auto-failback-enabled (an
				// ha-order setting on BIG-IP) it moves to even the
				// loads out once the lighter device has been seen as
				// lighter for auto-failback-time, and at least a lease
				// TTL (a claim in flight is not mistaken for room).
				if st.failbackSince.IsZero() {
					st.failbackSince = now
				}
				if now.Sub(st.failbackSince) >= max(m.opts.LeaseTTL, tg.AutoFailbackTime) {
					to := lighter(cands, standby, m.me)
					m.release(tg.Name, lease, st)
					mine = false
					loads[m.me] -= tg.factor()
					loads[to] += tg.factor()
				}
			case tg.AutoFailback && !tg.HAScore && len(cands) > 0 && cands[0] != m.me && !standby[cands[0]] &&
				slices.Contains(tg.HAOrder, cands[0]) && preferred(tg, cands[0], m.me):
				wait := tg.AutoFailbackTime
				if wait == 0 {
					wait = DefaultAutoFailbackTime
				}
				if st.failbackSince.IsZero() {
					st.failbackSince = now
				}
				if now.Sub(st.failbackSince) >= wait {
					m.release(tg.Name, lease, st)
					mine = false
				}
			default:
				st.failbackSince = time.Time{}
			}
		default:
			// Active by network failover while etcd was away, and
			// etcd names another owner: when that device is silent
			// it probably died during the outage, and its owner key
			// expires with its lease (etcd gives leases a full TTL
			// again when it restarts); until then this device goes
			// on serving, never longer than three TTLs.
			if st.active && heard != nil && now.Sub(m.net.safeSince) < 3*m.opts.LeaseTTL {
				if _, ok := heard[owner]; !ok {
					keep = true
				}
			}
			// The owner key may still be this device's own, released but
			// not yet gone from the watched view: only another device
			// taking over ends the forced standby.
			if standby[m.me] && owner != m.me {
				// Someone else took it: the forced standby is done.
				m.del(m.tgKey(tg.Name, "standby/"+m.me))
			}
		}
		m.setActive(tg.Name, st, (mine && safe) || keep)
	}
	for name, st := range m.fo {
		if !carried[name] {
			if st.active {
				m.release(name, lease, st)
			}
			delete(m.fo, name)
		}
	}
}

// outscored reports whether the best other online candidate's published
// HA score beats the owner's own plus its active bonus.
func outscored(published map[string]int, cands []string, me string, own, bonus int) bool {
	for _, d := range cands {
		if d != me {
			return published[d] > withBonus(own, bonus)
		}
	}
	return false
}

// lighter is the first other device of cands not told to go standby
// ("" when none is).
func lighter(cands []string, standby map[string]bool, me string) string {
	for _, d := range cands {
		if d != me && !standby[d] {
			return d
		}
	}
	return ""
}

// unbalanced reports whether moving a load-aware traffic group of load
// factor f from this device (me, loads[me] counting it) to the lightest
// other device would leave that device still lighter than this one was
// (with caps, less used: load over capacity): each move then narrows the
// gap between the two, so moves end.
func unbalanced(loads, caps map[string]int, cands []string, standby map[string]bool, me string, f int) bool {
	to := lighter(cands, standby, me)
	if to == "" {
		return false
	}
	less, _ := lessUsed(to, me, loads[to]+f, loads[me], caps)
	return less
}

// preferred reports whether a comes before b in the traffic group's
// ha-order.
func preferred(tg TrafficGroup, a, b string) bool {
	ia, ib := slices.Index(tg.HAOrder, a), slices.Index(tg.HAOrder, b)
	return ia >= 0 && (ib < 0 || ia < ib)
}

func (m *Member) setActive(tg string, st *tgState, active bool) {
	if st.active == active {
		return
	}
	st.active = active
	m.mu.Lock()
	was := anyActive(m.activeSet)
	m.activeSet[tg] = active
	if anyActive(m.activeSet) != was {
		m.stateSince = time.Now()
	}
	m.mu.Unlock()
	if !active {
		st.failbackSince = time.Time{}
	}
	if m.opts.OnFailover != nil {
		m.opts.OnFailover(tg, active)
	}
}

func (m *Member) claim(tg string, lease clientv3.LeaseID) {
	key := m.mr.prefix + m.tgKey(tg, "owner")
	rctx, cancel := m.c.reqCtx(m.ctx)
	defer cancel()
	_, err := m.c.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
		Then(clientv3.OpPut(key, m.me, clientv3.WithLease(lease))).Commit()
	_ = m.c.note("take traffic group "+tg, err)
}

// release goes standby first, then gives the traffic group up, so the next
// device never serves at the same time as this one.
func (m *Member) release(tg string, lease clientv3.LeaseID, st *tgState) {
	m.setActive(tg, st, false)
	if m.c.closed() {
		return
	}
	key := m.mr.prefix + m.tgKey(tg, "owner")
	rctx, cancel := m.c.reqCtx(context.WithoutCancel(m.ctx))
	defer cancel()
	resp, err := m.c.cli.Txn(rctx).
		If(clientv3.Compare(clientv3.Value(key), "=", m.me), clientv3.Compare(clientv3.LeaseValue(key), "=", lease)).
		Then(clientv3.OpDelete(key)).Commit()
	if err == nil {
		st.releasedRev = resp.Header.Revision
	}
	_ = m.c.note("give up traffic group "+tg, err)
}

func (m *Member) del(key string) {
	rctx, cancel := m.c.reqCtx(m.ctx)
	defer cancel()
	_, err := m.c.cli.Delete(rctx, m.mr.prefix+key)
	_ = m.c.note("update the device group", err)
}

// standbyAll is used on Close: standby everywhere, owner keys removed.
func (m *Member) standbyAll() {
	m.mu.Lock()
	lease := m.lease
	m.mu.Unlock()
	for name, st := range m.fo {
		if st.active {
			m.release(name, lease, st)
		}
	}
}

// GoStandby makes this device give up a traffic group ("" for all it is
// active for) to the next device (`run sys failover standby
// [traffic-group NAME]`). It returns once the device is standby; it is an
// error when no other device is online to take over.
func (m *Member) GoStandby(ctx context.Context, trafficGroup string) error {
	m.mu.Lock()
	lease := m.lease
	var names []string
	for _, tg := range m.tgs {
		if trafficGroup == "" || tg.Name == trafficGroup {
			names = append(names, tg.Name)
		}
	}
	m.mu.Unlock()
	if trafficGroup != "" && len(names) == 0 {
		return fmt.Errorf("The requested traffic group (/Common/%s) was not found.", trafficGroup)
	}
	if lease == 0 {
		return &DisconnectedError{Op: "go standby", Endpoints: m.c.cfg.Endpoints, Err: errors.New("the device holds no lease")}
	}
	def := m.Group()
	alive := m.mr.under("alive/")
	others := 0
	for _, d := range def.Devices {
		if _, ok := alive[d]; ok && d != m.me {
			others++
		}
	}
	if others == 0 {
		return fmt.Errorf("Unable to go standby: no other device of device group %s is online to take over", m.group)
	}
	for _, name := range names {
		rctx, cancel := m.c.reqCtx(ctx)
		_, err := m.c.cli.Put(rctx, m.mr.prefix+m.tgKey(name, "standby/"+m.me), "", clientv3.WithLease(lease))
		cancel()
		if err := m.c.note("go standby", err); err != nil {
			return err
		}
	}
	m.poke()
	deadline := time.Now().Add(5 * m.opts.LeaseTTL)
	for {
		active := false
		for _, s := range m.FailoverStatus() {
			if slices.Contains(names, s.Name) && s.Active {
				active = true
			}
		}
		if !active {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Unable to go standby: still active after %v", 5*m.opts.LeaseTTL)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// FailoverStatus lists the traffic groups this device carries.
func (m *Member) FailoverStatus() []TrafficGroupStatus {
	m.mu.Lock()
	tgs := slices.Clone(m.tgs)
	m.mu.Unlock()
	def := m.Group()
	alive := setOf(m.mr.under("alive/"))
	heard := m.heard(def)
	var out []TrafficGroupStatus
	for _, tg := range tgs {
		s := TrafficGroupStatus{Name: tg.Name}
		if kv := m.mr.get(m.tgKey(tg.Name, "owner")); kv != nil {
			s.Owner = string(kv.Value)
		}
		s.Active = m.isActive(tg.Name)
		if tg.HAScore {
			m.mu.Lock()
			s.Scored, s.Score = true, m.scores[tg.Name]
			m.mu.Unlock()
		}
		s.LoadAware, s.LoadFactor = tg.LoadAware(), tg.factor()
		if ok, _ := m.c.Connected(); !ok && heard != nil {
			// etcd's view is stale: say who serves it now.
			s.Owner = ""
			if s.Active {
				s.Owner = m.me
			} else if cs := claimants(heard, tg.Name); len(cs) > 0 {
				s.Owner = cs[0].Device
			}
		}
		standby := setOf(m.mr.under(m.tgKey(tg.Name, "standby/")))
		for _, d := range m.candidates(tg, def, alive, standby) {
			if d != s.Owner {
				s.Next = d
				break
			}
		}
		out = append(out, s)
	}
	return out
}

// FailoverState is the prompt's failover word: "Active" when the device is
// active for any traffic group, else "Standby".
func (m *Member) FailoverState() string {
	for _, s := range m.FailoverStatus() {
		if s.Active {
			return "Active"
		}
	}
	return "Standby"
}

// DeviceState is the device's failover state as show sys failover prints
// it: active while it is active for any traffic group, and since when.
func (m *Member) DeviceState() (active bool, since time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return anyActive(m.activeSet), m.stateSince
}

func anyActive(set map[string]bool) bool {
	for _, on := range set {
		if on {
			return true
		}
	}
	return false
}

func (m *Member) isActive(tg string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.activeSet[tg]
}
