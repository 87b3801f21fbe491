package cluster

import (
	"context"
	"errors"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch delivers every generation newer than from, in order, on the
// returned channel until ctx ends, when the channel is closed. It reads what
// was committed before the call, then follows the head key; after a
// disconnect, a compaction or a lost leader it reads again from the head and
// goes on from the last generation it delivered, so nothing is skipped or
// repeated. Only a device more than store.Keep generations behind misses
// generations: they are pruned, and it receives the oldest kept one next
// (each generation is a whole configuration, so applying the newest is
// enough).
//
// A generation whose text is damaged in etcd (ErrDamaged) is skipped.
// The receiver must keep reading; Watch does not drop generations.
func (l *Log) Watch(ctx context.Context, from uint64) <-chan Generation {
	out := make(chan Generation, 16)
	go l.watch(ctx, from, out)
	return out
}

func (l *Log) watch(ctx context.Context, next uint64, out chan<- Generation) {
	defer close(out)
	next++
	backoff := 50 * time.Millisecond
	pause := func() bool {
		t := time.NewTimer(backoff)
		defer t.Stop()
		if backoff < time.Second {
			backoff *= 2
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			return true
		}
	}
	// deliver sends generations next..head.
	deliver := func(head uint64) bool {
		for ; next <= head; next++ {
			g, err := l.Get(ctx, next)
			if errors.Is(err, ErrDamaged) {
				// Not deliverable; the next generation is a whole
				// configuration again. SyncFromGroup reports it if
				// it is the newest.
				continue
			}
			if err != nil {
				if ctx.Err() != nil || unreachable(err) {
					return false
				}
				// Pruned: skip to the oldest kept generation.
				list, lerr := l.List(ctx)
				if lerr != nil || len(list) == 0 {
					return false
				}
				if list[0].ID > next {
					next = list[0].ID - 1
					continue
				}
				return false
			}
			select {
			case out <- g:
			case <-ctx.Done():
				return false
			}
		}
		return true
	}
	for ctx.Err() == nil {
		head, rev, err := l.head(ctx)
		if err != nil || !deliver(head) {
			if !pause() {
				return
			}
			continue
		}
		backoff = 50 * time.Millisecond
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		wch := l.c.cli.Watch(wctx, l.headKey(), clientv3.WithRev(rev+1))
		ok := true
		for ok {
			select {
			case <-ctx.Done():
				ok = false
			case wr, open := <-wch:
				if !open || wr.Err() != nil || wr.Canceled {
					if wr.Err() != nil {
						_ = l.c.note(l.readOp(), wr.Err())
					}
					ok = false
					break
				}
				for _, ev := range wr.Events {
					if ev.Type != clientv3.EventTypePut {
						continue
					}
					h, err := parseHead(ev.Kv.Value)
					if err != nil || !deliver(h) {
						ok = false
						break
					}
				}
			}
		}
		cancel()
		if ctx.Err() == nil && !pause() {
			return
		}
	}
}
