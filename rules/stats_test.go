package rules

import (
	"sync"
	"testing"
	"time"
)

// TestRuleStats runs events through rules and checks what each rule
// counts per event: executions, failures (Tcl errors), aborts (reject,
// drop, discard, a budget overrun), and that a time was taken.
func TestRuleStats(t *testing.T) {
	type want struct {
		ev                      Event
		prio                    int
		execs, failures, aborts uint64
	}
	tests := []struct {
		name string
		body string
		run  []Event // each on a new connection; ClientData after ClientAccepted on the same one
		want []want
	}{
		{
			name: "ok",
			body: `when CLIENT_ACCEPTED { set a 1 }`,
			run:  []Event{ClientAccepted, ClientAccepted, ClientAccepted},
			want: []want{{ClientAccepted, 500, 3, 0, 0}},
		},
		{
			name: "tcl error",
			body: `when CLIENT_ACCEPTED { if {[IP::client_addr] ne ""} { error boom } }
when CLIENT_CLOSED priority 100 { set b 1 }`,
			run:  []Event{ClientAccepted, ClientClosed, ClientAccepted},
			want: []want{{ClientAccepted, 500, 2, 2, 0}, {ClientClosed, 100, 1, 0, 0}},
		},
		{
			name: "caught error is no failure",
			body: `when CLIENT_ACCEPTED { catch { error boom } }`,
			run:  []Event{ClientAccepted},
			want: []want{{ClientAccepted, 500, 1, 0, 0}},
		},
		{
			name: "reject drop discard abort; forward does not",
			body: `when CLIENT_ACCEPTED { reject }
when CLIENT_DATA { drop }
when SERVER_DATA { discard }
when LB_SELECTED { forward }`,
			run: []Event{ClientAccepted, ClientData, ServerData, LBSelected},
			want: []want{{ClientAccepted, 500, 1, 0, 1}, {ClientData, 500, 1, 0, 1},
				{ServerData, 500, 1, 0, 1}, {LBSelected, 500, 1, 0, 0}},
		},
		{
			name: "budget overrun is an abort",
			body: `when CLIENT_ACCEPTED { while {1} { set x 1 } }`,
			run:  []Event{ClientAccepted},
			want: []want{{ClientAccepted, 500, 1, 0, 1}},
		},
		{
			name: "return ends the event normally",
			body: `when CLIENT_ACCEPTED { return }`,
			run:  []Event{ClientAccepted},
			want: []want{{ClientAccepted, 500, 1, 0, 0}},
		},
		{
			name: "two when blocks of one event count as one event",
			body: `when CLIENT_ACCEPTED priority 200 { set a 1 }
when CLIENT_ACCEPTED priority 300 { set b 1 }`,
			run:  []Event{ClientAccepted, ClientAccepted},
			want: []want{{ClientAccepted, 200, 4, 0, 0}},
		},
		{
			name: "events not run show zero",
			body: `when HTTP_REQUEST { set a 1 }`,
			want: []want{{HTTPRequest, 500, 0, 0, 0}},
		},
		{
			name: "disabled event is not run",
			body: `when CLIENT_ACCEPTED { event CLIENT_DATA disable }
when CLIENT_DATA { set a 1 }`,
			run:  []Event{ClientAccepted, ClientData},
			want: []want{{ClientAccepted, 500, 1, 0, 0}, {ClientData, 500, 0, 0, 0}},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := mustCompile(t, "r", tc.body)
			p := NewProgram(&Env{Log: (&logSink{}).log, Steps: 1000, Timeout: 5 * time.Second}, r)
			var s *ConnState
			for _, ev := range tc.run {
				if s == nil || ev != ClientData {
					if s != nil {
						s.Release()
					}
					s = p.NewConnState(newFakeConn())
				}
				_ = s.Run(ev)
			}
			if s != nil {
				s.Release()
			}
			got := r.Stats()
			if len(got) != len(tc.want) {
				t.Fatalf("stats %+v, want %d events", got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.Event != w.ev || g.Priority != w.prio || g.Failures != w.failures || g.Aborts != w.aborts {
					t.Errorf("event %d: %+v, want %+v", i, g, w)
				}
				if g.Executions != w.execs {
					t.Errorf("%s executions %d, want %d", g.Event, g.Executions, w.execs)
				}
				if g.Executions > 0 && (g.Min <= 0 || g.Max < g.Min || g.Average() < g.Min || g.Average() > g.Max || g.Total < g.Max) {
					t.Errorf("%s times: min %v avg %v max %v total %v", g.Event, g.Min, g.Average(), g.Max, g.Total)
				}
				if g.Executions == 0 && (g.Min != 0 || g.Max != 0 || g.Total != 0) {
					t.Errorf("%s times without executions: %+v", g.Event, g)
				}
			}
			r.ResetStats()
			for _, g := range r.Stats() {
				if g.Executions != 0 || g.Failures != 0 || g.Aborts != 0 || g.Total != 0 || g.Min != 0 || g.Max != 0 {
					t.Errorf("after reset: %+v", g)
				}
			}
		})
	}
}

// TestRuleStatsShared checks that the counters belong to the rule: two
// programs (two virtual servers) with the same compiled rule add up, and
// RULE_INIT counts as an event.
func TestRuleStatsShared(t *testing.T) {
	r := mustCompile(t, "r", `when RULE_INIT { set static::x 1 }
when CLIENT_ACCEPTED { set a 1 }`)
	for range 2 {
		p := NewProgram(nil, r)
		if err := p.Init(); err != nil {
			t.Fatal(err)
		}
		s := p.NewConnState(newFakeConn())
		if err := s.Run(ClientAccepted); err != nil {
			t.Fatal(err)
		}
		s.Release()
	}
	got := r.Stats()
	if len(got) != 2 || got[0].Event != RuleInit || got[0].Executions != 2 || got[1].Executions != 2 {
		t.Fatalf("stats %+v", got)
	}
}

// TestRuleStatsConcurrent runs one rule from several goroutines while
// its statistics are read and nothing is lost (run it with -race).
func TestRuleStatsConcurrent(t *testing.T) {
	r := mustCompile(t, "r", `when CLIENT_ACCEPTED { if {[incr ::n] % 3 == 0} { reject } }`)
	p := NewProgram(nil, r)
	const workers, runs = 4, 200
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			for range runs {
				if err := s.Run(ClientAccepted); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 100 {
			_ = r.Stats()
		}
	}()
	wg.Wait()
	<-done
	st := r.Stats()[0]
	if st.Executions != workers*runs || st.Aborts != workers*(runs/3) || st.Failures != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// TestEventCountersRecord checks the minimum, maximum and total across
// the counter copies.
func TestEventCountersRecord(t *testing.T) {
	tests := []struct {
		name          string
		runs          []time.Duration
		min, max, avg time.Duration
	}{
		{"none", nil, 0, 0, 0},
		{"one", []time.Duration{5}, 5, 5, 5},
		{"zero counts as 1ns", []time.Duration{0}, 1, 1, 1},
		{"spread over copies", []time.Duration{30, 10, 20, 40, 50}, 10, 50, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var c eventCounters
			for i, d := range tc.runs {
				c.record(uint32(i), d, ranOK)
			}
			s := c.snapshot(ClientAccepted, 1)
			if s.Min != tc.min || s.Max != tc.max || s.Average() != tc.avg || s.Executions != uint64(len(tc.runs)) {
				t.Errorf("got %+v avg %v", s, s.Average())
			}
		})
	}
}

// BenchmarkEventCountersRecord is the cost of counting one execution,
// from one goroutine and from all of them at once.
func BenchmarkEventCountersRecord(b *testing.B) {
	var c eventCounters
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			c.record(1, 1500, ranOK)
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			shard := shardSeq.Add(1)
			for pb.Next() {
				c.record(shard, 1500, ranOK)
			}
		})
	})
	// What the copies save: every goroutine on one cache line.
	b.Run("parallel-one-copy", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				c.record(0, 1500, ranOK)
			}
		})
	})
}
