package cluster

import (
	"context"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// mirror keeps a local copy of the keys under one prefix, loaded once and
// then followed by a watch, and says when it changed. A member keeps its
// group's small keys (definition, presence, states, traffic-group owners)
// this way instead of polling etcd.
type mirror struct {
	c      *Conn
	prefix string

	mu     sync.Mutex
	kv     map[string]*mvccpb.KeyValue
	loaded bool

	subs []chan struct{} // each holds at most one pending notification
}

func newMirror(c *Conn, prefix string) *mirror {
	return &mirror{c: c, prefix: prefix, kv: map[string]*mvccpb.KeyValue{}}
}

// subscribe returns a channel that receives a value after changes; call it
// before run.
func (m *mirror) subscribe() <-chan struct{} {
	ch := make(chan struct{}, 1)
	m.subs = append(m.subs, ch)
	return ch
}

func (m *mirror) notify() {
	for _, ch := range m.subs {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// load reads the prefix afresh and returns the revision to watch from.
func (m *mirror) load(ctx context.Context) (int64, error) {
	rctx, cancel := m.c.reqCtx(ctx)
	resp, err := m.c.cli.Get(rctx, m.prefix, clientv3.WithPrefix())
	cancel()
	if err := m.c.note("read the device group", err); err != nil {
		return 0, err
	}
	kv := make(map[string]*mvccpb.KeyValue, len(resp.Kvs))
	for _, x := range resp.Kvs {
		kv[string(x.Key)] = x
	}
	m.mu.Lock()
	m.kv = kv
	m.loaded = true
	m.mu.Unlock()
	m.notify()
	return resp.Header.Revision, nil
}

// run follows the prefix until ctx ends, reloading after any watch failure.
func (m *mirror) run(ctx context.Context, rev int64) {
	for ctx.Err() == nil {
		if rev == 0 {
			var err error
			if rev, err = m.load(ctx); err != nil {
				select {
				case <-ctx.Done():
				case <-time.After(200 * time.Millisecond):
				}
				continue
			}
		}
		wctx, cancel := context.WithCancel(clientv3.WithRequireLeader(ctx))
		for wr := range m.c.cli.Watch(wctx, m.prefix, clientv3.WithPrefix(), clientv3.WithRev(rev+1)) {
			if wr.Err() != nil {
				_ = m.c.note("watch the device group", wr.Err())
				break
			}
			m.mu.Lock()
			for _, ev := range wr.Events {
				if ev.Type == clientv3.EventTypeDelete {
					delete(m.kv, string(ev.Kv.Key))
				} else {
					m.kv[string(ev.Kv.Key)] = ev.Kv
				}
			}
			m.mu.Unlock()
			m.notify()
		}
		cancel()
		rev = 0
	}
}

// get returns the key's value (nil when absent).
func (m *mirror) get(key string) *mvccpb.KeyValue {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.kv[m.prefix+key]
}

// under returns the names below sub/ with their values.
func (m *mirror) under(sub string) map[string]*mvccpb.KeyValue {
	p := m.prefix + sub
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]*mvccpb.KeyValue{}
	for k, v := range m.kv {
		if rest, ok := strings.CutPrefix(k, p); ok && !strings.Contains(rest, "/") {
			out[rest] = v
		}
	}
	return out
}
