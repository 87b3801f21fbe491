package cluster

import (
	"context"
	"crypto/ecdsa"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/cluster/trust"
)

// device is one simulated ltmd: its connection, membership and what it has
// applied.
type device struct {
	name string
	conn *Conn
	m    *Member

	mu      sync.Mutex
	config  string
	applied []uint64
	fail    error
	events  []string // "traffic-group-1 active" / "... standby"
	became  map[string]time.Time
}

func (d *device) apply(_ context.Context, g Generation) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fail != nil {
		return d.fail
	}
	d.config = g.Config
	d.applied = append(d.applied, g.ID)
	return nil
}

func (d *device) onFailover(tg string, active bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	word := "standby"
	if active {
		word = "active"
	}
	d.events = append(d.events, tg+" "+word)
	d.became[tg+" "+word] = time.Now()
}

func (d *device) running() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.config
}

// setup makes a trust domain with the devices, an etcd, and a device group.
func setup(t *testing.T, srv *etcdtest.Server, def GroupDef) *trust.Domain {
	t.Helper()
	dom, err := trust.NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	admin := connect(t, srv, "admin-tool")
	for _, name := range def.Devices {
		id, err := dom.Issue(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.RecordTrusted(testCtx(t), id.Cert); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.CreateGroup(testCtx(t), def); err != nil {
		t.Fatal(err)
	}
	return dom
}

func join(t *testing.T, srv *etcdtest.Server, name, group string, tgs ...TrafficGroup) *device {
	t.Helper()
	d := &device{name: name, became: map[string]time.Time{}}
	d.conn = connect(t, srv, name)
	m, err := Join(testCtx(t), d.conn, group, Options{Apply: d.apply, TrafficGroups: tgs, OnFailover: d.onFailover})
	if err != nil {
		t.Fatal(err)
	}
	d.m = m
	t.Cleanup(func() { m.Close() })
	return d
}

// eventually polls cond for up to limit.
func eventually(t *testing.T, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %s", limit, what)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestAutoSyncAppliesOnEveryDevice(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncFailover, AutoSync: true, Devices: []string{"bigip1", "bigip2", "bigip3"}})
	devs := []*device{join(t, srv, "bigip1", "dg1"), join(t, srv, "bigip2", "dg1"), join(t, srv, "bigip3", "dg1")}
	if st := devs[0].m.SyncStatus(); st.Status != StatusAwaitingInitialSync || st.Color != "blue" {
		t.Fatalf("new group: %+v", st)
	}
	ctx := testCtx(t)
	id, err := devs[0].m.SyncToGroup(ctx, gen("admin", "ltm pool /Common/p1 { }\n"))
	if err != nil || id != 1 {
		t.Fatalf("to-group: %d %v", id, err)
	}
	// bigip2 makes its change on top of what it runs.
	eventually(t, 10*time.Second, "bigip2 applies generation 1", func() bool { return devs[1].m.Applied() == 1 })
	if id, err := devs[1].m.Commit(ctx, devs[1].m.Applied(), gen("admin", "ltm pool /Common/p2 { }\n")); err != nil || id != 2 {
		t.Fatalf("commit on bigip2: %d %v", id, err)
	}
	for _, d := range devs {
		eventually(t, 10*time.Second, d.name+" applies generation 2", func() bool { return d.m.Applied() == 2 })
	}
	// The committing devices did not re-apply their own generation.
	if got := fmt.Sprint(devs[0].applied, devs[1].applied, devs[2].applied); got != "[2] [1] [1 2]" {
		t.Fatalf("applied per device: %s", got)
	}
	if devs[0].running() != "ltm pool /Common/p2 { }\n" {
		t.Fatalf("bigip1 runs %q", devs[0].running())
	}
	for _, d := range devs {
		eventually(t, 10*time.Second, d.name+" in sync", func() bool { return d.m.SyncStatus().Status == StatusInSync })
	}
	st := devs[2].m.SyncStatus()
	if st.Color != "green" || st.Summary != "All devices in the device group are in sync" || len(st.Details) != 3 ||
		st.Details[0] != "bigip1: connected, generation 2" {
		t.Fatalf("in sync: %+v", st)
	}
}

func TestManualSyncShowsChangesPending(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncOnly, AutoSync: false, Devices: []string{"bigip1", "bigip2"}})
	a, b := join(t, srv, "bigip1", "dg1"), join(t, srv, "bigip2", "dg1")
	ctx := testCtx(t)
	if _, err := a.m.SyncToGroup(ctx, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "bigip2 sees generation 1 pending", func() bool {
		return b.m.SyncStatus().Status == StatusChangesPending
	})
	st := b.m.SyncStatus()
	if st.Color != "yellow" || !strings.Contains(st.Summary, "not yet applied on bigip2") ||
		!strings.Contains(st.Details[len(st.Details)-1], "run cm config-sync from-group dg1") {
		t.Fatalf("pending on bigip2: %+v", st)
	}
	eventually(t, 10*time.Second, "bigip1 sees bigip2 pending", func() bool {
		s := a.m.SyncStatus()
		return s.Status == StatusChangesPending && strings.Contains(s.Summary, "[bigip2]")
	})
	if b.running() != "" {
		t.Fatal("auto-sync disabled, yet bigip2 applied")
	}
	// A change on the stale device conflicts until it syncs.
	if _, err := b.m.Commit(ctx, b.m.Applied(), gen("admin", "stale\n")); !errors.Is(err, ErrConflict) {
		t.Fatalf("stale commit: %v", err)
	}
	if err := b.m.SyncFromGroup(ctx); err != nil {
		t.Fatal(err)
	}
	if b.running() != "one\n" {
		t.Fatalf("after from-group: running %q", b.running())
	}
	// The status is built from what every device reports through etcd,
	// which reaches this device a moment later.
	eventually(t, 10*time.Second, "bigip2 in sync", func() bool { return b.m.SyncStatus().Status == StatusInSync })
	eventually(t, 10*time.Second, "bigip1 in sync", func() bool { return a.m.SyncStatus().Status == StatusInSync })

	// Turning auto-sync on applies what is pending.
	if _, err := a.m.Commit(ctx, 1, gen("admin", "two\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "pending again", func() bool { return b.m.SyncStatus().Status == StatusChangesPending })
	if err := a.conn.ModifyGroup(ctx, "dg1", func(d *GroupDef) error { d.AutoSync = true; return nil }); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "auto-sync applies pending", func() bool { return b.running() == "two\n" })
}

func TestSyncFailureAndOfflineDevice(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncOnly, AutoSync: true, Devices: []string{"bigip1", "bigip2", "bigip3"}})
	a, b := join(t, srv, "bigip1", "dg1"), join(t, srv, "bigip2", "dg1")
	b.mu.Lock()
	b.fail = errors.New("01070734:3: Configuration error: pool p1 has no members")
	b.mu.Unlock()
	ctx := testCtx(t)
	if _, err := a.m.SyncToGroup(ctx, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "sync failure on bigip2", func() bool { return b.m.SyncStatus().Status == StatusSyncFailure })
	if st := b.m.SyncStatus(); st.Color != "red" || !strings.Contains(st.Summary, "generation 1: 01070734:3") {
		t.Fatalf("failure: %+v", st)
	}
	// bigip3 never joined: bigip1 reports it did not get the last sync.
	eventually(t, 10*time.Second, "bigip1 sees bigip2 behind", func() bool {
		return strings.Contains(a.m.SyncStatus().Details[1], "last sync failed")
	})
	b.mu.Lock()
	b.fail = nil
	b.mu.Unlock()
	if err := b.m.SyncFromGroup(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "not all devices synced", func() bool {
		return a.m.SyncStatus().Status == StatusNotAllDevicesSynced
	})
	if s := a.m.SyncStatus(); !strings.Contains(s.Summary, "[bigip3] did not receive the last sync") {
		t.Fatalf("%+v", s)
	}
}

func TestJoinRefusals(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	setup(t, srv, GroupDef{Name: "dg1", Type: SyncOnly, Devices: []string{"bigip1"}})
	ctx := testCtx(t)
	apply := func(context.Context, Generation) error { return nil }
	tests := []struct {
		name, device, group string
		opts                Options
		want                string
	}{
		{"untrusted", "bigip9", "dg1", Options{Apply: apply},
			`Device bigip9 is not in the trust domain: it was never added to the trust domain, or was removed; add it first with "modify cm trust-domain Root ca-devices add { bigip9 }"`},
		{"no group", "bigip1", "dg2", Options{Apply: apply}, "The requested device group (/Common/dg2) was not found."},
		{"traffic groups on sync-only", "bigip1", "dg1", Options{Apply: apply, TrafficGroups: []TrafficGroup{{Name: "traffic-group-1"}}},
			"Device group dg1 is sync-only: traffic groups fail over only in a sync-failover device group"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Join(ctx, connect(t, srv, tt.device), tt.group, tt.opts)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("got %v\nwant %s", err, tt.want)
			}
		})
	}
	// Trusted but not listed in the group.
	admin := connect(t, srv, "admin-tool")
	dom, _ := trust.NewDomain("Root")
	id, _ := dom.Issue("bigip2")
	if err := admin.RecordTrusted(ctx, id.Cert); err != nil {
		t.Fatal(err)
	}
	_, err := Join(ctx, connect(t, srv, "bigip2"), "dg1", Options{Apply: apply})
	if err == nil || !strings.Contains(err.Error(), `Device bigip2 is not a member of device group dg1; add it with "modify cm device-group dg1 devices add { bigip2 }"`) {
		t.Fatalf("not listed: %v", err)
	}
	// Creating or growing a group with an untrusted device is refused too.
	if err := admin.CreateGroup(ctx, GroupDef{Name: "dg3", Devices: []string{"bigip1", "bigip7"}}); !errors.Is(err, ErrNotTrusted) {
		t.Fatalf("create with untrusted: %v", err)
	}
	err = admin.ModifyGroup(ctx, "dg1", func(d *GroupDef) error { d.Devices = append(d.Devices, "bigip8"); return nil })
	if !errors.Is(err, ErrNotTrusted) {
		t.Fatalf("modify with untrusted: %v", err)
	}
	if err := admin.CreateGroup(ctx, GroupDef{Name: "dg1"}); err == nil || err.Error() != "The requested device group (/Common/dg1) already exists in partition Common." {
		t.Fatalf("duplicate: %v", err)
	}
	if err := admin.CreateGroup(ctx, GroupDef{Name: "dg4", Type: "active-active"}); err == nil || !strings.Contains(err.Error(), `type "active-active" is not valid`) {
		t.Fatalf("bad type: %v", err)
	}
}

// With TLS, the etcd cluster itself refuses a device whose certificate is
// not from the trust domain, and a device removed from the domain can no
// longer join.
func TestTrustOverTLS(t *testing.T) {
	t.Parallel()
	dom, err := trust.NewDomain("Root")
	if err != nil {
		t.Fatal(err)
	}
	srvID, _ := dom.Issue("etcd", "127.0.0.1")
	files, err := srvID.WriteFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	srv := etcdtest.Start(t, etcdtest.Options{TLS: &etcdtest.TLS{CertFile: files.CertFile, KeyFile: files.KeyFile, CAFile: files.CAFile}})
	ctx := testCtx(t)

	// bigip1 holds the CA: it trusts itself, then adds bigip2 from bigip2's
	// certificate request.
	id1, _ := dom.Issue("bigip1")
	c1, err := Connect(ctx, Config{Device: "bigip1", Endpoints: srv.Endpoints(), Identity: id1, DomainCA: dom.CertPEM()})
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	if err := c1.RecordTrusted(ctx, id1.Cert); err != nil {
		t.Fatal(err)
	}
	key2, _ := trust.NewKey()
	csr, _ := trust.Request("bigip2", key2)
	cert2, err := c1.TrustDevice(ctx, dom, csr)
	if err != nil {
		t.Fatal(err)
	}
	id2 := mustIdentity(t, cert2, key2, dom)
	if err := c1.CreateGroup(ctx, GroupDef{Name: "dg1", Type: SyncFailover, Devices: []string{"bigip1", "bigip2"}}); err != nil {
		t.Fatal(err)
	}
	c2, err := Connect(ctx, Config{Device: "bigip2", Endpoints: srv.Endpoints(), Identity: id2, DomainCA: dom.CertPEM()})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	m2, err := Join(ctx, c2, "dg1", Options{Apply: func(context.Context, Generation) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	m2.Close()
	list, _ := c1.TrustedDevices(ctx)
	if len(list) != 2 || list[1].Name != "bigip2" || list[1].Fingerprint != id2.Fingerprint() {
		t.Fatalf("trusted: %+v", list)
	}

	// A device of another domain: refused before it sends anything when it
	// knows the domain's CA, and by etcd itself when it does not.
	other, _ := trust.NewDomain("Other")
	stranger, _ := other.Issue("bigip9")
	_, err = Connect(ctx, Config{Device: "bigip9", Endpoints: srv.Endpoints(), Identity: stranger, DomainCA: dom.CertPEM()})
	if !errors.Is(err, ErrNotTrusted) || !strings.Contains(err.Error(), "Device bigip9 is not in the trust domain") {
		t.Fatalf("stranger, local check: %v", err)
	}
	sid := *stranger
	sid.CA = dom.Cert() // it trusts our etcd; etcd does not trust it
	_, err = Connect(ctx, Config{Device: "bigip9", Endpoints: srv.Endpoints(), Identity: &sid, DialTimeout: 3 * time.Second})
	if !errors.Is(err, ErrNotTrusted) || !strings.Contains(err.Error(), "the etcd cluster refused its certificate") {
		t.Fatalf("stranger, etcd's check: %v", err)
	}

	// Removed from the domain: its certificate still opens etcd (until a
	// CRL says otherwise) but it cannot join.
	if err := c1.RemoveTrusted(ctx, "bigip2"); err != nil {
		t.Fatal(err)
	}
	_, err = Join(ctx, c2, "dg1", Options{Apply: func(context.Context, Generation) error { return nil }})
	if !errors.Is(err, ErrNotTrusted) {
		t.Fatalf("removed device joined: %v", err)
	}
	// A certificate for the right name but not the one recorded.
	if err := c1.RecordTrusted(ctx, id2.Cert); err != nil {
		t.Fatal(err)
	}
	forged, _ := dom.Issue("bigip2")
	c3, err := Connect(ctx, Config{Device: "bigip2", Endpoints: srv.Endpoints(), Identity: forged})
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	_, err = Join(ctx, c3, "dg1", Options{Apply: func(context.Context, Generation) error { return nil }})
	if !errors.Is(err, ErrNotTrusted) || !strings.Contains(err.Error(), "not the one the trust domain issued") {
		t.Fatalf("other certificate: %v", err)
	}
}

func mustIdentity(t *testing.T, certPEM []byte, key any, dom *trust.Domain) *trust.Identity {
	t.Helper()
	kp, err := trust.EncodeKey(key.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	id, err := trust.LoadIdentity(certPEM, kp, dom.CertPEM())
	if err != nil {
		t.Fatal(err)
	}
	return id
}
