package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/openltm/openltm/cluster/etcdtest"
)

func benchConn(b *testing.B, srv *etcdtest.Server, device string) *Conn {
	c, err := Connect(context.Background(), Config{Device: device, Endpoints: srv.Endpoints()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchCommit(b *testing.B, text string) {
	srv := etcdtest.Start(b, etcdtest.Options{})
	l := benchConn(b, srv, "bigip1").Log("dg1")
	ctx := context.Background()
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Commit(ctx, uint64(i), gen("admin", text)); err != nil {
			b.Fatal(err)
		}
	}
}

// One commit of a small configuration: the round trips of one transaction
// and etcd's fsync.
func BenchmarkCommitSmall(b *testing.B) { benchCommit(b, bigConfig(30)) }

// One commit of 30,000 objects (4.7 MB of text).
func BenchmarkCommit30000Objects(b *testing.B) { benchCommit(b, bigConfig(30000)) }

// Reading 30,000 objects back, as each device does per generation.
func BenchmarkGet30000Objects(b *testing.B) {
	srv := etcdtest.Start(b, etcdtest.Options{})
	l := benchConn(b, srv, "bigip1").Log("dg1")
	ctx := context.Background()
	text := bigConfig(30000)
	if _, err := l.Commit(ctx, 0, gen("admin", text)); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Get(ctx, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// From the start of a commit until every watching device has the new
// generation: the config-sync latency of a group of N devices.
func BenchmarkCommitToAllDevices(b *testing.B) {
	for _, c := range []struct{ n, objects int }{{3, 30}, {3, 30000}, {30, 30}, {30, 30000}, {100, 30}} {
		n, objects := c.n, c.objects
		{
			b.Run(fmt.Sprintf("devices=%d/objects=%d", n, objects), func(b *testing.B) {
				srv := etcdtest.Start(b, etcdtest.Options{})
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				w := benchConn(b, srv, "bigip0").Log("dg1")
				var chans []<-chan Generation
				for i := 0; i < n; i++ {
					chans = append(chans, benchConn(b, srv, fmt.Sprintf("bigip%d", i+1)).Log("dg1").Watch(ctx, 0))
				}
				text := bigConfig(objects)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := w.Commit(ctx, uint64(i), gen("admin", text)); err != nil {
						b.Fatal(err)
					}
					for _, ch := range chans {
						select {
						case g := <-ch:
							if g.ID != uint64(i+1) {
								b.Fatalf("got %d want %d", g.ID, i+1)
							}
						case <-time.After(time.Minute):
							b.Fatal("not delivered")
						}
					}
				}
			})
		}
	}
}
