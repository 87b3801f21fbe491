package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/cluster"
	"github.com/openltm/openltm/cluster/heartbeat"
	"github.com/openltm/openltm/cluster/trust"
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/objects/store"
)

// ClusterOptions are ltmd's device group settings. They are flags, not
// configuration, because the device needs them before it can read the
// group's configuration (see docs/cluster.md).
type ClusterOptions struct {
	// Endpoints are the etcd cluster's client URLs; https ones are
	// reached with the device's certificate from the trust domain.
	Endpoints []string
	// Dir holds the trust files: device.crt, device.key, ca.crt and, on
	// devices that may add others to the trust domain, ca.key. Default:
	// the state directory's "cluster".
	Dir string
	// ManagementAddress (host:port) serves the trust exchange to peers
	// (`modify cm trust-domain Root ca-devices add { ADDRESS }` on another
	// device); "" serves none, so the device cannot be added by others.
	ManagementAddress string
	// Credentials is "user:password", what a peer adding this device to
	// the trust domain must present (the username and password of
	// ca-devices add); the trust exchange is refused without it.
	Credentials string
	// LeaseTTL is the failover time (cluster.DefaultLeaseTTL when 0).
	LeaseTTL time.Duration
}

// clusterHook joins the device to the device group that lists it, sends
// its commits through the group's etcd log, applies the group's
// generations, and binds floating addresses only for the traffic groups
// the device is active for.
type clusterHook struct {
	e    *Engine
	opts ClusterOptions
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	kick   chan struct{}

	mu         sync.Mutex
	conn       *cluster.Conn
	connDevice string
	connErr    error
	member     *cluster.Member
	group      cluster.GroupDef
	tgs        []cluster.TrafficGroup
	applied    appliedState
	pendingKey []byte // the key of a trust request this device answered
	// hb sends and hears the network failover heartbeats on the
	// device's unicast addresses (hbAddrs) while it is in a group.
	hb      *heartbeat.Node
	hbAddrs []netip.AddrPort
	// hbLocked are unicast addresses port lockdown keeps the heartbeats
	// off (heartbeatAddrs).
	hbLocked []netip.AddrPort

	lastErr string // the last connect or join error logged
	// geoSums are the SHA-256 sums of geolocation database files this
	// device hashed or wrote (cluster_geoip.go).
	geoSums map[string]string

	refloat atomic.Bool // floating addresses need binding again
	// mirror replicates persistence records (cluster_mirror.go); takeover
	// are the traffic groups whose mirrored records wait for the
	// addresses to be bound.
	mirror   *mirror
	takeover map[string]bool
	commits  func(time.Duration)
}

// appliedState is kept in the state directory: the group this device
// follows and the last group generation it runs.
type appliedState struct {
	Group      string `json:"group"`
	Generation uint64 `json:"generation"`
}

// floatState is which traffic groups the device is active for; the
// engine's float is nil when no traffic group floats (a standalone
// device, or one in a sync-only group), and then everything is served.
type floatState struct {
	active map[string]bool
}

const appliedFile = "applied.json"

// AttachCluster makes the engine a device of the device group that lists
// it, once the etcd cluster answers; until then it runs alone. It returns
// a stop function.
func (e *Engine) AttachCluster(opts ClusterOptions) (func(), error) {
	if len(opts.Endpoints) == 0 {
		return nil, errors.New("the device group needs etcd endpoints")
	}
	opts.Dir = e.clusterDir(opts)
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, err
	}
	h := &clusterHook{e: e, opts: opts, log: e.log, kick: make(chan struct{}, 1)}
	if b, err := os.ReadFile(filepath.Join(opts.Dir, appliedFile)); err == nil {
		_ = json.Unmarshal(b, &h.applied)
	}
	h.ctx, h.cancel = context.WithCancel(context.Background())
	e.setGroupPath(h)
	e.cluster.Store(h)
	stopMgmt := func() {}
	if opts.ManagementAddress != "" {
		var err error
		if stopMgmt, err = h.serveTrust(opts.ManagementAddress); err != nil {
			h.cancel()
			return nil, err
		}
	}
	h.wg.Add(2)
	go func() { defer h.wg.Done(); h.run() }()
	go func() { defer h.wg.Done(); h.runMirror(h.ctx) }()
	return func() {
		stopMgmt()
		h.cancel()
		h.wg.Wait()
		h.mu.Lock()
		m, c, hb := h.member, h.conn, h.hb
		h.member, h.conn, h.hb = nil, nil, nil
		h.mu.Unlock()
		if m != nil {
			_ = m.Close()
		}
		if hb != nil {
			hb.Close()
		}
		if c != nil {
			_ = c.Close()
		}
	}, nil
}

func (e *Engine) clusterDir(opts ClusterOptions) string {
	if opts.Dir == "" {
		return filepath.Join(e.opts.StateDir, "cluster")
	}
	return opts.Dir
}

// standbyUntilJoined makes a device that was in a device group start
// standby for its floating addresses, before its dataplane first binds
// them: another device may be serving them, and this one takes them only
// once the group elects it.
func (e *Engine) standbyUntilJoined(opts ClusterOptions) {
	var st appliedState
	if b, err := os.ReadFile(filepath.Join(e.clusterDir(opts), appliedFile)); err == nil {
		_ = json.Unmarshal(b, &st)
	}
	if st.Group != "" {
		e.float.Store(&floatState{active: map[string]bool{}})
	}
}

func (h *clusterHook) poke() {
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

func (h *clusterHook) run() {
	for h.ctx.Err() == nil {
		h.step()
		if h.refloat.Load() {
			if err := h.e.refloatNow(); err != nil {
				h.logOnce("floating addresses not bound yet; retrying", err)
			} else {
				h.refloat.Store(false)
				h.mu.Lock()
				tgs := h.takeover
				h.takeover = nil
				h.mu.Unlock()
				for tg := range tgs {
					h.takeOver(tg)
				}
			}
		}
		wait := 500 * time.Millisecond
		if h.refloat.Load() {
			wait = 100 * time.Millisecond
		}
		select {
		case <-h.ctx.Done():
		case <-h.kick:
		case <-time.After(wait):
		}
	}
}

// selfName is this device's name: the cm device marked self-device, else
// BIG-IP's factory name.
func (e *Engine) selfName() string {
	for _, o := range e.Config().Of(cmDevice) {
		if cmDeviceSelf.Str(o) == "true" {
			return shortName(o.Name)
		}
	}
	return defaultDeviceName
}

// defaultDeviceName is the name a device has until it is renamed
// (`mv cm device bigip1 to NAME`).
const defaultDeviceName = "bigip1"

func (h *clusterHook) files() trust.Files {
	return trust.Files{CertFile: filepath.Join(h.opts.Dir, "device.crt"),
		KeyFile: filepath.Join(h.opts.Dir, "device.key"), CAFile: filepath.Join(h.opts.Dir, "ca.crt")}
}

func (h *clusterHook) secure() bool {
	for _, ep := range h.opts.Endpoints {
		if strings.HasPrefix(ep, "https://") {
			return true
		}
	}
	return false
}

// domain is the trust domain's CA when this device holds its key.
func (h *clusterHook) domain() (*trust.Domain, error) {
	c, err := os.ReadFile(filepath.Join(h.opts.Dir, "ca.crt"))
	if err != nil {
		return nil, err
	}
	k, err := os.ReadFile(filepath.Join(h.opts.Dir, "ca.key"))
	if err != nil {
		return nil, err
	}
	return trust.LoadDomain("Root", c, k)
}

// identity loads the device's certificate; a device holding the CA key
// issues its own when it has none (or one for another name).
func (h *clusterHook) identity(name string) (*trust.Identity, error) {
	id, err := trust.ReadFiles(h.files())
	if err == nil && id.Device == name {
		return id, nil
	}
	d, derr := h.domain()
	if derr != nil {
		if err == nil {
			return nil, fmt.Errorf("the device's certificate was issued to %s, not %s", id.Device, name)
		}
		return nil, err
	}
	id, err = d.Issue(name)
	if err != nil {
		return nil, err
	}
	if _, err := id.WriteFiles(h.opts.Dir); err != nil {
		return nil, err
	}
	return id, nil
}

// step moves the device one step towards being in its group: connected,
// joined, carrying the configured traffic groups; or out of a group that
// no longer lists it.
func (h *clusterHook) step() {
	name := h.e.selfName()
	h.mu.Lock()
	conn, member := h.conn, h.member
	if conn != nil && h.connDevice != name && member == nil {
		h.conn = nil
		h.mu.Unlock()
		conn.Close()
		conn = nil
		h.mu.Lock()
	}
	h.mu.Unlock()
	if conn == nil {
		c, err := h.connect(name)
		h.mu.Lock()
		h.connErr = err
		h.conn, h.connDevice = c, name
		h.mu.Unlock()
		if err != nil {
			h.logOnce("cannot reach the device group's etcd cluster", err)
			return
		}
		conn = c
	}
	if member == nil {
		h.join(conn, name)
		return
	}
	def := member.Group()
	if def.Name == "" || !slices.Contains(def.Devices, name) {
		h.leave(member, def)
		return
	}
	h.mu.Lock()
	h.group = def
	h.mu.Unlock()
	h.followTrafficGroups(member, def)
	h.followScores(member) // cluster_hagroup.go
	h.followUnicast()
}

// unicastAddrs are the device's own unicast-address entries: where it
// sends and hears network failover heartbeats.
func (e *Engine) unicastAddrs() ([]netip.AddrPort, error) {
	for _, o := range e.Config().Of(cmDevice) {
		if cmDeviceSelf.Str(o) == "true" {
			return heartbeat.ParseUnicast(cmDeviceUnicast.Str(o))
		}
	}
	return nil, nil
}

// heartbeatAddrs are the unicast addresses the network failover
// heartbeats listen on: the device's unicast-address entries but those
// on a self IP whose allow-service does not admit udp on the entry's port
// (udp:1026 by default), as a BIG-IP's network failover needs the
// self IP's port lockdown to allow it (locked lists those left out).
func (e *Engine) heartbeatAddrs() (addrs, locked []netip.AddrPort, err error) {
	all, err := e.unicastAddrs()
	if err != nil {
		return nil, nil, err
	}
	cfg := e.Config()
	for _, a := range all {
		if lockedOut(cfg, a.Addr(), "udp", int(a.Port())) {
			locked = append(locked, a)
			continue
		}
		addrs = append(addrs, a)
	}
	return addrs, locked, nil
}

// heartbeatNode opens the network failover node for a group being
// joined, on the device's unicast addresses when it can bind them (else
// on none, until they change).
func (h *clusterHook) heartbeatNode(group string) *heartbeat.Node {
	addrs, locked, err := h.e.heartbeatAddrs()
	h.mu.Lock()
	h.hbLocked = locked
	h.mu.Unlock()
	if err != nil {
		h.logOnce("network failover", err)
		addrs = nil
	}
	hb, err := heartbeat.Listen(group, addrs)
	if err != nil {
		h.logOnce("network failover", err)
		addrs = nil
		hb, _ = heartbeat.Listen(group, nil)
	}
	h.mu.Lock()
	h.hbAddrs = addrs
	h.mu.Unlock()
	return hb
}

// heartbeatIdentity is the device's trust domain certificate, which signs
// its heartbeats; nil when it has none (it was never added to the trust
// domain: its group then has no certificates to check heartbeats with).
func (h *clusterHook) heartbeatIdentity(name string) *trust.Identity {
	id, err := trust.ReadFiles(h.files())
	if err != nil || id.Device != name {
		return nil
	}
	return id
}

// followUnicast moves the heartbeats to the device's unicast addresses
// after they changed (modify cm device NAME unicast-address { ... }, or
// a self IP's allow-service: heartbeatAddrs).
func (h *clusterHook) followUnicast() {
	addrs, locked, err := h.e.heartbeatAddrs()
	if err != nil {
		h.logOnce("network failover", err)
		return
	}
	h.mu.Lock()
	hb, cur := h.hb, h.hbAddrs
	h.hbLocked = locked
	h.mu.Unlock()
	if hb == nil || slices.Equal(addrs, cur) {
		return
	}
	if err := hb.SetAddrs(addrs); err != nil {
		h.logOnce("network failover", err)
		return
	}
	h.mu.Lock()
	h.hbAddrs = addrs
	h.mu.Unlock()
	h.log.Info("network failover heartbeats", "unicast-address", fmt.Sprint(addrs))
}

func (h *clusterHook) connect(name string) (*cluster.Conn, error) {
	cfg := cluster.Config{Device: name, Endpoints: h.opts.Endpoints}
	id, idErr := h.identity(name)
	if h.secure() {
		if idErr != nil {
			return nil, fmt.Errorf("device %s has no certificate from the trust domain (%v): add it with \"modify cm trust-domain Root ca-devices add { ADDRESS } name %s ...\" on a device holding the domain's CA", name, idErr, name)
		}
		cfg.Identity, cfg.DomainCA = id, id.CAPEM()
	}
	ctx, cancel := context.WithTimeout(h.ctx, 5*time.Second)
	defer cancel()
	c, err := cluster.Connect(ctx, cfg)
	if err != nil {
		return nil, err
	}
	h.log.Info("connected to the device group's etcd cluster", "device", name, "endpoints", strings.Join(h.opts.Endpoints, ","))
	return c, nil
}

// logOnce logs a connect or join failure when it is not the one logged
// last, so a device waiting for etcd or for its trust does not log it
// every half second.
func (h *clusterHook) logOnce(msg string, err error) {
	h.mu.Lock()
	same := h.lastErr == err.Error()
	h.lastErr = err.Error()
	h.mu.Unlock()
	if !same {
		h.log.Warn(msg, "err", err)
	}
}

// trustSelf records the CA holder in its own trust domain, before it adds
// others or makes a group: the first device of a domain is trusted by
// holding its CA.
func (h *clusterHook) trustSelf(ctx context.Context, conn *cluster.Conn) error {
	if _, err := h.domain(); err != nil {
		return nil // not the CA holder
	}
	id, err := h.identity(h.e.selfName())
	if err != nil {
		return err
	}
	return conn.RecordTrusted(ctx, id.Cert)
}

// join joins the group that lists the device, if any.
func (h *clusterHook) join(conn *cluster.Conn, name string) {
	defs, err := conn.Groups(h.ctx)
	if err != nil {
		return
	}
	var def *cluster.GroupDef
	for i := range defs {
		if slices.Contains(defs[i].Devices, name) && defs[i].Name != "device_trust_group" {
			def = &defs[i]
			break
		}
	}
	if def == nil {
		h.mu.Lock()
		h.group = cluster.GroupDef{}
		left := h.applied.Group
		if left != "" {
			// Removed from its group (or the group deleted) while the
			// device was away: it is standalone again.
			h.applied = appliedState{}
			h.saveAppliedLocked()
		}
		h.mu.Unlock()
		if left != "" {
			h.e.float.Store(nil)
			h.refloat.Store(true)
			h.log.Info("no longer listed in its device group", "group", left)
		}
		return
	}
	h.mu.Lock()
	applied := h.applied
	h.mu.Unlock()
	from := uint64(0)
	if applied.Group == def.Name {
		from = applied.Generation
	}
	var tgs []cluster.TrafficGroup
	if def.Type == cluster.SyncFailover {
		tgs = trafficGroups(h.e.Config(), *def)
		h.e.float.Store(&floatState{active: map[string]bool{}})
		h.refloat.Store(true)
	}
	group := def.Name
	hb := h.heartbeatNode(group)
	m, err := cluster.Join(h.ctx, conn, group, cluster.Options{
		Applied:       from,
		LeaseTTL:      h.opts.LeaseTTL,
		TrafficGroups: tgs,
		Apply:         func(ctx context.Context, g cluster.Generation) error { return h.apply(ctx, conn.Log(group), group, g) },
		OnFailover:    h.onFailover,
		Heartbeat:     hb,
		Identity:      h.heartbeatIdentity(name),
	})
	if err != nil {
		hb.Close()
		h.e.float.Store(nil)
		h.refloat.Store(true)
		h.mu.Lock()
		h.connErr = err
		h.mu.Unlock()
		h.logOnce("cannot join device group "+group, err)
		return
	}
	h.mu.Lock()
	h.member, h.group, h.tgs, h.hb = m, *def, tgs, hb
	if h.applied.Group != group {
		h.applied = appliedState{Group: group}
		h.saveAppliedLocked()
	}
	h.mu.Unlock()
	h.log.Info("joined the device group", "group", group, "type", def.Type, "generation", from)
}

// leave ends the membership of a group that dropped the device.
func (h *clusterHook) leave(m *cluster.Member, def cluster.GroupDef) {
	_ = m.Close()
	h.mu.Lock()
	if h.hb != nil {
		h.hb.Close()
	}
	h.member, h.group, h.tgs, h.hb, h.hbAddrs = nil, cluster.GroupDef{}, nil, nil, nil
	h.applied = appliedState{}
	h.saveAppliedLocked()
	h.mu.Unlock()
	h.e.float.Store(nil)
	h.refloat.Store(true)
	h.log.Info("left the device group", "group", def.Name)
}

// trafficGroups are the floating cm traffic-group objects, in the
// cluster's terms; ha-order devices not in the group are left out.
func trafficGroups(cfg *objects.Config, def cluster.GroupDef) []cluster.TrafficGroup {
	var out []cluster.TrafficGroup
	for _, o := range cfg.Of(cmTrafficGroup) {
		if cmTGFloating.Effective(cfg, o) == "false" {
			continue
		}
		tg := cluster.TrafficGroup{Name: shortName(o.Name), AutoFailback: cmTGFailback.Effective(cfg, o) == "true"}
		if v := cmTGHAOrder.Get(o); v != nil {
			for _, d := range v.List {
				if d = shortName(d); slices.Contains(def.Devices, d) {
					tg.HAOrder = append(tg.HAOrder, d)
				}
			}
		}
		if s := cmTGFailbackTime.Effective(cfg, o); s != "" {
			tg.AutoFailbackTime = seconds(s)
		}
		if name, bonus := haGroupOf(cfg, o); name != "" { // cluster_hagroup.go
			tg.HAScore, tg.ActiveBonus = true, bonus
		}
		if n, err := strconv.Atoi(cmTGLoadFactor.Effective(cfg, o)); err == nil {
			tg.LoadFactor = n
		}
		out = append(out, tg)
	}
	return out
}

// selfCapacity is this device's ha-capacity (0: none), which load-aware
// failover divides its load by.
func selfCapacity(cfg *objects.Config) int {
	for _, o := range cfg.Of(cmDevice) {
		if cmDeviceSelf.Str(o) == "true" {
			n, _ := strconv.Atoi(cmDeviceCapacity.Effective(cfg, o))
			return n
		}
	}
	return 0
}

func (h *clusterHook) followTrafficGroups(m *cluster.Member, def cluster.GroupDef) {
	var tgs []cluster.TrafficGroup
	if def.Type == cluster.SyncFailover {
		tgs = trafficGroups(h.e.Config(), def)
	}
	h.mu.Lock()
	same := slices.EqualFunc(tgs, h.tgs, func(a, b cluster.TrafficGroup) bool {
		return a.Name == b.Name && slices.Equal(a.HAOrder, b.HAOrder) && a.AutoFailback == b.AutoFailback && a.AutoFailbackTime == b.AutoFailbackTime &&
			a.HAScore == b.HAScore && a.ActiveBonus == b.ActiveBonus && a.LoadFactor == b.LoadFactor
	})
	h.mu.Unlock()
	m.SetCapacity(selfCapacity(h.e.Config()))
	if same && (def.Type == cluster.SyncFailover) == (h.e.float.Load() != nil) {
		return
	}
	// The scores first: a traffic group that names an HA group from now
	// on must find this device's score there when the failover loop
	// first ranks it, or the loop would publish 0 and give the group
	// away to a peer that already published its own.
	m.SetScores(h.scoresOf(tgs)) // cluster_hagroup.go
	if err := m.SetTrafficGroups(tgs); err != nil {
		h.log.Warn("traffic groups", "err", err)
		return
	}
	h.mu.Lock()
	h.tgs = tgs
	h.mu.Unlock()
	if def.Type == cluster.SyncFailover && h.e.float.Load() == nil {
		h.e.float.Store(&floatState{active: map[string]bool{}})
		h.refloat.Store(true)
	} else if def.Type != cluster.SyncFailover && h.e.float.Load() != nil {
		h.e.float.Store(nil)
		h.refloat.Store(true)
	}
}

func (h *clusterHook) saveAppliedLocked() {
	b, _ := json.Marshal(h.applied)
	if err := writeFileAtomic(filepath.Join(h.opts.Dir, appliedFile), b); err != nil {
		h.log.Error("cannot record the applied group generation", "err", err)
	}
}

func (h *clusterHook) setApplied(group string, id uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.applied.Group == group && id > h.applied.Generation {
		h.applied.Generation = id
		h.saveAppliedLocked()
	}
}

func (h *clusterHook) appliedGen() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.applied.Generation
}

// apply runs a generation the group committed (the member's Apply).
func (h *clusterHook) apply(ctx context.Context, l *cluster.Log, group string, g cluster.Generation) error {
	e := h.e
	if g.ID <= h.appliedGen() {
		return nil
	}
	// The group's files are read before the commit lock is taken (they
	// may be large); nothing changes when they cannot be.
	geo, err := h.fetchGeoIP(ctx, l, g.Files)
	if err != nil {
		h.log.Error("config sync failed", "group", group, "generation", g.ID, "from", g.Device, "err", err)
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if g.ID <= h.appliedGen() {
		return nil // taken already, by a catch-up or the device's own commit
	}
	start := time.Now()
	err = e.applyGroupLocked(ctx, fmt.Sprintf("device group %s generation %d", group, g.ID), g.User,
		fmt.Sprintf("config-sync from %s (device group %s generation %d): %s", g.Device, group, g.ID, g.Summary), g.Config, g.MasterKey)
	if err != nil {
		h.log.Error("config sync failed", "group", group, "generation", g.ID, "from", g.Device, "err", err)
		return err
	}
	if err := h.installGeoIP(geo); err != nil {
		h.log.Error("geolocation databases from the device group not loaded; the databases in use are kept", "group", group, "generation", g.ID, "from", g.Device, "err", err)
	} else if geo != nil {
		h.log.Info("geolocation databases from the device group loaded", "group", group, "generation", g.ID, "from", g.Device, "files", fmt.Sprint(geo.names))
	}
	h.setApplied(group, g.ID)
	h.log.Info("config sync applied", "group", group, "generation", g.ID, "from", g.Device, "took", time.Since(start))
	h.poke()
	return nil
}

// publish implements groupPath.
func (h *clusterHook) publish(ctx context.Context, user, summary string, old *objects.Config, oldText string, cfg *objects.Config, text string) error {
	h.mu.Lock()
	m, applied, group, connErr, commits := h.member, h.applied, h.group, h.connErr, h.commits
	h.mu.Unlock()
	if m == nil {
		if applied.Group != "" {
			// The device belongs to a group it has not reached yet.
			why := "the device has not joined it yet"
			if connErr != nil {
				why = connErr.Error()
			}
			return objects.Invalid("Unable to commit to device group %s: %s; the device keeps running its last configuration", applied.Group, why)
		}
		return nil
	}
	text = groupTextOf(cfg, text)
	if text == groupTextOf(old, oldText) {
		return nil // device-local: nothing for the group
	}
	if applied.Generation == 0 && m.SyncStatus().Head == 0 {
		// Awaiting Initial Sync: the group takes a device's configuration
		// only from run cm config-sync to-group, never from whichever
		// device happens to commit first.
		return nil
	}
	start := time.Now()
	id, err := m.Commit(ctx, applied.Generation, store.Generation{Time: start, User: user, Summary: summary, Config: text, MasterKey: h.e.masterKeyBytes()})
	if err != nil {
		var ce *cluster.ConflictError
		if errors.As(err, &ce) {
			by := "another device"
			if ce.By != "" {
				by = ce.By
			}
			if m.Group().AutoSync {
				// Only after maxCatchUps rounds of catching up.
				return &conflictError{msg: fmt.Sprintf("Unable to commit to device group %s: other devices kept committing first (generation %d by %s); nothing was changed: run the command again",
					group.Name, ce.Head, by)}
			}
			return &conflictError{msg: fmt.Sprintf("Unable to commit to device group %s: %s committed generation %d after generation %d, which this device runs, and auto-sync is disabled; run \"run cm config-sync from-group %s\" and the command again; nothing was changed",
				group.Name, by, ce.Head, ce.Base, group.Name)}
		}
		return err
	}
	if commits != nil {
		commits(time.Since(start))
	}
	h.setApplied(group.Name, id)
	h.poke()
	return nil
}

// conflictError is a commit another device's commit came before.
type conflictError struct{ msg string }

func (e *conflictError) Error() string        { return e.msg }
func (e *conflictError) Is(target error) bool { return target == errConflict }

// catchUp implements groupPath.
func (h *clusterHook) catchUp(ctx context.Context) (bool, error) {
	h.mu.Lock()
	m, group := h.member, h.group.Name
	h.mu.Unlock()
	if m == nil || !m.Group().AutoSync {
		return false, nil
	}
	g, ok, err := m.Log().Latest(ctx)
	if err != nil || !ok {
		return false, err
	}
	if g.ID <= h.appliedGen() {
		return true, nil
	}
	h.log.Info("another device committed first: applying its change before this one", "group", group, "generation", g.ID, "from", g.Device)
	geo, err := h.fetchGeoIP(ctx, m.Log(), g.Files)
	if err != nil {
		return false, err
	}
	err = h.e.applyGroupLocked(ctx, fmt.Sprintf("device group %s generation %d", group, g.ID), g.User,
		fmt.Sprintf("config-sync from %s (device group %s generation %d): %s", g.Device, group, g.ID, g.Summary), g.Config, g.MasterKey)
	if err != nil {
		return false, err
	}
	if err := h.installGeoIP(geo); err != nil {
		h.log.Error("geolocation databases from the device group not loaded; the databases in use are kept", "group", group, "generation", g.ID, "err", err)
	}
	h.setApplied(group, g.ID)
	return true, nil
}

// onFailover binds or releases the traffic group's floating addresses
// before the election goes on (the member calls it serially).
func (h *clusterHook) onFailover(tg string, active bool) {
	f := h.e.float.Load()
	if f == nil {
		return
	}
	next := &floatState{active: map[string]bool{}}
	for k, v := range f.active {
		next.active[k] = v
	}
	next.active[tg] = active
	h.e.float.Store(next)
	state := "standby"
	if active {
		state = "active"
	}
	h.log.Info("failover", "traffic-group", tg, "state", state)
	var recs []heldRec
	h.mu.Lock()
	mr := h.mirror
	h.mu.Unlock()
	if active && mr != nil {
		recs = mr.fetch(tg)
	}
	if err := h.e.refloatNow(); err != nil {
		h.log.Warn("floating addresses not bound yet; retrying", "traffic-group", tg, "err", err)
		if active {
			h.mu.Lock()
			if h.takeover == nil {
				h.takeover = map[string]bool{}
			}
			h.takeover[tg] = true
			h.mu.Unlock()
		}
		h.refloat.Store(true)
		h.poke()
		return
	}
	if active && mr != nil {
		if n := mr.load(recs); n > 0 {
			h.log.Info("mirrored persistence records loaded", "traffic-group", tg, "records", n)
		}
	}
}

// takeOver loads the traffic group's mirrored persistence records.
func (h *clusterHook) takeOver(tg string) {
	h.mu.Lock()
	mr := h.mirror
	h.mu.Unlock()
	if mr == nil {
		return
	}
	if n := mr.load(mr.fetch(tg)); n > 0 {
		h.log.Info("mirrored persistence records loaded", "traffic-group", tg, "records", n)
	}
}

// refloatNow brings the dataplane to the floating state: the running
// configuration is translated again, with the virtual servers of traffic
// groups the device is standby for left out.
func (e *Engine) refloatNow() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	cur := e.cur.Load()
	for _, hk := range e.hooks {
		ph, ok := hk.(*planeHook)
		if !ok {
			continue
		}
		clear := e.reveal(cur.cfg)[0]
		c, err := ph.Prepare(clear, clear, CommitOptions{Lenient: true})
		if err != nil {
			return err
		}
		if err := c.Commit(); err != nil {
			c.Abort()
			return err
		}
	}
	return nil
}

// dropStandby leaves out of dc the virtual servers whose virtual address
// floats in a traffic group this device is not active for, and the
// floating self IPs of those traffic groups (cluster_self.go).
func (e *Engine) dropStandby(cfg *objects.Config, dc *dataplane.Config) {
	f := e.float.Load()
	if f == nil {
		return
	}
	tgOf := addressTrafficGroups(cfg)
	for name, v := range dc.Virtuals {
		if tg := tgOf(v.Destination.Addr()); tg != "" && !f.active[tg] {
			delete(dc.Virtuals, name)
		}
	}
	dc.SelfIPs = e.heldSelfIPs(cfg)
}

// addressTrafficGroups returns the floating traffic group of a virtual
// address ("" when it does not float): its ltm virtual-address's, else
// traffic-group-1, BIG-IP's for a new virtual address.
func addressTrafficGroups(cfg *objects.Config) func(netip.Addr) string {
	addrTG := map[netip.Addr]string{}
	for _, o := range cfg.Of(ltmVirtualAddr) {
		if a, err := netip.ParseAddr(objects.AddressOf(o)); err == nil {
			addrTG[a] = shortName(vaddrTG.Effective(cfg, o))
		}
	}
	floating := floatingTrafficGroups(cfg)
	return func(a netip.Addr) string {
		tg, ok := addrTG[a]
		if !ok {
			tg = "traffic-group-1"
		}
		if !floating[tg] {
			return ""
		}
		return tg
	}
}

// syncState is the prompt's (cfg-sync ...) and (Active) words.
func (h *clusterHook) syncState() (sync, failover string) {
	h.mu.Lock()
	m, applied := h.member, h.applied
	h.mu.Unlock()
	if m == nil {
		if applied.Group != "" {
			return cluster.StatusDisconnected, "Active"
		}
		return "Standalone", "Active"
	}
	st := m.SyncStatus()
	if h.e.float.Load() == nil {
		return st.Status, "Active"
	}
	return st.Status, m.FailoverState()
}
