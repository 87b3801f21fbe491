package monitor

import (
	"context"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Status is a monitor instance's verdict on its target.
type Status int

// The statuses, as `show` prints them.
const (
	Checking Status = iota // no verdict yet
	Up
	Down
)

func (s Status) String() string {
	switch s {
	case Up:
		return "up"
	case Down:
		return "down"
	}
	return "checking"
}

// State is what an instance reports on each change.
type State struct {
	Status Status
	// Disabled is set while recv-disable matches (up, no new flows).
	Disabled bool
	// LastError is the last failed probe's reason ("" after a success).
	LastError string
	// Locked is set while manual-resume holds the target down.
	Locked bool
	// Since is when Status last changed.
	Since time.Time
	// DynamicRatio is what the last successful probe of an snmp-dca
	// monitor weighed; 0 from other monitors.
	DynamicRatio int
}

// Instance probes one target with one monitor until stopped.
type Instance struct {
	spec     Spec
	target   netip.AddrPort
	onChange func(State)
	// trace, when set, receives a line per probe (SetTrace).
	trace atomic.Pointer[func(line string)]

	mu     sync.Mutex
	state  State
	probed []func(up bool) // ProbeNow's callers, told after the next probe
	resume chan struct{}
	kick   chan struct{} // ProbeNow: probe without waiting for the interval
	stop   chan struct{}
	done   chan struct{}
}

// Start begins probing target at once. onChange is called from the
// instance's goroutine after every change of State (never concurrently for
// one instance).
func Start(spec *Spec, target netip.AddrPort, onChange func(State)) *Instance {
	return StartTraced(spec, target, onChange, nil)
}

// StartTraced is Start for a monitor whose probes are traced (a monitor
// with debug, or a node with logging): trace, when not nil, gets a line
// per probe saying what it sent, what it received and its verdict (the
// monitor log BIG-IP writes).
func StartTraced(spec *Spec, target netip.AddrPort, onChange func(State), trace func(line string)) *Instance {
	in := &Instance{
		spec:     *spec,
		target:   target,
		onChange: onChange,
		state:    State{Status: Checking, Since: time.Now()},
		resume:   make(chan struct{}, 1),
		kick:     make(chan struct{}, 1),
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
	}
	in.SetTrace(trace)
	go in.run()
	return in
}

// Spec is the monitor the instance runs.
func (in *Instance) Spec() *Spec { return &in.spec }

// SetTrace changes where the probes' lines go (nil: nowhere) from the
// next probe on, without restarting the instance: a node's logging
// turned on or off keeps its monitors' state.
func (in *Instance) SetTrace(trace func(line string)) {
	if trace == nil {
		in.trace.Store(nil)
		return
	}
	in.trace.Store(&trace)
}

// Target is the probed address.
func (in *Instance) Target() netip.AddrPort { return in.target }

// State is the current verdict.
func (in *Instance) State() State {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.state
}

// Resume lifts a manual-resume hold: the next successful probe brings the
// target up again.
func (in *Instance) Resume() {
	select {
	case in.resume <- struct{}{}:
	default:
	}
}

// ProbeNow probes at once instead of at the next interval (a rule's
// LB::down or LB::up asks for it, as on BIG-IP) and, when told is not
// nil, calls it with the verdict of the next probe to finish. Calls
// close together share one probe.
func (in *Instance) ProbeNow(told func(up bool)) {
	in.WhenProbed(told)
	select {
	case in.kick <- struct{}{}:
	default:
	}
}

// WhenProbed calls told (when not nil) with the verdict of the next
// probe to finish, at the instance's own pace.
func (in *Instance) WhenProbed(told func(up bool)) {
	if told != nil {
		in.mu.Lock()
		in.probed = append(in.probed, told)
		in.mu.Unlock()
	}
}

// tellProbed calls the ProbeNow callers waiting for a probe's verdict.
func (in *Instance) tellProbed(up bool) {
	in.mu.Lock()
	told := in.probed
	in.probed = nil
	in.mu.Unlock()
	for _, f := range told {
		f(up)
	}
}

// Stop ends probing and waits for the goroutine to leave; no onChange call
// happens after Stop returns.
func (in *Instance) Stop() {
	select {
	case <-in.stop:
	default:
		close(in.stop)
	}
	<-in.done
}

func (in *Instance) set(f func(*State)) {
	in.mu.Lock()
	old := in.state
	f(&in.state)
	now := in.state
	if now.Status != old.Status {
		in.state.Since = time.Now()
		now = in.state
	}
	in.mu.Unlock()
	if now != old && in.onChange != nil {
		in.onChange(now)
	}
}

func (in *Instance) run() {
	defer close(in.done)
	sp := &in.spec
	interval := max(sp.Interval, time.Millisecond)
	timeout := max(sp.Timeout, time.Millisecond)
	lastSuccess := time.Now() // the deadline counts from the start
	var streak time.Time      // start of the current run of successes
	lastFailed := false
	locked := false
	var hist history // adaptive response times
	var kept dbKept  // a database monitor's login kept for its count
	defer kept.close()
	for {
		probeStart := time.Now()
		out, err := in.attempts(timeout, &kept)
		if a := sp.Adaptive; a != nil && err == nil && out.Up {
			// An answer that comes too late fails as no answer does.
			if aerr := hist.judge(a, time.Now(), time.Since(probeStart)); aerr != nil {
				out, err = Outcome{}, aerr
			}
		}
		select {
		case <-in.stop:
			return
		default:
		}
		now := time.Now()
		if err == nil && out.Up {
			lastSuccess, lastFailed = now, false
			if streak.IsZero() {
				streak = now
			}
			st := in.State()
			if locked {
				// manual-resume: stays down until Resume.
			} else if st.Status != Up && now.Sub(streak) >= sp.TimeUntilUp {
				in.set(func(s *State) {
					s.Status, s.Disabled, s.LastError, s.DynamicRatio = Up, out.Disabled, "", out.DynamicRatio
				})
			} else if st.Status == Up {
				in.set(func(s *State) { s.Disabled, s.LastError, s.DynamicRatio = out.Disabled, "", out.DynamicRatio })
			}
		} else {
			streak, lastFailed = time.Time{}, true
			msg := ErrNoMatch.Error()
			if err != nil {
				msg = err.Error()
			}
			in.set(func(s *State) { s.LastError = msg })
			if now.Sub(lastSuccess) >= timeout || sp.DownOnResponse && IsDownResponse(err) {
				locked = in.markDown() || locked
			}
		}
		in.tellProbed(err == nil && out.Up)
		// Wait for the next probe; if the target is failing, wake at the
		// deadline too, so it is marked down on time, not at the next probe.
		next := interval
		if in.State().Status == Up && sp.UpInterval > 0 {
			next = sp.UpInterval
		}
		wakeProbe := probeStart.Add(next)
		for {
			wake := wakeProbe
			checkDeadline := lastFailed && in.State().Status != Down
			if dl := lastSuccess.Add(timeout); checkDeadline && dl.Before(wake) {
				wake = dl
			}
			t := time.NewTimer(time.Until(wake))
			select {
			case <-in.stop:
				t.Stop()
				return
			case <-in.resume:
				t.Stop()
				if locked {
					locked = false
					in.set(func(s *State) { s.Locked = false })
				}
				continue
			case <-in.kick:
				t.Stop()
				wakeProbe = time.Now()
			case <-t.C:
			}
			if !time.Now().Before(wakeProbe) {
				break
			}
			if checkDeadline && !time.Now().Before(lastSuccess.Add(timeout)) {
				locked = in.markDown() || locked
			}
		}
	}
}

// attempts is one probe of the interval: up to Spec.Attempts tries,
// AttemptInterval apart, until one succeeds, each within ProbeTimeout
// (else the monitor's timeout). A stop ends it with the error it has.
func (in *Instance) attempts(timeout time.Duration, kept *dbKept) (Outcome, error) {
	sp := &in.spec
	if sp.ProbeTimeout > 0 {
		timeout = min(timeout, sp.ProbeTimeout)
	}
	var out Outcome
	var err error
	for i := range max(sp.Attempts, 1) {
		if i > 0 {
			t := time.NewTimer(sp.AttemptInterval)
			select {
			case <-in.stop:
				t.Stop()
				return out, err
			case <-t.C:
			}
		}
		out, err = in.try(timeout, kept)
		if err == nil && out.Up {
			break
		}
	}
	return out, err
}

// try is one try of a probe within timeout, traced when a trace is set.
func (in *Instance) try(timeout time.Duration, kept *dbKept) (Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-in.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	var tr *probeTrace
	pctx := ctx
	trace := in.trace.Load()
	if trace != nil {
		tr = &probeTrace{}
		pctx = withTrace(ctx, tr)
	}
	out, err := in.probe(pctx, kept)
	if tr != nil {
		(*trace)(tr.line(&in.spec, in.target, out, err))
	}
	return out, err
}

// probe is one probe; a database monitor with a count uses and keeps
// the instance's login (kept) instead of logging in each time.
func (in *Instance) probe(ctx context.Context, kept *dbKept) (Outcome, error) {
	sp := &in.spec
	if sp.DB != nil && sp.DB.Count > 0 {
		switch sp.Type {
		case PostgreSQL, MySQL, MSSQL:
			return probeDB(withDSCP(ctx, sp.DSCP), sp, in.target, kept)
		}
	}
	return Probe(ctx, sp, in.target)
}

// markDown records a down verdict and reports whether manual-resume now
// holds the target down.
func (in *Instance) markDown() bool {
	hold := in.spec.ManualResume
	in.set(func(s *State) {
		if s.Status != Down {
			s.Status, s.Disabled = Down, false
			s.Locked = hold
		}
	})
	return hold && in.State().Locked
}
