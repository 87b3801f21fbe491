package cluster

import (
	"context"
	"crypto/ecdsa"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/openltm/openltm/cluster/heartbeat"
	"github.com/openltm/openltm/cluster/trust"
	"github.com/openltm/openltm/objects/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// Options are what the daemon gives a device joining its group.
type Options struct {
	// Applied is the last group generation this device applied, from its
	// local store (0 on a new device).
	Applied uint64
	// Apply loads a group generation into the running configuration,
	// hitlessly; it is called with one generation at a time, in order,
	// never concurrently. An error leaves the device at its previous
	// generation and shows as "Sync Failure".
	Apply func(context.Context, Generation) error
	// LeaseTTL is how long the device's presence outlives its last
	// keep-alive: the failover time. Default DefaultLeaseTTL; etcd's
	// minimum with its default timing is 2 s.
	LeaseTTL time.Duration
	// TrafficGroups this device can carry (sync-failover groups only).
	TrafficGroups []TrafficGroup
	// OnFailover is called when the device becomes active (true) or
	// standby (false) for a traffic group: the moment to bind or release
	// its floating addresses. Calls are serial.
	OnFailover func(trafficGroup string, active bool)
	// Heartbeat, when set, is the device's network failover node on its
	// unicast addresses (the caller opens and closes it): with the
	// group's network-failover enabled the device sends heartbeats to
	// its peers and decides failover from theirs while etcd is
	// unreachable (netfailover.go). Its addresses are published for the
	// peers in the device's state key.
	Heartbeat *heartbeat.Node
	// Identity, when set, is the device's trust domain certificate and
	// key: its heartbeats are signed with the key, its certificate is
	// published for the peers, and the peers' heartbeats are taken only
	// signed by the keys of their certificates from the same domain.
	Identity *trust.Identity
}

// DefaultLeaseTTL makes a dead active device's traffic groups move within
// 3 s: the lease expires 2 s after the last renewal (at most 250 ms before
// the crash), etcd looks for expired leases every half second, and the next
// device claims within milliseconds.
const DefaultLeaseTTL = 2 * time.Second

// Member is this device's membership of a device group: it follows the
// group's configuration log (applying it at once with auto-sync, or holding
// it as "Changes Pending"), keeps its presence alive with a lease, and
// takes part in the election of each traffic group's active device.
type Member struct {
	c     *Conn
	group string
	log   *Log
	opts  Options
	mr    *mirror
	me    string

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	kick    chan struct{}
	pubKick chan struct{}

	applyMu sync.Mutex // serialises Apply

	mu        sync.Mutex
	applied   uint64
	head      uint64
	pending   *Generation // newest generation not applied (auto-sync off)
	applyErr  error
	ownCommit uint64 // generation this device is committing
	lease     clientv3.LeaseID
	safeUntil time.Time // past it, the lease may have expired
	lastOK    time.Time // when the last renewal etcd answered was sent
	tgs       []TrafficGroup
	scores    map[string]int // this device's HA score by traffic group (SetScores)
	capacity  int            // this device's ha-capacity (SetCapacity)
	activeSet map[string]bool
	// stateSince is when the device last went active (for any traffic
	// group) or standby (for all), for show sys failover.
	stateSince time.Time

	fo        map[string]*tgState         // the election's own state, its goroutine's only
	pubScores map[string]pubScore         // HA scores written to etcd, the same goroutine's
	pubCap    pubScore                    // the ha-capacity written to etcd, the same goroutine's
	net       netState                    // network failover state, the same goroutine's
	keys      map[string]*ecdsa.PublicKey // peers' checked certificates, the heartbeat goroutine's
}

type memberState struct {
	Applied uint64 `json:"applied"`
	Error   string `json:"error,omitempty"`
	// Unicast are the device's network failover addresses; Cert its
	// certificate (PEM), whose key signs its heartbeats.
	Unicast []string `json:"unicast,omitempty"`
	Cert    string   `json:"cert,omitempty"`
}

// Join makes this device a member of a device group it is listed in. The
// device must be in the trust domain (with the certificate recorded there,
// when it connected with one).
func Join(ctx context.Context, c *Conn, group string, opts Options) (*Member, error) {
	def, err := c.Group(ctx, group)
	if err != nil {
		return nil, err
	}
	me := c.Device()
	if err := c.trusted(ctx, me, c.cfg.Identity); err != nil {
		return nil, err
	}
	if !slices.Contains(def.Devices, me) {
		return nil, fmt.Errorf("Device %s is not a member of device group %s; add it with \"modify cm device-group %s devices add { %s }\"",
			me, group, group, me)
	}
	if opts.LeaseTTL == 0 {
		opts.LeaseTTL = DefaultLeaseTTL
	}
	if opts.Apply == nil {
		return nil, errors.New("cluster.Join: Options.Apply is required")
	}
	if err := checkTrafficGroups(def, opts.TrafficGroups); err != nil {
		return nil, err
	}
	m := &Member{c: c, group: group, log: c.Log(group), opts: opts, me: me,
		mr: newMirror(c, memberPrefix(group)), kick: make(chan struct{}, 1), pubKick: make(chan struct{}, 1),
		applied: opts.Applied, tgs: opts.TrafficGroups, fo: map[string]*tgState{}, keys: map[string]*ecdsa.PublicKey{}, activeSet: map[string]bool{}, stateSince: time.Now()}
	m.ctx, m.cancel = context.WithCancel(context.Background())
	rev, err := m.mr.load(ctx)
	if err != nil {
		return nil, err
	}
	if m.head, err = m.log.Head(ctx); err != nil {
		return nil, err
	}
	if err := m.grant(ctx); err != nil {
		return nil, err
	}
	m.publish()
	syncNote := m.mr.subscribe()
	foNote := m.mr.subscribe()
	m.wg.Add(5)
	go func() { defer m.wg.Done(); m.publisher() }()
	go func() { defer m.wg.Done(); m.mr.run(m.ctx, rev) }()
	go func() { defer m.wg.Done(); m.syncLoop(syncNote) }()
	go func() { defer m.wg.Done(); m.keepLease() }()
	go func() { defer m.wg.Done(); m.failoverLoop(foNote) }()
	if opts.Heartbeat != nil {
		m.wg.Add(1)
		go func() { defer m.wg.Done(); m.beatLoop() }()
	}
	return m, nil
}

// Log is the group's configuration log.
func (m *Member) Log() *Log { return m.log }

// Group is the group's current definition as this device last saw it.
func (m *Member) Group() GroupDef {
	var def GroupDef
	if kv := m.mr.get("def"); kv != nil {
		_ = json.Unmarshal(kv.Value, &def)
	}
	return def
}

// publish writes this device's sync state for the others to see. Only the
// publisher goroutine writes, always the latest state, retrying until etcd
// takes it, so two updates can never land in the wrong order.
func (m *Member) publish() {
	select {
	case m.pubKick <- struct{}{}:
	default:
	}
}

func (m *Member) writeState(ctx context.Context) error {
	m.mu.Lock()
	st := memberState{Applied: m.applied}
	if m.applyErr != nil {
		st.Error = m.applyErr.Error()
	}
	m.mu.Unlock()
	if m.opts.Heartbeat != nil {
		for _, a := range m.opts.Heartbeat.Addrs() {
			st.Unicast = append(st.Unicast, a.String())
		}
		if id := m.opts.Identity; id != nil {
			st.Cert = string(id.CertPEM())
		}
	}
	data, _ := json.Marshal(st)
	rctx, cancel := m.c.reqCtx(ctx)
	_, err := m.c.cli.Put(rctx, m.mr.prefix+"state/"+m.me, string(data))
	cancel()
	return m.c.note("publish sync state", err)
}

func (m *Member) publisher() {
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-m.pubKick:
		}
		for m.writeState(m.ctx) != nil {
			select {
			case <-m.ctx.Done():
				return
			case <-time.After(250 * time.Millisecond):
			}
		}
	}
}

// syncLoop follows the configuration log.
func (m *Member) syncLoop(defChanged <-chan struct{}) {
	m.mu.Lock()
	from := m.applied
	m.mu.Unlock()
	gens := m.log.Watch(m.ctx, from)
	for {
		select {
		case <-m.ctx.Done():
			return
		case <-defChanged:
			// auto-sync turned on applies what was pending.
			m.mu.Lock()
			p := m.pending
			m.mu.Unlock()
			if p != nil && m.Group().AutoSync {
				_ = m.apply(m.ctx, *p)
			}
		case g, ok := <-gens:
			if !ok {
				return
			}
			m.mu.Lock()
			if g.ID > m.head {
				m.head = g.ID
			}
			if g.ID <= m.applied {
				m.mu.Unlock()
				continue
			}
			if g.Device == m.me && g.ID == m.ownCommit {
				// This device's own commit: it already runs it.
				m.applied = g.ID
				m.pending = nil
				m.mu.Unlock()
				m.publish()
				continue
			}
			m.pending = &g
			m.mu.Unlock()
			if m.Group().AutoSync {
				_ = m.apply(m.ctx, g)
			}
		}
	}
}

func (m *Member) apply(ctx context.Context, g Generation) error {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	m.mu.Lock()
	if g.ID <= m.applied {
		m.mu.Unlock()
		return nil
	}
	m.mu.Unlock()
	err := m.opts.Apply(ctx, g)
	m.mu.Lock()
	if err != nil {
		m.applyErr = fmt.Errorf("generation %d: %w", g.ID, err)
	} else {
		// A commit of this device's own may have moved past g while
		// Apply waited for the daemon.
		m.applied = max(m.applied, g.ID)
		m.applyErr = nil
		if m.pending != nil && m.pending.ID <= g.ID {
			m.pending = nil
		}
	}
	if g.ID > m.head {
		m.head = g.ID
	}
	m.mu.Unlock()
	m.publish()
	return err
}

// Commit commits a change this device made against group generation base
// (see Log.Commit); on success the device counts as having applied it.
func (m *Member) Commit(ctx context.Context, base uint64, g store.Generation) (uint64, error) {
	return m.commit(ctx, base, func() (uint64, error) { return m.log.Commit(ctx, base, g) })
}

// CommitFiles is Commit of a generation that sets the group's files
// (Log.CommitFiles): the way a device hands its peers new geolocation
// databases.
func (m *Member) CommitFiles(ctx context.Context, base uint64, g store.Generation, files []File) (uint64, error) {
	return m.commit(ctx, base, func() (uint64, error) { return m.log.CommitFiles(ctx, base, g, files) })
}

func (m *Member) commit(ctx context.Context, base uint64, do func() (uint64, error)) (uint64, error) {
	// The lease renewals (every eighth of the TTL) say when etcd is out
	// of reach: refuse at once rather than after a request timeout.
	if ok, err := m.c.Connected(); !ok {
		return 0, &DisconnectedError{Op: m.log.commitOp(), Endpoints: m.c.cfg.Endpoints, Err: err}
	}
	m.mu.Lock()
	m.ownCommit = base + 1
	m.mu.Unlock()
	id, err := do()
	m.mu.Lock()
	if err != nil {
		m.ownCommit = 0
		m.mu.Unlock()
		return 0, err
	}
	if id > m.applied {
		m.applied = id
		m.applyErr = nil
	}
	if id > m.head {
		m.head = id
	}
	if m.pending != nil && m.pending.ID <= id {
		m.pending = nil
	}
	m.mu.Unlock()
	m.publish()
	return id, nil
}

// SyncToGroup makes this device's configuration the group's newest
// generation (`run cm config-sync to-group G`), whatever the group had.
func (m *Member) SyncToGroup(ctx context.Context, g store.Generation) (uint64, error) {
	var err error
	for try := 0; try < 10; try++ {
		var head uint64
		if head, err = m.log.Head(ctx); err != nil {
			return 0, err
		}
		var id uint64
		if id, err = m.Commit(ctx, head, g); !errors.Is(err, ErrConflict) {
			return id, err
		}
	}
	return 0, err
}

// SyncFromGroup applies the group's newest generation now
// (`run cm config-sync from-group G`), which is how a device with
// auto-sync disabled takes pending changes.
func (m *Member) SyncFromGroup(ctx context.Context) error {
	g, ok, err := m.log.Latest(ctx)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("Device group %s has no configuration yet; run \"run cm config-sync to-group %s\" on the device whose configuration it should take",
			m.group, m.group)
	}
	return m.apply(ctx, g)
}

// Applied is the last group generation this device runs; the daemon
// stores it with its local generation.
func (m *Member) Applied() uint64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.applied
}

// Close leaves the group cleanly: the device goes standby for its traffic
// groups, gives them up, and revokes its lease so peers take over at once.
// The Conn stays open.
func (m *Member) Close() error {
	m.cancel()
	m.wg.Wait()
	m.standbyAll()
	m.mu.Lock()
	lease := m.lease
	m.lease = 0
	m.mu.Unlock()
	if lease == 0 || m.c.closed() {
		return nil
	}
	rctx, cancel := m.c.reqCtx(context.Background())
	defer cancel()
	_, err := m.c.cli.Revoke(rctx, lease)
	return m.c.note("leave device group "+m.group, err)
}
