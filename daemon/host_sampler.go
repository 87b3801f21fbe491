package daemon

import (
	"sync"
	"time"

	"github.com/openltm/openltm/hoststat"
)

// hostReading is one reading of what show sys cpu and show sys
// performance average: the processors' times, the memory shares, and the
// dataplane's global counters.
type hostReading struct {
	cpu   []hoststat.CPUTimes // [0] every processor together, [1+i] the i-th processor
	mem   [3]float64          // percent used now: ltmd, the rest of the host, swap
	plane *planeTotals        // nil without a dataplane
}

// planeTotals are the dataplane's counters summed over its objects: its
// connections now, and totals since each object was made (reset-stats or
// a deleted object make a total go back; the sampler counts that second
// as no traffic rather than as negative).
type planeTotals struct {
	conns                              uint64
	clientConns, serverConns, requests uint64
	bitsIn, bitsOut, pktsIn, pktsOut   uint64
}

// The figures a hostPoint keeps besides the processors', by index.
const (
	figTMMMemory   = iota // percent of the host's memory ltmd holds
	figOtherMemory        // percent held by the rest of the host
	figSwap               // percent of swap in use
	figConns              // connections now
	figClientNew          // new client-side connections per second
	figServerNew          // new server-side connections per second
	figRequests           // HTTP requests per second
	figBitsIn             // bits per second received, both sides
	figBitsOut
	figPktsIn
	figPktsOut
	numFigures
)

// hostPoint is one second's figures: the busy percent of each processor
// (cpu[0] all together) and the other figures; traffic says whether the
// dataplane figures are known (a dataplane ran at both readings).
type hostPoint struct {
	cpu     []float64
	fig     [numFigures]float64
	traffic bool
}

// hostWindow is how many points the sampler keeps: five minutes of one a
// second, the longest average the shows print.
const hostWindow = 300

// hostSampler keeps the last five minutes of host and dataplane figures
// for the shows' current, averaged and maximum columns. One goroutine
// reads the counters once a tick; shows read the figures under mu.
type hostSampler struct {
	read func() hostReading
	now  func() time.Time

	prev   hostReading // the last reading and its time (the sampling goroutine's own)
	prevAt time.Time
	primed bool

	mu    sync.Mutex
	since time.Time // when sampling started: the Max column's "since"
	ring  [hostWindow]hostPoint
	n     int // points in ring
	next  int // where the next point goes
	max   hostPoint
	seen  bool // max holds at least one point

	stop, done chan struct{}
	running    bool
	closing    sync.Once
}

// newHostSampler makes a sampler reading with read and timing with now;
// it samples only when run or sample is called, so a test drives it.
func newHostSampler(read func() hostReading, now func() time.Time) *hostSampler {
	return &hostSampler{read: read, now: now, since: now(), stop: make(chan struct{}), done: make(chan struct{})}
}

// run samples at every tick until close; it is the sampler's one
// goroutine.
func (s *hostSampler) run(tick <-chan time.Time) {
	defer close(s.done)
	for {
		select {
		case <-s.stop:
			return
		case <-tick:
			s.sample()
		}
	}
}

// start runs the sampler on a ticker of period d.
func (s *hostSampler) start(d time.Duration) {
	s.running = true
	t := time.NewTicker(d)
	go func() {
		defer t.Stop()
		s.run(t.C)
	}()
}

// close stops the sampler's goroutine, when start started it, and waits
// for it to end. A test running run itself waits for run's return.
func (s *hostSampler) close() {
	s.closing.Do(func() {
		close(s.stop)
		if s.running {
			<-s.done
		}
	})
}

// sample takes one reading and, from the one before, one point.
func (s *hostSampler) sample() {
	r, at := s.read(), s.now()
	if s.primed {
		if dt := at.Sub(s.prevAt).Seconds(); dt > 0 {
			s.push(pointOf(s.prev, r, dt))
		}
	}
	s.prev, s.prevAt, s.primed = r, at, true
}

// pointOf is the figures between two readings dt seconds apart.
func pointOf(prev, cur hostReading, dt float64) hostPoint {
	p := hostPoint{cpu: make([]float64, len(cur.cpu))}
	for i := range cur.cpu {
		if i < len(prev.cpu) {
			p.cpu[i] = hoststat.Usage(prev.cpu[i], cur.cpu[i])
		}
	}
	p.fig[figTMMMemory], p.fig[figOtherMemory], p.fig[figSwap] = cur.mem[0], cur.mem[1], cur.mem[2]
	if prev.plane != nil && cur.plane != nil {
		a, b := prev.plane, cur.plane
		rate := func(x, y uint64) float64 {
			if y < x {
				return 0
			}
			return float64(y-x) / dt
		}
		p.traffic = true
		p.fig[figConns] = float64(b.conns)
		p.fig[figClientNew] = rate(a.clientConns, b.clientConns)
		p.fig[figServerNew] = rate(a.serverConns, b.serverConns)
		p.fig[figRequests] = rate(a.requests, b.requests)
		p.fig[figBitsIn] = rate(a.bitsIn, b.bitsIn)
		p.fig[figBitsOut] = rate(a.bitsOut, b.bitsOut)
		p.fig[figPktsIn] = rate(a.pktsIn, b.pktsIn)
		p.fig[figPktsOut] = rate(a.pktsOut, b.pktsOut)
	}
	return p
}

func (s *hostSampler) push(p hostPoint) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ring[s.next] = p
	s.next = (s.next + 1) % hostWindow
	s.n = min(s.n+1, hostWindow)
	if !s.seen {
		s.max = hostPoint{cpu: append([]float64(nil), p.cpu...), fig: p.fig, traffic: p.traffic}
		s.seen = true
		return
	}
	for i, v := range p.cpu {
		if i >= len(s.max.cpu) {
			s.max.cpu = append(s.max.cpu, v)
		} else {
			s.max.cpu[i] = max(s.max.cpu[i], v)
		}
	}
	for i, v := range p.fig {
		if i >= figConns && !p.traffic {
			continue
		}
		s.max.fig[i] = max(s.max.fig[i], v)
	}
	s.max.traffic = s.max.traffic || p.traffic
}

// hostFigures are one figure's columns. Known is false when no point has
// it yet (the first second, or no dataplane): the shows print "-".
type hostFigures struct {
	Known                             bool
	Current, Avg3s, Avg1m, Avg5m, Max float64
}

// figures computes one figure's columns from the kept points, the newest
// first; get returns the figure of a point, or false when the point has
// none.
func (s *hostSampler) figures(get func(*hostPoint) (float64, bool)) hostFigures {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f hostFigures
	var sum float64
	var n int
	for k := 0; k < s.n; k++ {
		p := &s.ring[(s.next-1-k+hostWindow)%hostWindow]
		if v, ok := get(p); ok {
			if !f.Known {
				f.Known, f.Current = true, v
			}
			sum += v
			n++
		}
		switch {
		case k == 2 && n > 0:
			f.Avg3s = sum / float64(n)
		case k == 59 && n > 0:
			f.Avg1m = sum / float64(n)
		}
	}
	if !f.Known {
		return f
	}
	// Fewer points than a window: the window's average is over the points
	// there are, as an average "since start" would be.
	avg := sum / float64(n)
	if s.n < 3 {
		f.Avg3s = avg
	}
	if s.n < 60 {
		f.Avg1m = avg
	}
	f.Avg5m = avg
	if v, ok := get(&s.max); ok && s.seen {
		f.Max = v
	}
	return f
}

// cpu is processor i's figures (0: all together).
func (s *hostSampler) cpu(i int) hostFigures {
	return s.figures(func(p *hostPoint) (float64, bool) {
		if i < len(p.cpu) {
			return p.cpu[i], true
		}
		return 0, false
	})
}

// figure is one of the other figures' columns.
func (s *hostSampler) figure(fig int) hostFigures {
	return s.figures(func(p *hostPoint) (float64, bool) {
		return p.fig[fig], fig < figConns || p.traffic
	})
}

// started is when the sampler started: the shows' "Max(since ...)".
func (s *hostSampler) started() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.since
}
