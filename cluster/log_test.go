package cluster

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
	"github.com/openltm/openltm/objects/store"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func connect(t *testing.T, srv *etcdtest.Server, device string) *Conn {
	t.Helper()
	c, err := Connect(testCtx(t), Config{Device: device, Endpoints: srv.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func gen(user, config string) store.Generation {
	return store.Generation{User: user, Summary: "modify ltm pool p1", Config: config}
}

// bigConfig is a bigip.conf text of n objects (nodes, pools, virtuals).
func bigConfig(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&b, "ltm node /Common/10.%d.%d.%d {\n    address 10.%d.%d.%d\n}\n", i>>16&255, i>>8&255, i&255, i>>16&255, i>>8&255, i&255)
		case 1:
			fmt.Fprintf(&b, "ltm pool /Common/pool_%d {\n    members {\n        /Common/10.0.%d.%d:80 {\n            address 10.0.%d.%d\n        }\n    }\n    monitor /Common/http\n}\n", i, i>>8&255, i&255, i>>8&255, i&255)
		default:
			fmt.Fprintf(&b, "ltm virtual /Common/vs_%d {\n    destination /Common/192.0.%d.%d:443\n    ip-protocol tcp\n    mask 255.255.255.255\n    pool /Common/pool_%d\n    profiles {\n        /Common/tcp { }\n    }\n    source 0.0.0.0/0\n    translate-address enabled\n    translate-port enabled\n}\n", i, i>>8&255, i&255, i-1)
		}
	}
	return b.String()
}

func TestCommitGetListLatest(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	l := connect(t, srv, "bigip1").Log("dg1")

	if _, ok, err := l.Latest(ctx); ok || err != nil {
		t.Fatalf("empty group: ok=%v err=%v", ok, err)
	}
	if _, err := l.Get(ctx, 1); err == nil || !strings.Contains(err.Error(), "no generation has been committed to device group dg1 yet") {
		t.Fatalf("get on empty: %v", err)
	}
	for i := 1; i <= 3; i++ {
		id, err := l.Commit(ctx, uint64(i-1), gen("admin", fmt.Sprintf("ltm pool /Common/p%d { }\n", i)))
		if err != nil || id != uint64(i) {
			t.Fatalf("commit %d: id=%d err=%v", i, id, err)
		}
	}
	g, ok, err := l.Latest(ctx)
	if err != nil || !ok || g.ID != 3 || g.Config != "ltm pool /Common/p3 { }\n" || g.Device != "bigip1" || g.User != "admin" {
		t.Fatalf("latest: %+v %v %v", g, ok, err)
	}
	list, err := l.List(ctx)
	if err != nil || len(list) != 3 || list[0].ID != 1 || list[2].Summary != "modify ltm pool p1" {
		t.Fatalf("list: %+v %v", list, err)
	}
	if _, err := l.Get(ctx, 9); err == nil || !strings.Contains(err.Error(), "keeps generations 1 to 3") {
		t.Fatalf("get 9: %v", err)
	}
}

func TestConflictOrdersTwoDevices(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	a := connect(t, srv, "bigip1").Log("dg1")
	b := connect(t, srv, "bigip2").Log("dg1")
	if _, err := a.Commit(ctx, 0, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	// Both made their change against generation 1.
	if _, err := a.Commit(ctx, 1, gen("alice", "two from a\n")); err != nil {
		t.Fatal(err)
	}
	_, err := b.Commit(ctx, 1, gen("bob", "two from b\n"))
	var ce *ConflictError
	if !errors.As(err, &ce) || !errors.Is(err, ErrConflict) || ce.Head != 2 || ce.By != "bigip1" {
		t.Fatalf("want conflict at head 2 by bigip1, got %v", err)
	}
	if !strings.Contains(err.Error(), "made against generation 1, but generation 2 was committed by bigip1") {
		t.Fatalf("message: %v", err)
	}
	// Retry against the new head wins.
	if id, err := b.Commit(ctx, ce.Head, gen("bob", "three from b\n")); err != nil || id != 3 {
		t.Fatalf("retry: %d %v", id, err)
	}
	// A base of 0 on a group that has history is a conflict too.
	if _, err := b.Commit(ctx, 0, gen("bob", "x")); !errors.Is(err, ErrConflict) {
		t.Fatalf("base 0: %v", err)
	}
}

// Many committers at once: every generation number is taken exactly once,
// every success is in the log, and losers leave no chunks behind.
func TestConcurrentCommitsAreSerial(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	var logs []*Log
	for i := 0; i < 3; i++ {
		l := connect(t, srv, fmt.Sprintf("bigip%d", i+1)).Log("dg1")
		l.chunk = 64 // force staged chunks so the losers' cleanup is exercised
		logs = append(logs, l)
	}
	// A fourth device watches: it sees every generation once, in order,
	// with the winner's text, though the losers' chunks pass by too.
	watched := connect(t, srv, "bigip4").Log("dg1").Watch(ctx, 0)
	const perDevice = 8
	var mu sync.Mutex
	won := map[uint64]string{}
	var wg sync.WaitGroup
	for i, l := range logs {
		wg.Add(1)
		go func(i int, l *Log) {
			defer wg.Done()
			for n := 0; n < perDevice; n++ {
				text := strings.Repeat(fmt.Sprintf("device %d change %d\n", i, n), 20)
				for try := 0; try < 100; try++ {
					head, err := l.Head(ctx)
					if err != nil {
						t.Error(err)
						return
					}
					id, err := l.Commit(ctx, head, gen("admin", text))
					if errors.Is(err, ErrConflict) {
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					if prev, dup := won[id]; dup {
						t.Errorf("generation %d committed twice (%q and %q)", id, prev, text)
					}
					won[id] = text
					mu.Unlock()
					break
				}
			}
		}(i, l)
	}
	wg.Wait()
	if len(won) != 3*perDevice {
		t.Fatalf("%d commits won, want %d", len(won), 3*perDevice)
	}
	for id, text := range won {
		g, err := logs[0].Get(ctx, id)
		if err != nil || g.Config != text {
			t.Fatalf("generation %d: %v", id, err)
		}
	}
	for id := uint64(1); id <= uint64(len(won)); id++ {
		select {
		case g := <-watched:
			if g.ID != id || g.Config != won[id] {
				t.Fatalf("watch delivered %d, want %d with its text", g.ID, id)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("watch did not deliver generation %d", id)
		}
	}
	resp, err := logs[0].c.cli.Get(ctx, logs[0].prefix+"blob/", clientv3.WithPrefix(), clientv3.WithKeysOnly())
	if err != nil {
		t.Fatal(err)
	}
	blobs := map[string]bool{}
	for _, kv := range resp.Kvs {
		k := string(kv.Key)
		blobs[k[:strings.LastIndex(k, "/")]] = true
	}
	if len(blobs) != len(won) {
		t.Fatalf("%d blobs for %d generations: losers left chunks", len(blobs), len(won))
	}
}

func TestPruneKeepsLast100(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	l := connect(t, srv, "bigip1").Log("dg1")
	for i := uint64(0); i < store.Keep+5; i++ {
		if _, err := l.Commit(ctx, i, gen("admin", fmt.Sprintf("config %d\n", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	list, err := l.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != store.Keep || list[0].ID != 6 || list[len(list)-1].ID != store.Keep+5 {
		t.Fatalf("kept %d: %d..%d", len(list), list[0].ID, list[len(list)-1].ID)
	}
	resp, _ := l.c.cli.Get(ctx, l.prefix+"blob/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if resp.Count != store.Keep {
		t.Fatalf("%d chunks kept, want %d", resp.Count, store.Keep)
	}
	if _, err := l.Get(ctx, 5); err == nil || !strings.Contains(err.Error(), "keeps generations 6 to 105") {
		t.Fatalf("pruned get: %v", err)
	}
}

// 30,000 objects, several MB: more than etcd accepts in one request. The
// text is compressed; a text that does not compress below the request limit
// (certificates, iRules, data groups) is split into chunks. Either way it is
// published by one transaction and read back intact.
func TestLargeConfiguration(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	a := connect(t, srv, "bigip1").Log("dg1")
	b := connect(t, srv, "bigip2").Log("dg1")
	random := make([]byte, 3*int(srv.MaxRequestBytes()))
	for i := range random {
		random[i] = byte(rand.IntN(256))
	}
	tests := []struct {
		name string
		text string
	}{
		{"30000 objects", bigConfig(30000)},
		{"30000 objects and incompressible data", bigConfig(30000) + "# " + hex.EncodeToString(random) + "\n"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.text) < 3*int(srv.MaxRequestBytes()) {
				t.Fatalf("test config is only %d bytes", len(tt.text))
			}
			base := uint64(i)
			start := time.Now()
			id, err := a.Commit(ctx, base, gen("admin", tt.text))
			if err != nil {
				t.Fatal(err)
			}
			commit := time.Since(start)
			start = time.Now()
			g, err := b.Get(ctx, id)
			if err != nil || g.Config != tt.text {
				t.Fatalf("read back: %v (len %d of %d)", err, len(g.Config), len(tt.text))
			}
			read := time.Since(start)
			list, _ := a.List(ctx)
			info := list[len(list)-1]
			t.Logf("%d bytes stored as %d: commit %v, read %v", info.Size, info.Stored, commit, read)
			// A stale commit of a big text loses cleanly and leaves no
			// chunks.
			if _, err := b.Commit(ctx, base, gen("bob", tt.text)); !errors.Is(err, ErrConflict) {
				t.Fatalf("stale big commit: %v", err)
			}
			resp, _ := a.c.cli.Get(ctx, a.blobBase(id)+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
			if want := int64((info.Stored + ChunkSize - 1) / ChunkSize); resp.Count != want {
				t.Fatalf("%d chunks stored, want %d", resp.Count, want)
			}
		})
	}
}

// Three devices watch; each commit of a fourth reaches all of them in
// order. Reports the commit-to-delivery latency.
func TestWatchDeliversToThreeDevices(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	writer := connect(t, srv, "bigip1").Log("dg1")
	if _, err := writer.Commit(ctx, 0, gen("admin", "before the watch\n")); err != nil {
		t.Fatal(err)
	}
	const n = 20
	var chans []<-chan Generation
	for i := 0; i < 3; i++ {
		chans = append(chans, connect(t, srv, fmt.Sprintf("bigip%d", i+2)).Log("dg1").Watch(ctx, 0))
	}
	var lat []time.Duration
	for i := uint64(1); i <= n+1; i++ {
		var sent time.Time
		if i > 1 {
			sent = time.Now()
			if _, err := writer.Commit(ctx, i-1, gen("admin", fmt.Sprintf("config %d\n", i))); err != nil {
				t.Fatal(err)
			}
		}
		for d, ch := range chans {
			select {
			case g := <-ch:
				if g.ID != i {
					t.Fatalf("device %d got generation %d, want %d", d, g.ID, i)
				}
				if i > 1 {
					lat = append(lat, time.Since(sent))
				}
			case <-time.After(20 * time.Second):
				t.Fatalf("device %d: generation %d not delivered", d, i)
			}
		}
	}
	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	t.Logf("commit to delivery on 3 devices, %d samples: median %v, p90 %v, max %v",
		len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}

// etcd stops and comes back on the same data: commits are refused with a
// typed error meanwhile, and the watch delivers what was committed after
// the restart without a gap.
func TestEtcdDownAndBack(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	c := connect(t, srv, "bigip1")
	c.cfg.RequestTimeout = 500 * time.Millisecond
	l := c.Log("dg1")
	watcher := connect(t, srv, "bigip2").Log("dg1")
	if _, err := l.Commit(ctx, 0, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	ch := watcher.Watch(ctx, 0)
	if g := <-ch; g.ID != 1 {
		t.Fatalf("first delivery %d", g.ID)
	}
	srv.Stop()
	_, err := l.Commit(ctx, 1, gen("admin", "two\n"))
	var de *DisconnectedError
	if !errors.As(err, &de) || !errors.Is(err, ErrDisconnected) {
		t.Fatalf("commit with etcd down: %v", err)
	}
	if !strings.Contains(err.Error(), "Unable to commit to device group dg1: the device group's etcd cluster") {
		t.Fatalf("message: %v", err)
	}
	if ok, _ := c.Connected(); ok {
		t.Fatal("Connected() true with etcd down")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	var id uint64
	deadline := time.Now().Add(30 * time.Second)
	for {
		id, err = l.Commit(ctx, 1, gen("admin", "two\n"))
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || id != 2 {
		t.Fatalf("commit after restart: %v", err)
	}
	if ok, _ := c.Connected(); !ok {
		t.Fatal("Connected() false after a successful commit")
	}
	select {
	case g := <-ch:
		if g.ID != 2 || g.Config != "two\n" {
			t.Fatalf("after restart got %d %q", g.ID, g.Config)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("watch did not catch up after etcd returned")
	}
}

// A generation whose chunks were altered in etcd is reported, not applied.
func TestDamagedGeneration(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	l := connect(t, srv, "bigip1").Log("dg1")
	if _, err := l.Commit(ctx, 0, gen("admin", "ltm pool /Common/p1 { }\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Commit(ctx, 1, gen("admin", bigConfig(3000))); err != nil {
		t.Fatal(err)
	}
	for id := uint64(1); id <= 2; id++ {
		r, err := l.record(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.c.cli.Put(ctx, chunkKey(r.Blob, 0), "ltm pool /Common/evil { }\n"); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Get(ctx, id); !errors.Is(err, ErrDamaged) || !strings.Contains(err.Error(), fmt.Sprintf("device group dg1 generation %d is damaged", id)) {
			t.Fatalf("generation %d: %v", id, err)
		}
	}
	// A watcher skips them and goes on with the next good generation.
	if _, err := l.Commit(ctx, 2, gen("admin", "three\n")); err != nil {
		t.Fatal(err)
	}
	select {
	case g := <-connect(t, srv, "bigip2").Log("dg1").Watch(ctx, 0):
		if g.ID != 3 || g.Config != "three\n" {
			t.Fatalf("watch delivered %d %q", g.ID, g.Config)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("watch stuck on a damaged generation")
	}
}

// A device cut off while the group moved on and etcd compacted its history
// still receives every generation, in order, when it is back.
func TestWatchCatchesUpAfterCompaction(t *testing.T) {
	srv := etcdtest.Start(t, etcdtest.Options{})
	ctx := testCtx(t)
	w := connect(t, srv, "bigip1").Log("dg1")
	px := srv.NewProxy(t)
	c, err := Connect(ctx, Config{Device: "bigip2", Endpoints: px.Endpoints()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ch := c.Log("dg1").Watch(ctx, 0)
	if _, err := w.Commit(ctx, 0, gen("admin", "one\n")); err != nil {
		t.Fatal(err)
	}
	if g := <-ch; g.ID != 1 {
		t.Fatalf("got %d", g.ID)
	}
	px.Cut()
	var rev int64
	for i := uint64(1); i <= 3; i++ {
		if _, err := w.Commit(ctx, i, gen("admin", fmt.Sprintf("config %d\n", i+1))); err != nil {
			t.Fatal(err)
		}
	}
	resp, err := w.c.cli.Get(ctx, w.headKey())
	if err != nil {
		t.Fatal(err)
	}
	rev = resp.Header.Revision
	if _, err := w.c.cli.Compact(ctx, rev); err != nil {
		t.Fatal(err)
	}
	px.Restore()
	for want := uint64(2); want <= 4; want++ {
		select {
		case g := <-ch:
			if g.ID != want || g.Config != fmt.Sprintf("config %d\n", want) {
				t.Fatalf("got %d %q, want %d", g.ID, g.Config, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatalf("generation %d not delivered after the partition", want)
		}
	}
}
