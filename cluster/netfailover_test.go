package cluster

import (
	"crypto/ecdsa"
	"fmt"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/cluster/heartbeat"
	"github.com/openltm/openltm/cluster/trust"
)

// joinBeating joins a device that sends and hears heartbeats on ip (a free
// UDP port); through etcd's endpoints eps when given.
func joinBeating(t *testing.T, srv *etcdtest.Server, eps []string, name, ip string, tg TrafficGroup, dom ...*trust.Domain) (*device, *heartbeat.Node) {
	t.Helper()
	var id *trust.Identity
	if len(dom) > 0 {
		var err error
		if id, err = dom[0].Issue(name); err != nil {
			t.Fatal(err)
		}
	}
	hb, err := heartbeat.Listen("dg1", []netip.AddrPort{netip.MustParseAddrPort(ip + ":0")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(hb.Close)
	d := &device{name: name, became: map[string]time.Time{}}
	if eps == nil {
		d.conn = connect(t, srv, name)
	} else {
		c, err := Connect(testCtx(t), Config{Device: name, Endpoints: eps})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		d.conn = c
	}
	d.m, err = Join(testCtx(t), d.conn, "dg1", Options{Apply: d.apply, TrafficGroups: []TrafficGroup{tg}, OnFailover: d.onFailover, Heartbeat: hb, Identity: id})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.m.Close() })
	return d, hb
}

// hearsAll waits until every device hears every other.
func hearsAll(t *testing.T, devs ...*device) {
	t.Helper()
	eventually(t, 10*time.Second, "the devices hear each other", func() bool {
		for _, d := range devs {
			if len(d.m.HeardPeers()) != len(devs)-1 {
				return false
			}
		}
		return true
	})
}

// etcd down for every device: the active one keeps its traffic group (its
// peers hear it claim it, in beats signed with its certificate's key); it
// dies: the next of ha-order takes over by heartbeats alone; etcd returns:
// the etcd election names that same device, once the dead one's lease has
// expired.
func TestNetworkFailoverWithEtcdDown(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	dom := setup(t, srv, GroupDef{Name: "dg1", Type: SyncFailover, AutoSync: true, NetworkFailover: true,
		Devices: []string{"bigip1", "bigip2", "bigip3"}})
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2", "bigip3"}}
	d1, hb1 := joinBeating(t, srv, nil, "bigip1", "127.0.0.1", tg, dom)
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	d3, _ := joinBeating(t, srv, nil, "bigip3", "127.0.0.3", tg, dom)
	d2, _ := joinBeating(t, srv, nil, "bigip2", "127.0.0.2", tg, dom)
	hearsAll(t, d1, d2, d3)
	for _, p := range d2.m.opts.Heartbeat.Heard(time.Minute) {
		if len(p.Sig) == 0 {
			t.Fatalf("an unsigned beat from %s was taken", p.Device)
		}
	}

	srv.Stop()
	eventually(t, 10*time.Second, "Disconnected", func() bool {
		return d1.m.SyncStatus().Status == StatusDisconnected && d2.m.SyncStatus().Status == StatusDisconnected
	})
	// Well past the lease: bigip1 still serves, nobody else does.
	time.Sleep(2 * DefaultLeaseTTL)
	if got := fmt.Sprint(activeOn(d1, d2, d3)); got != "[bigip1]" {
		d1.mu.Lock()
		t.Fatalf("with etcd down, active: %s; bigip1 events %v", got, d1.events)
	}
	if st := d2.m.FailoverStatus(); len(st) != 1 || st[0].Owner != "bigip1" || st[0].Next != "bigip2" {
		t.Fatalf("bigip2's failover status with etcd down: %+v", st)
	}

	// bigip1 dies: its heartbeats and its etcd client stop.
	killed := time.Now()
	hb1.Close()
	d1.conn.Close()
	eventually(t, 20*time.Second, "bigip2 takes over by heartbeats", func() bool { return d2.m.isActive(tg1) })
	t.Logf("etcd down: heartbeats stop to bigip2 active: %v", time.Since(killed))
	time.Sleep(DefaultLeaseTTL / 2)
	if d3.m.isActive(tg1) {
		t.Fatal("bigip3 took over too")
	}

	// etcd back: bigip1's lease is alive again for a while (etcd renews
	// every lease on restart); bigip2 keeps serving, then owns the
	// traffic group in etcd.
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "bigip2 owns the traffic group in etcd", func() bool {
		st := d3.m.FailoverStatus()
		return d3.m.SyncStatus().Status != StatusDisconnected && len(st) == 1 && st[0].Owner == "bigip2"
	})
	if got := fmt.Sprint(activeOn(d2, d3)); got != "[bigip2]" {
		t.Fatalf("after etcd returned, active: %s", got)
	}
	d2.mu.Lock()
	ev := fmt.Sprint(d2.events)
	d2.mu.Unlock()
	if ev != "["+tg1+" active]" {
		t.Fatalf("bigip2 went standby on the way: %s", ev)
	}
}

// The active device alone loses etcd and still hears its peers: they reach
// etcd, so it steps down before the next device takes over, as without
// network failover.
func TestNetworkFailoverPartitionedActiveStepsDown(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2"}}
	px := srv.NewProxy(t)
	d1, _ := joinBeating(t, srv, px.Endpoints(), "bigip1", "127.0.0.1", tg)
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	d2, _ := joinBeating(t, srv, nil, "bigip2", "127.0.0.2", tg)
	hearsAll(t, d1, d2)
	cut := time.Now()
	px.Cut()
	eventually(t, 20*time.Second, "bigip2 takes over", func() bool { return d2.m.isActive(tg1) })
	d1.mu.Lock()
	down := d1.became[tg1+" standby"]
	d1.mu.Unlock()
	d2.mu.Lock()
	up := d2.became[tg1+" active"]
	d2.mu.Unlock()
	if down.IsZero() || !down.Before(up) {
		t.Fatalf("bigip1 standby at %v, bigip2 active at %v after the cut", down.Sub(cut), up.Sub(cut))
	}
	// Cut off, bigip1 hears bigip2 reach etcd and claim the traffic
	// group: it does not take it back by heartbeat.
	time.Sleep(DefaultLeaseTTL)
	if d1.m.isActive(tg1) {
		t.Fatal("the partitioned device went active again")
	}
	px.Restore()
	eventually(t, 10*time.Second, "bigip1 reconnects", func() bool { return d1.m.SyncStatus().Status != StatusDisconnected })
	time.Sleep(DefaultLeaseTTL)
	if got := fmt.Sprint(activeOn(d1, d2)); got != "[bigip2]" {
		t.Fatalf("after the partition healed, active: %s", got)
	}
}

// The decisions taken while the device's lease is not safe, one traffic
// group at a time, from the heartbeats heard.
func TestEvaluateOffline(t *testing.T) {
	now := time.Now()
	ttl := DefaultLeaseTTL
	def := GroupDef{Name: "dg1", Type: SyncFailover, NetworkFailover: true, Devices: []string{"bigip1", "bigip2", "bigip3"}}
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2", "bigip3"}}
	beat := func(dev string, etcd bool, active ...string) heartbeat.Heard {
		return heartbeat.Heard{Beat: heartbeat.Beat{Device: dev, Etcd: etcd, Active: active}, At: now}
	}
	heardOf := func(hs ...heartbeat.Heard) map[string]heartbeat.Heard {
		out := map[string]heartbeat.Heard{}
		for _, h := range hs {
			out[h.Device] = h
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		me          string
		active      bool
		holdOn      bool
		byHeartbeat bool
		vacantFor   time.Duration // 0: not vacant before this round
		heard       map[string]heartbeat.Heard
		standby     map[string]bool
		want        bool
	}{
		{name: "network failover off", me: "bigip1", active: true, holdOn: true, heard: nil, want: false},
		{name: "active, etcd lost by all, no claim", me: "bigip1", active: true, holdOn: true, heard: heardOf(beat("bigip2", false)), want: true},
		{name: "active, etcd lost by all, hears nobody", me: "bigip2", active: true, holdOn: true, heard: heardOf(), want: true},
		{name: "active, cut off alone", me: "bigip1", active: true, holdOn: false, heard: heardOf(beat("bigip2", true)), want: false},
		{name: "active, a later device claims without etcd", me: "bigip1", active: true, holdOn: true, heard: heardOf(beat("bigip2", false, tg1)), want: true},
		{name: "active, an earlier device claims without etcd", me: "bigip2", active: true, byHeartbeat: true, heard: heardOf(beat("bigip1", false, tg1)), want: false},
		{name: "active, a later device claims with etcd", me: "bigip1", active: true, holdOn: true, heard: heardOf(beat("bigip3", true, tg1)), want: false},
		{name: "active, a forced standby earlier in ha-order claims", me: "bigip2", active: true, holdOn: true,
			heard: heardOf(beat("bigip1", false, tg1)), standby: map[string]bool{"bigip1": true}, want: true},
		{name: "standby, the active is heard", me: "bigip2", heard: heardOf(beat("bigip1", false, tg1)), want: false},
		{name: "standby, a peer reaches etcd", me: "bigip2", vacantFor: time.Hour, heard: heardOf(beat("bigip3", true)), want: false},
		{name: "standby first in line, silence", me: "bigip2", heard: heardOf(beat("bigip3", false)), want: true},
		{name: "standby second in line, silence for less than a TTL", me: "bigip3", vacantFor: ttl / 2, heard: heardOf(beat("bigip2", false)), want: false},
		{name: "standby second in line, silence for a TTL", me: "bigip3", vacantFor: ttl, heard: heardOf(beat("bigip2", false)), want: true},
		{name: "standby alone", me: "bigip3", heard: heardOf(), want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Member{me: tc.me, opts: Options{LeaseTTL: ttl}, net: netState{holdOn: tc.holdOn}}
			st := &tgState{active: tc.active, byHeartbeat: tc.byHeartbeat}
			if tc.vacantFor > 0 {
				st.hbVacantSince = now.Add(-tc.vacantFor)
			}
			if got := m.evaluateOffline(tg, def, st, tc.heard, tc.standby, now); got != tc.want {
				t.Fatalf("serves %s: %v, want %v", tg1, got, tc.want)
			}
		})
	}
}

func TestOthersReachedEtcd(t *testing.T) {
	now := time.Now()
	ttl := DefaultLeaseTTL
	lastOK := now.Add(-safeTTL(2)) // this device's lease just stopped being safe
	for _, tc := range []struct {
		name string
		ages []int64 // the peers' EtcdAge, ms
		want bool
	}{
		{"no peers", nil, false},
		{"all lost etcd together", []int64{safeTTL(2).Milliseconds() - 200, safeTTL(2).Milliseconds() + 100}, false},
		{"a peer never reached etcd", []int64{-1}, false},
		{"a peer still reaches etcd", []int64{1700, 120}, true},
	} {
		heard := map[string]heartbeat.Heard{}
		for i, a := range tc.ages {
			heard[fmt.Sprint("p", i)] = heartbeat.Heard{Beat: heartbeat.Beat{EtcdAge: a}, At: now}
		}
		if got := othersReachedEtcd(heard, lastOK, ttl); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// A peer's certificate is taken only from the device's own trust domain
// and for that device's name.
func TestPeerKey(t *testing.T) {
	dom, err := trust.NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	otherDom, err := trust.NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	me, err := dom.Issue("bigip1")
	if err != nil {
		t.Fatal(err)
	}
	issue := func(d *trust.Domain, name string) string {
		id, err := d.Issue(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(id.CertPEM())
	}
	m := &Member{me: "bigip1", opts: Options{Identity: me}, keys: map[string]*ecdsa.PublicKey{}}
	for _, tc := range []struct {
		name, device, cert string
		ok                 bool
	}{
		{"the peer's own", "bigip2", issue(dom, "bigip2"), true},
		{"another domain's", "bigip2", issue(otherDom, "bigip2"), false},
		{"another device's", "bigip2", issue(dom, "bigip3"), false},
		{"not PEM", "bigip2", "garbage", false},
	} {
		k, err := m.peerKey(tc.device, tc.cert)
		if (err == nil) != tc.ok || (k != nil) != tc.ok {
			t.Errorf("%s: key %v, error %v", tc.name, k != nil, err)
		}
	}
	// Without a domain of its own the device cannot check a certificate.
	m.opts.Identity = nil
	if _, err := m.peerKey("bigip4", issue(dom, "bigip4")); err == nil {
		t.Error("a certificate was taken without a trust domain to check it against")
	}
}
