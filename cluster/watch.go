package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// Watch delivers every generation newer than from, in order, on the
// returned channel until ctx ends, when the channel is closed. It reads what
// was committed before the call, then follows the log's keys, taking each
// new generation from the watch stream itself (reading it only when the
// stream did not carry all of it); after a
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
	// deliver sends generations next..head, taking them from the watch
	// events in hand when the commit brought everything in one
	// transaction, else reading them.
	deliver := func(head uint64, events map[string][]byte) bool {
		for ; next <= head; next++ {
			g, ok := l.fromEvents(next, events)
			var err error
			if !ok {
				g, err = l.Get(ctx, next)
			}
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
		if err != nil || !deliver(head, nil) {
			if !pause() {
				return
			}
			continue
		}
		backoff = 50 * time.Millisecond
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		// One watch over blob/, gen/ and head: a commit's chunks and
		// record arrive with it (the record and head in one response),
		// so the device need not read them again. Chunks are held
		// until their generation is delivered or they are deleted.
		events, held := map[string][]byte{}, 0
		wch := l.c.cli.Watch(wctx, l.prefix+"blob/", clientv3.WithRange(l.headKey()+"\x00"), clientv3.WithRev(rev+1))
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
				var h uint64
				for _, ev := range wr.Events {
					k := string(ev.Kv.Key)
					if ev.Type != clientv3.EventTypePut {
						held -= len(events[k])
						delete(events, k)
						continue
					}
					if k == l.headKey() {
						if v, err := parseHead(ev.Kv.Value); err == nil && v > h {
							h = v
						}
						continue
					}
					held += len(ev.Kv.Value) - len(events[k])
					events[k] = ev.Kv.Value
				}
				if h > 0 {
					if !deliver(h, events) {
						ok = false
					}
					// Everything up to the head is delivered; keep
					// only chunks staged for later generations.
					later := l.blobBase(h + 1)
					for k := range events {
						if !strings.HasPrefix(k, l.prefix+"blob/") || k < later {
							held -= len(events[k])
							delete(events, k)
						}
					}
				}
				if held > maxHeld {
					events, held = map[string][]byte{}, 0
				}
			}
		}
		cancel()
		if ctx.Err() == nil && !pause() {
			return
		}
	}
}

// maxHeld bounds the chunks a watch holds for generations not yet
// published (a device that died mid-commit leaves its chunks behind);
// past it they are dropped and read from etcd if ever needed.
const maxHeld = 64 << 20

// fromEvents builds generation id from the keys a watch response carried,
// when its record and all its chunks are there.
func (l *Log) fromEvents(id uint64, events map[string][]byte) (Generation, bool) {
	v, ok := events[l.genKey(id)]
	if !ok {
		return Generation{}, false
	}
	var r record
	if json.Unmarshal(v, &r) != nil || r.ID != id {
		return Generation{}, false
	}
	chunks := make([][]byte, r.Chunks)
	for i := range chunks {
		c, ok := events[chunkKey(r.Blob, i)]
		if !ok {
			return Generation{}, false
		}
		chunks[i] = c
	}
	g, err := l.assemble(r, chunks)
	return g, err == nil
}
