package monitor

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// InbandLimits are an inband monitor's settings, with BIG-IP's meanings:
// Failures failed connections (or answers later than ResponseTime) within
// FailureInterval mark the member down; RetryTime after that it is up
// again and gets traffic to prove itself.
type InbandLimits struct {
	Failures        int           // 0 never marks down; BIG-IP's default 3
	FailureInterval time.Duration // default 30 s
	ResponseTime    time.Duration // 0: no answer deadline; default 10 s
	RetryTime       time.Duration // 0: down until a success; default 300 s
}

// DefaultInband is BIG-IP's /Common/inband.
var DefaultInband = InbandLimits{Failures: 3, FailureInterval: 30 * time.Second, ResponseTime: 10 * time.Second, RetryTime: 300 * time.Second}

func (l *InbandLimits) equal(o *InbandLimits) bool {
	if l == nil || o == nil {
		return l == o
	}
	return *l == *o
}

func (l *InbandLimits) check() error {
	if l.Failures < 0 || l.FailureInterval < 0 || l.ResponseTime < 0 || l.RetryTime < 0 {
		return fmt.Errorf("inband limits must not be negative")
	}
	if l.Failures > 0 && l.FailureInterval <= 0 {
		return fmt.Errorf("inband failure-interval must be at least 1 second when failures is set")
	}
	return nil
}

// Passive is an inband monitor on one member: no probes; the proxy tells
// it how each connection went. It is safe for concurrent use.
type Passive struct {
	spec     Spec
	lim      InbandLimits
	onChange func(State)

	cb       sync.Mutex // held while a change is made and reported, so reports keep order
	down     atomic.Bool
	mu       sync.Mutex
	state    State
	failures []time.Time // within the failure interval, oldest first
	retry    *time.Timer
	stopped  bool
	now      func() time.Time

	// adaptive judges answer times against the member's own mean (the
	// monitor's adaptive settings; nil: off); hist is its samples.
	adaptive *Adaptive
	histMu   sync.Mutex
	hist     history
}

// NewPassive starts an inband monitor in the up state (it has nothing to
// say until traffic fails). onChange is called after every change, outside
// the monitor's lock, never after Stop returns.
func NewPassive(spec *Spec, onChange func(State)) *Passive {
	lim := DefaultInband
	if spec.Inband != nil {
		lim = *spec.Inband
	}
	p := &Passive{spec: *spec, lim: lim, onChange: onChange, now: time.Now,
		state: State{Status: Up, Since: time.Now()}}
	p.adaptive = p.spec.Adaptive
	return p
}

// Spec is the monitor the passive instance runs.
func (p *Passive) Spec() *Spec { return &p.spec }

// ResponseTime is how long the proxy waits for the member's first answer
// bytes before it reports Failed (0: no deadline).
func (p *Passive) ResponseTime() time.Duration { return p.lim.ResponseTime }

// State is the current verdict.
func (p *Passive) State() State {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.state
}

// Failed records a failed connection or a missed response time.
func (p *Passive) Failed() { p.failed("") }

// failed records a failure; why, when not empty, is the last one's
// reason, which the down state's error gives.
func (p *Passive) failed(why string) {
	p.cb.Lock()
	defer p.cb.Unlock()
	p.mu.Lock()
	if p.stopped || p.lim.Failures == 0 {
		p.mu.Unlock()
		return
	}
	now := p.now()
	cut := now.Add(-p.lim.FailureInterval)
	i := 0
	for i < len(p.failures) && !p.failures[i].After(cut) {
		i++
	}
	// Only the last Failures timestamps matter.
	i = max(i, len(p.failures)-p.lim.Failures+1)
	n := copy(p.failures, p.failures[i:])
	p.failures = append(p.failures[:n], now)
	var changed *State
	if p.state.Status != Down && len(p.failures) >= p.lim.Failures {
		p.failures = p.failures[:0]
		p.down.Store(true)
		p.state = State{Status: Down, Since: now,
			LastError: fmt.Sprintf("%d failures within %s", p.lim.Failures, p.lim.FailureInterval)}
		if why != "" {
			p.state.LastError += "; the last: " + why
		}
		s := p.state
		changed = &s
		if p.lim.RetryTime > 0 {
			p.retry = time.AfterFunc(p.lim.RetryTime, p.retryUp)
		}
	}
	p.mu.Unlock()
	p.report(changed)
}

// Succeeded records a connection the member answered in time; a member
// held down with retry-time 0 comes back with it.
func (p *Passive) Succeeded() {
	if !p.down.Load() {
		return // the per-connection path: nothing to do while up
	}
	p.cb.Lock()
	defer p.cb.Unlock()
	p.mu.Lock()
	var changed *State
	if !p.stopped && p.state.Status == Down {
		if p.retry != nil {
			p.retry.Stop()
			p.retry = nil
		}
		p.down.Store(false)
		p.state = State{Status: Up, Since: p.now()}
		s := p.state
		changed = &s
	}
	p.mu.Unlock()
	p.report(changed)
}

func (p *Passive) retryUp() {
	p.cb.Lock()
	defer p.cb.Unlock()
	p.mu.Lock()
	var changed *State
	if !p.stopped && p.state.Status == Down {
		p.retry = nil
		p.down.Store(false)
		p.state = State{Status: Up, Since: p.now()}
		s := p.state
		changed = &s
	}
	p.mu.Unlock()
	p.report(changed)
}

// report calls onChange; callers hold cb, so reports keep the order of the
// changes and none runs after Stop.
func (p *Passive) report(s *State) {
	if s == nil || p.onChange == nil {
		return
	}
	p.onChange(*s)
}

// Stop ends the retry timer; no onChange call happens after Stop returns
// (onChange must not call Stop).
func (p *Passive) Stop() {
	p.cb.Lock()
	defer p.cb.Unlock()
	p.mu.Lock()
	p.stopped = true
	if p.retry != nil {
		p.retry.Stop()
	}
	p.mu.Unlock()
}

// ResponseClock times one connection's answers for an inband monitor
// with a response-time: the clock starts when bytes go to the member
// while none are waiting for an answer, and stops when the member's bytes
// come back. A member silent for longer than the response time counts a
// failure then (a timer), or when its answer comes back late; one
// unanswered stretch counts once. The connection goes on either way, as
// on BIG-IP: the monitor only counts. It is safe for concurrent use; a nil
// clock does nothing.
type ResponseClock struct {
	p     *Passive
	limit time.Duration // response-time; 0: none (adaptive only)
	// since is when the oldest unanswered bytes went (Unix nanoseconds);
	// 0 when nothing waits, reported once the failure is counted.
	since atomic.Int64
	mu    sync.Mutex // guards timer
	timer *time.Timer
	ended bool
}

const reported = -1

// Clock is a response clock for one connection to the member, or nil
// when the monitor has neither a response-time nor adaptive settings.
func (p *Passive) Clock() *ResponseClock {
	if p == nil || p.lim.Failures == 0 || p.lim.ResponseTime <= 0 && p.adaptive == nil {
		return nil
	}
	return &ResponseClock{p: p, limit: p.lim.ResponseTime}
}

// judge is adaptive monitoring of one answer that came rt after its
// request, within the response-time: an answer over adaptive-limit, or
// diverging from the mean of the member's answers within the sampling
// timespan by more than the divergence, counts a failure, as a missed
// response-time does; the others join the mean (history.judge: only
// answers that passed make the baseline [M]).
func (p *Passive) judge(at time.Time, rt time.Duration) {
	p.histMu.Lock()
	err := p.hist.judge(p.adaptive, at, rt)
	p.histMu.Unlock()
	if err != nil {
		p.failed(err.Error())
	}
}

// Sent notes bytes sent to the member at now (Unix nanoseconds).
func (c *ResponseClock) Sent(now int64) {
	if c == nil || !c.since.CompareAndSwap(0, now) {
		return // nil, or the clock already runs
	}
	if c.limit <= 0 {
		return // adaptive only: Answered judges, no timer runs
	}
	c.mu.Lock()
	if !c.ended {
		if c.timer == nil {
			c.timer = time.AfterFunc(c.limit, c.expired)
		} else {
			c.timer.Reset(c.limit)
		}
	}
	c.mu.Unlock()
}

// Answered notes bytes from the member at now; an answer later than the
// response time that the timer has not counted yet is a failure, and
// one in time is judged by the adaptive settings, if any.
func (c *ResponseClock) Answered(now int64) {
	if c == nil {
		return
	}
	s := c.since.Swap(0)
	if s == 0 {
		return
	}
	if c.limit > 0 {
		c.mu.Lock()
		if c.timer != nil {
			c.timer.Stop()
		}
		c.mu.Unlock()
	}
	if s == reported {
		return
	}
	rt := time.Duration(now - s)
	switch {
	case c.limit > 0 && rt > c.limit:
		c.p.failed(fmt.Sprintf("Response time %d ms exceeds the response-time of %d ms", rt.Milliseconds(), c.limit.Milliseconds()))
	case c.p.adaptive != nil:
		c.p.judge(time.Unix(0, now), rt)
	}
}

// Stop ends the clock with its connection: a wait still running is not
// counted (the connection ended before the response time said anything).
func (c *ResponseClock) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.ended = true
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
}

// expired is the timer: the member has not answered within the response
// time since s.
func (c *ResponseClock) expired() {
	s := c.since.Load()
	if s <= 0 || time.Duration(time.Now().UnixNano()-s) < c.limit {
		return // answered meanwhile, or a newer wait (its own timer runs)
	}
	if c.since.CompareAndSwap(s, reported) {
		c.p.failed(fmt.Sprintf("No answer within the response-time of %d ms", c.limit.Milliseconds()))
	}
}
