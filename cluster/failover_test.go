package cluster

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
)

const tg1 = "traffic-group-1"

func activeOn(devs ...*device) []string {
	var out []string
	for _, d := range devs {
		if d.m.FailoverState() == "Active" {
			out = append(out, d.name)
		}
	}
	return out
}

func failoverGroup(t *testing.T, srv *etcdtest.Server) {
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncFailover, AutoSync: true, NetworkFailover: true,
		Devices: []string{"bigip1", "bigip2", "bigip3"}})
}

// The first device of ha-order is active; killing its client (no lease
// revoke: a crash) moves the traffic group to the next one within the
// failover time. Repeated to report takeover times.
func TestFailoverOnCrash(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	var times []time.Duration
	const rounds = 3
	for round := 0; round < rounds; round++ {
		order := []string{"bigip1", "bigip2", "bigip3"}
		tg := TrafficGroup{Name: fmt.Sprintf("tg-%d", round), HAOrder: order}
		// bigip3 joins before bigip2: ha-order, not join order, decides
		// who takes over.
		d1 := join(t, srv, "bigip1", "dg1", tg)
		eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg.Name) })
		d3 := join(t, srv, "bigip3", "dg1", tg)
		d2 := join(t, srv, "bigip2", "dg1", tg)
		if d2.m.isActive(tg.Name) || d3.m.isActive(tg.Name) {
			t.Fatal("two devices active")
		}
		// Crash: the client goes away without revoking its lease.
		killed := time.Now()
		d1.conn.Close()
		eventually(t, 20*time.Second, "bigip2 takes over", func() bool { return d2.m.isActive(tg.Name) })
		took := time.Since(killed)
		times = append(times, took)
		if d3.m.isActive(tg.Name) {
			t.Fatal("bigip3 active too")
		}
		// The crashed device's own view turns standby once its lease
		// can no longer be assumed held.
		eventually(t, 5*time.Second, "bigip1 steps down", func() bool { return !d1.m.isActive(tg.Name) })
		d1.mu.Lock()
		stepped := d1.became[tg.Name+" standby"]
		d1.mu.Unlock()
		d2.mu.Lock()
		took2 := d2.became[tg.Name+" active"]
		d2.mu.Unlock()
		if !stepped.Before(took2) {
			t.Errorf("round %d: bigip1 stepped down at %v, after bigip2 became active at %v", round, stepped.Sub(killed), took2.Sub(killed))
		}
		for _, d := range []*device{d1, d2, d3} {
			d.m.Close()
		}
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	t.Logf("takeover after a crash, lease TTL %v: %v", DefaultLeaseTTL, times)
}

func TestGoStandbyAndAutoFailback(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2"}, AutoFailback: true, AutoFailbackTime: 500 * time.Millisecond}
	d1 := join(t, srv, "bigip1", "dg1", tg)
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	ctx := testCtx(t)
	if err := d1.m.GoStandby(ctx, ""); err == nil || !strings.Contains(err.Error(), "no other device of device group dg1 is online") {
		t.Fatalf("standby alone: %v", err)
	}
	if err := d1.m.GoStandby(ctx, "traffic-group-9"); err == nil || err.Error() != "The requested traffic group (/Common/traffic-group-9) was not found." {
		t.Fatalf("unknown tg: %v", err)
	}
	d2 := join(t, srv, "bigip2", "dg1", tg)
	d3 := join(t, srv, "bigip3", "dg1", tg)
	if err := d1.m.GoStandby(ctx, ""); err != nil {
		t.Fatal(err)
	}
	// bigip2 holds it for about auto-failback-time only: read that it
	// took over from its record of events, not by catching it active (a
	// busy machine may poll past the whole window).
	deadline := time.Now().Add(10 * time.Second)
	for {
		d2.mu.Lock()
		took := !d2.became[tg1+" active"].IsZero()
		d2.mu.Unlock()
		if took {
			break
		}
		if time.Now().After(deadline) {
			for _, d := range []*device{d1, d2, d3} {
				d.mu.Lock()
				t.Logf("events: %v", d.events)
				d.mu.Unlock()
			}
			t.Fatalf("status %+v", d3.m.FailoverStatus())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if d3.m.isActive(tg1) {
		t.Fatal("bigip3 took the traffic group; bigip2 is next in ha-order")
	}
	// With auto-failback, bigip1 (first in ha-order) gets it back after
	// auto-failback-time: the forced standby ended when bigip2 took over.
	eventually(t, 10*time.Second, "failback to bigip1", func() bool { return d1.m.isActive(tg1) })
	if d2.m.isActive(tg1) {
		t.Fatal("both active after failback")
	}
	d1.mu.Lock()
	ev := strings.Join(d1.events, ", ")
	d1.mu.Unlock()
	if ev != tg1+" active, "+tg1+" standby, "+tg1+" active" {
		t.Fatalf("bigip1 events: %s", ev)
	}
	// bigip3 learns the new owner through etcd, a moment after bigip1
	// takes over.
	eventually(t, 10*time.Second, "bigip3 to see bigip1 own it", func() bool {
		st := d3.m.FailoverStatus()
		return len(st) == 1 && st[0].Owner == "bigip1" && st[0].Next == "bigip2" && !st[0].Active
	})
}

// Without auto-failback the device that took over keeps the traffic group
// when the preferred one returns; a clean leave hands over at once.
func TestNoFailbackAndCleanLeave(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2", "bigip3"}}
	d2 := join(t, srv, "bigip2", "dg1", tg)
	eventually(t, 10*time.Second, "bigip2 active alone", func() bool { return d2.m.isActive(tg1) })
	d1 := join(t, srv, "bigip1", "dg1", tg)
	time.Sleep(3 * DefaultLeaseTTL / 2)
	if !d2.m.isActive(tg1) || d1.m.isActive(tg1) {
		t.Fatal("traffic group moved back without auto-failback")
	}
	if err := d2.m.Close(); err != nil {
		t.Fatal(err)
	}
	// The lease is revoked, not left to expire: bigip2's presence and
	// ownership are gone the moment Close returns.
	resp, err := d1.conn.cli.Get(testCtx(t), memberPrefix("dg1")+"alive/bigip2")
	if err != nil || len(resp.Kvs) != 0 {
		t.Fatalf("bigip2 still present after Close: %v %v", resp, err)
	}
	resp, err = d1.conn.cli.Get(testCtx(t), d1.m.mr.prefix+d1.m.tgKey(tg1, "owner"))
	if err != nil || (len(resp.Kvs) == 1 && string(resp.Kvs[0].Value) == "bigip2") {
		t.Fatalf("bigip2 still owns the traffic group after Close: %v", err)
	}
	eventually(t, 10*time.Second, "bigip1 takes over", func() bool { return d1.m.isActive(tg1) })
}

// etcd goes away: the active device steps down (it can no longer know it
// is the only one), sync status says Disconnected, commits are refused;
// when etcd returns, the group elects again and the devices catch up.
func TestEtcdOutage(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2"}}
	d1 := join(t, srv, "bigip1", "dg1", tg)
	d2 := join(t, srv, "bigip2", "dg1", tg)
	ctx := testCtx(t)
	if _, err := d1.m.SyncToGroup(ctx, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	down := time.Now()
	srv.Stop()
	t.Logf("etcd took %v to stop", time.Since(down))
	eventually(t, 10*time.Second, "bigip1 steps down", func() bool { return !d1.m.isActive(tg1) })
	t.Logf("active stepped down %v after etcd stopped", time.Since(down))
	eventually(t, 10*time.Second, "Disconnected", func() bool { return d2.m.SyncStatus().Status == StatusDisconnected })
	if st := d2.m.SyncStatus(); st.Color != "red" || !strings.Contains(st.Summary, "bigip2 cannot reach the etcd cluster of device group dg1") {
		t.Fatalf("%+v", st)
	}
	_, err := d2.m.Commit(ctx, 1, gen("admin", "two\n"))
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("commit during outage: %v", err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	eventually(t, 30*time.Second, "an active device again", func() bool { return len(activeOn(d1, d2)) == 1 })
	elected := time.Now()
	var id uint64
	eventually(t, 30*time.Second, "commit after restart", func() bool {
		id, err = d2.m.Commit(ctx, 1, gen("admin", "two\n"))
		return err == nil
	})
	committed := time.Now()
	eventually(t, 10*time.Second, "bigip1 catches up", func() bool { return d1.m.Applied() == id && d1.running() == "two\n" })
	// bigip3 is in the group but never joined.
	eventually(t, 10*time.Second, "bigip1 and bigip2 in sync", func() bool {
		st := d1.m.SyncStatus()
		return st.Status == StatusNotAllDevicesSynced && st.Details[0] == "bigip1: connected, generation 2" &&
			st.Details[1] == "bigip2: connected, generation 2" && st.Details[2] == "bigip3: disconnected, generation 0"
	})
	t.Logf("etcd restarted to commit accepted: %v; to an active device: %v", committed.Sub(restarted), elected.Sub(restarted))
}

// The active device alone loses etcd (a partition: etcd and the other
// devices carry on). It must stop serving before the standby starts.
func TestPartitionedActiveStepsDownFirst(t *testing.T) {
	t.Parallel()
	srv := etcdtest.Start(t, etcdtest.Options{})
	failoverGroup(t, srv)
	tg := TrafficGroup{Name: tg1, HAOrder: []string{"bigip1", "bigip2"}}
	px := srv.NewProxy(t)
	d1 := &device{name: "bigip1", became: map[string]time.Time{}}
	c1, err := Connect(testCtx(t), Config{Device: "bigip1", Endpoints: px.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c1.Close() })
	d1.conn = c1
	d1.m, err = Join(testCtx(t), c1, "dg1", Options{Apply: d1.apply, TrafficGroups: []TrafficGroup{tg}, OnFailover: d1.onFailover})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d1.m.Close() })
	eventually(t, 10*time.Second, "bigip1 active", func() bool { return d1.m.isActive(tg1) })
	d2 := join(t, srv, "bigip2", "dg1", tg)
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
	t.Logf("partition: bigip1 standby after %v, bigip2 active after %v", down.Sub(cut), up.Sub(cut))
	if st := d1.m.SyncStatus(); st.Status != StatusDisconnected {
		t.Fatalf("partitioned device status %+v", st)
	}
	// Back in touch: bigip1 stays standby (no auto-failback) and is in sync.
	px.Restore()
	eventually(t, 10*time.Second, "bigip1 reconnects", func() bool { return d1.m.SyncStatus().Status != StatusDisconnected })
	time.Sleep(DefaultLeaseTTL)
	if got := activeOn(d1, d2); fmt.Sprint(got) != "[bigip2]" {
		t.Fatalf("after the partition healed, active: %v", got)
	}
}
