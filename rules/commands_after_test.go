package rules

import (
	"errors"
	"sort"
	"strings"
	"testing"
	"time"
)

// schedConn is a fake connection with a manual clock: scheduled
// functions run when the test advances time, in deadline order, as a
// host serialising them with events would.
type schedConn struct {
	*fakeConn
	now    time.Duration
	seq    int
	timers []*fakeTimer
	// errs are the errors the scheduled functions returned, as a host
	// would reset the connection on them.
	errs []error
}

type fakeTimer struct {
	at      time.Duration
	seq     int
	fn      func() error
	stopped bool
}

func newSchedConn() *schedConn { return &schedConn{fakeConn: newFakeConn()} }

func (c *schedConn) After(d time.Duration, fn func() error) func() {
	c.seq++
	t := &fakeTimer{at: c.now + d, seq: c.seq, fn: fn}
	c.timers = append(c.timers, t)
	return func() { t.stopped = true }
}

// pending is the number of live timers.
func (c *schedConn) pending() int {
	n := 0
	for _, t := range c.timers {
		if !t.stopped {
			n++
		}
	}
	return n
}

// advance moves the clock by d, running what falls due in order.
func (c *schedConn) advance(d time.Duration) {
	end := c.now + d
	for range 10000 {
		live := c.timers[:0]
		for _, t := range c.timers {
			if !t.stopped {
				live = append(live, t)
			}
		}
		c.timers = live
		sort.Slice(c.timers, func(i, j int) bool {
			if c.timers[i].at != c.timers[j].at {
				return c.timers[i].at < c.timers[j].at
			}
			return c.timers[i].seq < c.timers[j].seq
		})
		if len(c.timers) == 0 || c.timers[0].at > end {
			break
		}
		t := c.timers[0]
		c.timers = c.timers[1:]
		c.now = t.at
		if err := t.fn(); err != nil {
			c.errs = append(c.errs, err)
		}
	}
	c.now = end
}

// afterRun compiles body as CLIENT_ACCEPTED and runs it on a scheduling
// connection.
func afterRun(t *testing.T, body string) (*ConnState, *schedConn, *logSink) {
	t.Helper()
	logs := &logSink{}
	p := NewProgram(&Env{Log: logs.log}, mustCompile(t, "/Common/r", body))
	c := newSchedConn()
	s := p.NewConnState(c)
	t.Cleanup(s.Release)
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	return s, c, logs
}

func TestAfterAsync(t *testing.T) {
	cases := []struct {
		name string
		body string
		// steps advance the clock, in ms; want is the log after them.
		steps   []int
		want    []string
		pending int
	}{
		{
			name:  "returns at once and runs later, in deadline order",
			body:  `when CLIENT_ACCEPTED { set x 1; after 200 { log local0. "b $x" }; after 100 { log local0. "a $x" }; set x 2; log local0. now }`,
			steps: []int{150, 100},
			want:  []string{"now", "a 2", "b 2"},
		},
		{
			name:  "cancel by id",
			body:  `when CLIENT_ACCEPTED { set id [after 100 { log local0. no }]; after 200 { log local0. yes }; after cancel $id }`,
			steps: []int{300},
			want:  []string{"yes"},
		},
		{
			name:  "cancel -all and unknown ids",
			body:  `when CLIENT_ACCEPTED { after 100 { log local0. a }; after 100 { log local0. b }; after cancel nosuch -all }`,
			steps: []int{300},
		},
		{
			name:  "periodic until -current inside the script",
			body:  `when CLIENT_ACCEPTED { set n 0; after 100 -periodic { incr n; log local0. "tick $n"; if { $n >= 3 } { after cancel -current } } }`,
			steps: []int{1000},
			want:  []string{"tick 1", "tick 2", "tick 3"},
		},
		{
			name:    "periodic cancelled by a one-shot script",
			body:    `when CLIENT_ACCEPTED { set p [after 100 -periodic { log local0. tick }]; after 250 "after cancel $p" }`,
			steps:   []int{1000},
			want:    []string{"tick", "tick"},
			pending: 0,
		},
		{
			name:    "info lists pending ids and returns a script",
			body:    `when CLIENT_ACCEPTED { set a [after 100 { log local0. one }]; set b [after 100 -periodic { log local0. two }]; log local0. "[after info] | [after info $a]" }`,
			want:    []string{"after#1 after#2 |  log local0. one "},
			pending: 2,
		},
		{
			name:  "after without a script still waits in the event",
			body:  `when CLIENT_ACCEPTED { after 1; log local0. waited }`,
			want:  []string{"waited"},
			steps: []int{10},
		},
		{
			name:  "several words are one script, as concat makes it",
			body:  `when CLIENT_ACCEPTED { after 10 log local0. hi }`,
			steps: []int{10},
			want:  []string{"hi"},
		},
		{
			name:  "the script runs in the scheduling event's name",
			body:  `when CLIENT_ACCEPTED { after 10 { log local0. "[event name]" } }`,
			steps: []int{10},
			want:  []string{"CLIENT_ACCEPTED"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, c, logs := afterRun(t, tc.body)
			for _, ms := range tc.steps {
				c.advance(time.Duration(ms) * time.Millisecond)
			}
			var got []string
			for _, l := range logs.lines {
				got = append(got, l[strings.Index(l, ": ")+2:])
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("log %q, want %q", got, tc.want)
			}
			if n := s.PendingAfters(); n != tc.pending {
				t.Errorf("pending %d, want %d", n, tc.pending)
			}
			if n := c.pending(); n != tc.pending {
				t.Errorf("live timers %d, want %d", n, tc.pending)
			}
			if len(c.errs) > 0 {
				t.Errorf("errors %v", c.errs)
			}
		})
	}
}

func TestAfterScriptErrorIsTheConnections(t *testing.T) {
	_, c, logs := afterRun(t, `when CLIENT_ACCEPTED { after 100 { error boom } }`)
	c.advance(200 * time.Millisecond)
	var re *RuntimeError
	if len(c.errs) != 1 || !errors.As(c.errs[0], &re) {
		t.Fatalf("errors %v", c.errs)
	}
	if len(logs.lines) != 1 || !strings.HasPrefix(logs.lines[0], "local0.err TCL error: /Common/r <CLIENT_ACCEPTED> - ") {
		t.Errorf("log %q", logs.lines)
	}
}

func TestAfterReleaseCancelsAll(t *testing.T) {
	p := NewProgram(nil, mustCompile(t, "r", `when CLIENT_ACCEPTED { after 100 -periodic { log local0. x }; after 100 { log local0. y } }`))
	c := newSchedConn()
	s := p.NewConnState(c)
	if err := s.Run(ClientAccepted); err != nil {
		t.Fatal(err)
	}
	if c.pending() != 2 {
		t.Fatalf("timers %d", c.pending())
	}
	s.Release()
	if c.pending() != 0 {
		t.Errorf("timers %d after release", c.pending())
	}
}

func TestAfterBound(t *testing.T) {
	p := NewProgram(nil, mustCompile(t, "r", `when CLIENT_ACCEPTED { for {set i 0} {$i < 100} {incr i} { after 1000 { log local0. x } } }`))
	c := newSchedConn()
	s := p.NewConnState(c)
	defer s.Release()
	err := s.Run(ClientAccepted)
	if err == nil || !strings.Contains(err.Error(), "64 scripts are already pending") {
		t.Fatalf("err %v", err)
	}
	if s.PendingAfters() != MaxPendingAfters {
		t.Errorf("pending %d", s.PendingAfters())
	}
}

func TestAfterWithoutScheduler(t *testing.T) {
	cases := []struct{ expr, want, err string }{
		{"after 1 { set ::y ran }; set ::y", "ran", ""},
		{"after 1 -periodic { set ::y ran }", "", "after -periodic: not supported"},
		{"after info", "", ""},
		{"after cancel -all", "", ""},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			got, err := evalIn(t, newFakeConn(), nil, ClientAccepted, c.expr)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Errorf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil || got != c.want {
				t.Errorf("got %q %v, want %q", got, err, c.want)
			}
		})
	}
}

func TestAfterErrors(t *testing.T) {
	cases := []struct{ expr, want string }{
		{"set p -periodic; after 10 $p", "wrong # args"},
		{"after 0 -periodic { log local0. x }", "period must be at least 1 ms"},
		{"after info after#9", `event "after#9" doesn't exist`},
		{"after cancel", "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.expr, func(t *testing.T) {
			_, err := evalIn(t, newSchedConn(), nil, ClientAccepted, c.expr)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}
