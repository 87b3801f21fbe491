package state

import "testing"

// TestRoomPredicate: on message-balanced virtuals a room function
// replaces the connection-limit check of the balancing and of the queue
// (an idle pooled connection lets a member at its limit take a request),
// and AtConnectionLimitBeyond leaves some connections out of the count.
func TestRoomPredicate(t *testing.T) {
	for _, c := range []struct {
		name      string
		limits    []int
		reserve   []int
		idle      []int // idle pooled connections per member
		wantPick  int   // member index, -1 none
		wantQueue bool
	}{
		{"at the limit, nothing idle", []int{1}, []int{1}, []int{0}, -1, true},
		{"at the limit, one idle", []int{1}, []int{1}, []int{1}, 0, false},
		{"the second has an idle one", []int{1, 1}, []int{1, 1}, []int{0, 1}, 1, false},
		{"below the limit", []int{2}, []int{1}, []int{0}, 0, false},
	} {
		p := queuePool(true, 0, c.limits...)
		ms := p.Snap.Load().Members
		for i, n := range c.reserve {
			for k := 0; k < n; k++ {
				ms[i].Stats.TryOpen(0)
				ms[i].Node.Stats.TryOpen(0)
			}
		}
		idleOf := func(m *Member) int64 {
			for i, x := range ms {
				if x == m {
					return int64(c.idle[i])
				}
			}
			return 0
		}
		room := func(m *Member) bool { return !m.AtConnectionLimitBeyond(idleOf(m)) }
		full := func(m *Member) bool { return !room(m) }
		got := p.PickWith(nil, nil, room)
		want := (*Member)(nil)
		if c.wantPick >= 0 {
			want = ms[c.wantPick]
		}
		if got != want {
			t.Errorf("%s: PickWith chose %v, want %v", c.name, got, want)
		}
		if q := p.QueueAtWith(nil, full); q != c.wantQueue {
			t.Errorf("%s: QueueAtWith %v, want %v", c.name, q, c.wantQueue)
		}
		if r := p.HasRoomWith(room); r == c.wantQueue {
			t.Errorf("%s: HasRoomWith %v", c.name, r)
		}
	}
}

// TestQueueTook: a request woken and served is counted as Served counts
// a connection, but wakes no one after it (the next is woken when the
// member's count has moved).
func TestQueueTook(t *testing.T) {
	var q ConnQueue
	var log wakeLog
	a, b := log.waiter("a"), log.waiter("b")
	q.Join(a, 0, 0)
	q.Join(b, 0, 0)
	q.Kick()
	if got := log.take(); !sameWakes(got, []string{"a:retry"}) {
		t.Fatalf("kick woke %v", got)
	}
	q.Took(a)
	if got := log.take(); len(got) != 0 {
		t.Fatalf("Took woke %v", got)
	}
	if s := q.Stats(); s.Serviced != 1 || s.Depth != 1 {
		t.Fatalf("stats %+v", s)
	}
	q.Leave(b)
	checkDrained(t)
}
