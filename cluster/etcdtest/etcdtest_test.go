package etcdtest

import (
	"context"
	"testing"
	"time"
)

func TestStartPutStopRestart(t *testing.T) {
	s := Start(t, Options{})
	cli := s.Client()
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
	s.Restart()
	resp, err := cli.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Kvs) != 1 || string(resp.Kvs[0].Value) != "v1" {
		t.Fatalf("after restart: %v", resp.Kvs)
	}
}
