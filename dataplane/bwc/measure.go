package bwc

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Measure is one measurement of a policy's traffic: a flow's (BWC::measure
// ... flow), an instance's (a dynamic policy's user: measure enabled, or
// BWC::measure ... session) or a category's. What is not measured costs
// its flows one atomic load per write.
type Measure struct {
	on    atomic.Bool
	bytes atomic.Uint64
	rate  meter
	// id is what BWC::measure identifier named it ("": none).
	id atomic.Pointer[string]
	// logged is bytes at the last log line, for the period's rate.
	logged atomic.Uint64
	// label says what is measured in log lines (a flow's client, an
	// instance's session), set once before the measure is shared.
	label string
}

// add counts n bytes passed now.
func (m *Measure) add(now time.Time, n int) {
	if m.on.Load() {
		m.bytes.Add(uint64(n))
		m.rate.add(now, uint64(n))
	}
}

// Start and Stop turn the measurement on and off (BWC::measure start,
// stop); what it counted stays.
func (m *Measure) Start() { m.on.Store(true) }

// Stop: see Start.
func (m *Measure) Stop() { m.on.Store(false) }

// SetID names the measurement in its log lines (BWC::measure identifier).
func (m *Measure) SetID(id string) { m.id.Store(&id) }

// Bytes is what passed while it was on (BWC::measure get bytes).
func (m *Measure) Bytes() uint64 { return m.bytes.Load() }

// Rate is the bits per second of the last whole second (BWC::measure get
// rate).
func (m *Measure) Rate() uint64 { return m.rate.bps(time.Now()) }

// ErrNoInstance is BWC::measure ... session on a flow without the
// instance named.
var ErrNoInstance = errors.New("no such session in the flow's bwc policy")

// FlowMeasure is the flow's own measurement (BWC::measure ... flow),
// made at the first ask; label names the flow in log lines (its client).
// The policy logs it each period while the flow lives.
func (b *Bucket) FlowMeasure(label string) *Measure {
	if m := b.fm.Load(); m != nil {
		return m
	}
	m := &Measure{label: label}
	if !b.fm.CompareAndSwap(nil, m) {
		return b.fm.Load()
	}
	p := b.p
	p.mu.Lock()
	if p.flows == nil {
		p.flows = map[*Measure]struct{}{}
	}
	p.flows[m] = struct{}{}
	p.mu.Unlock()
	return m
}

// SessionMeasure is the measurement of a session (BWC::measure ...
// session): of the flow's own instance when session is empty, else of
// the instance of that name in the flow's dynamic policy; of the whole
// policy for a static one [M: a static policy has one instance, itself].
func (b *Bucket) SessionMeasure(session string) (*Measure, error) {
	p := b.p
	if !p.Cfg.Dynamic {
		return &p.m, nil
	}
	if session == "" || session == b.in.key {
		return &b.in.m, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if in := p.users[session]; in != nil {
		return &in.m, nil
	}
	return nil, ErrNoInstance
}

// Measured is one of a policy's measurements as show net bwc policy
// reports it: what is measured ("" the policy itself, "category NAME",
// "session KEY", "flow CLIENT"), the name BWC::measure identifier gave
// it, the bits per second of its last whole second and the bytes it
// counted.
type Measured struct {
	What, ID    string
	Rate, Bytes uint64
}

// Measured lists p's measurements that are on, in the order of its log
// lines: the policy, its categories in the configuration's order, then
// its sessions and its flows, each sorted. What is off is not listed.
func (p *Policy) Measured() []Measured {
	var out []Measured
	p.measures(func(what string, m *Measure) {
		x := Measured{What: what, Rate: m.Rate(), Bytes: m.Bytes()}
		if id := m.id.Load(); id != nil {
			x.ID = *id
		}
		out = append(out, x)
	})
	return out
}

// measures calls f for each of p's measurements that is on, in the order
// of its log lines (see Measured).
func (p *Policy) measures(f func(what string, m *Measure)) {
	if p.m.on.Load() {
		f("", &p.m)
	}
	for _, c := range p.catList {
		if c.m.on.Load() {
			f("category "+c.name, &c.m)
		}
	}
	var rest []measured
	p.mu.Lock()
	for _, in := range p.users {
		if in.m.on.Load() {
			rest = append(rest, measured{"session " + in.key, &in.m})
		}
	}
	n := len(rest)
	for m := range p.flows {
		if m.on.Load() {
			rest = append(rest, measured{"flow " + m.label, m})
		}
	}
	p.mu.Unlock()
	byWhat := func(a, b measured) int { return strings.Compare(a.what, b.what) }
	slices.SortFunc(rest[:n], byWhat)
	slices.SortFunc(rest[n:], byWhat)
	for _, x := range rest {
		f(x.what, x.m)
	}
}

// measured is one line of a policy's log: what is measured and its
// measure.
type measured struct {
	what string
	m    *Measure
}

// logLines are the lines of a policy's measurement log for one period:
// the policy (measure enabled, or BWC::measure start session on a static
// policy) and its categories (measure enabled), then each instance and
// flow whose measurement is on, in the form
//
//	bwc-measure policy /Common/gold_user session 10.1.1.1:5000 id MYSESSION rate 1981440 bps bytes 495360 period 2048 ms
//
// [M: F5 documents that measurements go to the log publisher, not their
// format; openltm writes one line of words and values per measurement,
// the rate being the period's average in bits per second].
func (p *Policy) logLines(period time.Duration, emit func([]byte)) {
	var all []measured
	p.measures(func(what string, m *Measure) { all = append(all, measured{what, m}) })
	ms := period.Milliseconds()
	for _, x := range all {
		total := x.m.bytes.Load()
		delta := total - x.m.logged.Swap(total)
		// A line of its own: a sender may keep it past the call.
		b := append(make([]byte, 0, 160), "bwc-measure policy "...)
		b = append(b, p.Cfg.Name...)
		if x.what != "" {
			b = append(b, ' ')
			b = append(b, x.what...)
		}
		if id := x.m.id.Load(); id != nil && *id != "" {
			b = append(b, " id "...)
			b = append(b, *id...)
		}
		b = append(b, " rate "...)
		b = strconv.AppendUint(b, delta*8*1000/uint64(max(ms, 1)), 10)
		b = append(b, " bps bytes "...)
		b = strconv.AppendUint(b, delta, 10)
		b = append(b, " period "...)
		b = strconv.AppendInt(b, ms, 10)
		b = append(b, " ms"...)
		emit(b)
	}
}

// minLogPeriod bounds how often a policy logs [M: F5 takes the period in
// milliseconds; openltm logs at most ten times a second].
const minLogPeriod = 100 * time.Millisecond

// defaultLogPeriod is log-period 0's, F5's default of 2048 ms.
const defaultLogPeriod = 2048 * time.Millisecond

// runLog writes p's measurement lines to its log-publisher each period
// until stop is closed; send is read at each tick (the daemon gives it
// after the plane starts).
func (p *Policy) runLog(send *atomic.Pointer[LogSender], stop <-chan struct{}) {
	period := p.Cfg.LogPeriod
	if period == 0 {
		period = defaultLogPeriod
	}
	period = max(period, minLogPeriod)
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		s := send.Load()
		if s == nil {
			continue
		}
		p.logLines(period, func(line []byte) { (*s)(p.Cfg.LogPublisher, line) })
	}
}

// LogSender gives a line to the log publisher of that full path in the
// running configuration; false when it is gone or dropped the line.
type LogSender func(publisher string, line []byte) bool
