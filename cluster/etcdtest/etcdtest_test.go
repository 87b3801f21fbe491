package etcdtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
)

func TestStartPutStopRestart(t *testing.T) {
	s := Start(t, Options{})
	cli := s.Client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v1"); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err := cli.Get(short, "k")
	cancelShort()
	if err == nil {
		t.Fatal("a stopped member answered")
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	resp, err := cli.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Fatalf("after restart: %v", resp.Kvs)
	}
}

// Launch serves callers without a testing.TB (transcript setup); a relay cut
// drops clients while etcd runs on.
func TestLaunchAndProxyCut(t *testing.T) {
	if _, err := Launch(Options{}); err == nil {
		t.Fatal("Launch without a data directory")
	}
	s, err := Launch(Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.Proxy()
	if err != nil {
		t.Fatal(err)
	}
	cli, err := clientv3.New(clientv3.Config{Endpoints: p.Endpoints(), DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := cli.Put(ctx, "k", "v"); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cli.Get(short, "k")
	cancelShort()
	if err == nil {
		t.Fatal("a cut relay passed a request")
	}
	if _, err := s.Client(t).Get(ctx, "k"); err != nil {
		t.Fatalf("etcd itself stopped answering: %v", err)
	}
	p.Restore()
	if _, err := cli.Get(ctx, "k"); err != nil {
		t.Fatalf("after restore: %v", err)
	}
}
