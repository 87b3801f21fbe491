package state

import (
	"sync"
	"sync/atomic"
)

// Keyed connection limits (LB::connlimit ... key K): a rule's limit that
// counts, on the virtual, a member or a node, only the connections
// balanced with the same key (a client's address, a user name), so that
// one key cannot take all of an object's room while the others still
// find it. The counts live in one table shared by every data path,
// touched only by connections whose rule named a key: a decision
// without one costs the comparison it did before.

// keyRef is one object's count for one key: obj is a *Virtual, *Member
// or *Node, which survive commits that keep them.
type keyRef struct {
	obj any
	key string
}

// keyTable is every keyed count above zero.
var keyTable struct {
	mu sync.Mutex
	n  map[keyRef]int64
}

// KeyCount is how many connections hold obj's count for key (tests, and
// the rule limits' checks before a choice).
func KeyCount(obj any, key string) int64 {
	keyTable.mu.Lock()
	defer keyTable.mu.Unlock()
	return keyTable.n[keyRef{obj, key}]
}

// others is how many connections other than h's hold obj's count for
// key (h may be nil).
func (h *KeyHolds) others(obj any, key string) int64 {
	r := keyRef{obj, key}
	keyTable.mu.Lock()
	defer keyTable.mu.Unlock()
	n := keyTable.n[r]
	if h != nil && (h.member == r || h.node == r) {
		n--
	}
	return n
}

// KeyHolds are the keyed counts one connection holds: on its virtual
// from its first balancing with a keyed virtual limit, and on the member
// (and its node) it was last balanced to, until the connection ends
// (Release) or is balanced anew. Its zero value holds none; its refs
// change under keyTable.mu, and held says, without the lock, whether it
// ever held one.
type KeyHolds struct {
	virtual, member, node keyRef
	held                  atomic.Bool
}

// Release gives back every count h holds; the connection is ending.
func (h *KeyHolds) Release() {
	if h == nil || !h.held.Load() {
		return
	}
	keyTable.mu.Lock()
	h.virtual = dropKey(h.virtual)
	h.member = dropKey(h.member)
	h.node = dropKey(h.node)
	keyTable.mu.Unlock()
}

// dropKey takes r's count back, under keyTable.mu; it returns the zero
// ref, which holds nothing.
func dropKey(r keyRef) keyRef {
	if r.obj == nil {
		return r
	}
	if n := keyTable.n[r] - 1; n > 0 {
		keyTable.n[r] = n
	} else {
		delete(keyTable.n, r)
	}
	return keyRef{}
}

// addKey counts r, under keyTable.mu.
func addKey(r keyRef) keyRef {
	if keyTable.n == nil {
		keyTable.n = make(map[keyRef]int64)
	}
	keyTable.n[r]++
	return r
}

// holdVirtual counts the connection on v under key unless v already
// holds limit connections with that key (the connection's own count
// aside); false: the virtual is over the limit for this key.
func (h *KeyHolds) holdVirtual(v *Virtual, key string, limit int64) bool {
	r := keyRef{v, key}
	keyTable.mu.Lock()
	defer keyTable.mu.Unlock()
	n := keyTable.n[r]
	if h.virtual == r {
		return n <= limit
	}
	if n >= limit {
		return false
	}
	dropKey(h.virtual)
	h.virtual = addKey(r)
	h.held.Store(true)
	return true
}

// holdMember moves the connection's member and node counts to m (and its
// node) under the limits' keys, unless m or its node already holds as
// many connections with the key as the limit allows; false: m is over a
// keyed limit and nothing changed.
func (h *KeyHolds) holdMember(m *Member, l *RuleLimits) bool {
	mr, nr := keyRef{}, keyRef{}
	if l.MemberKey != "" && l.Member > 0 {
		mr = keyRef{m, l.MemberKey}
	}
	if l.NodeKey != "" && l.Node > 0 {
		nr = keyRef{m.Node, l.NodeKey}
	}
	if mr.obj == nil && nr.obj == nil && !h.held.Load() {
		return true
	}
	keyTable.mu.Lock()
	defer keyTable.mu.Unlock()
	if mr.obj != nil && h.member != mr && keyTable.n[mr] >= l.Member {
		return false
	}
	if nr.obj != nil && h.node != nr && keyTable.n[nr] >= l.Node {
		return false
	}
	h.held.Store(true)
	if h.member != mr {
		dropKey(h.member)
		h.member = mr
		if mr.obj != nil {
			addKey(mr)
		}
	}
	if h.node != nr {
		dropKey(h.node)
		h.node = nr
		if nr.obj != nil {
			addKey(nr)
		}
	}
	return true
}
