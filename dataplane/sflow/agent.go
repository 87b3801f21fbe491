package sflow

import (
	"errors"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"
)

// Receiver is a collector the agent sends every datagram to.
type Receiver struct {
	// Name is the sys sflow receiver's full path.
	Name string
	// Addr is where its datagrams go (UDP).
	Addr netip.AddrPort
	// MaxDatagram bounds each datagram's bytes.
	MaxDatagram int
}

// Stats count what an agent sent: datagrams, and the samples in them;
// Dropped the samples that did not fit one datagram, Failures the
// datagrams a receiver's socket refused.
type Stats struct {
	Datagrams, FlowSamples, CounterSamples, Dropped, Failures atomic.Uint64
}

// CounterSource is a data source polled for counter samples: every
// Interval, its Append adds its counter records to the sample.
type CounterSource struct {
	// ID is the source's id (SourceID).
	ID uint32
	// Interval is the poll interval (> 0).
	Interval time.Duration
	// Append appends the source's counter records to b and says how many.
	Append func(b []byte) ([]byte, int)

	seq  uint32
	next time.Time
}

// Agent is an sFlow agent: it gathers flow samples (from its Samplers)
// and counter samples (from its CounterSources, polled once a second) in
// sFlow version 5 datagrams and sends each to every receiver, at the
// latest a second after its first sample. One agent runs while at least
// one receiver is enabled; samples cost an encoding into the datagram
// being filled, under a lock, and no allocation.
type Agent struct {
	start   time.Time
	addr    netip.Addr
	conns   []*net.UDPConn
	max     int
	stats   *Stats
	mu      sync.Mutex
	buf     []byte // the datagram being filled, its header's room first
	spare   []byte // a sample that did not fit, while buf is sent
	n       uint32 // samples in buf
	seq     uint32 // datagrams sent
	first   time.Time
	sources []*CounterSource
	done    chan struct{}
	wg      sync.WaitGroup
	closed  bool
}

// NewAgent opens a socket to each receiver and starts the agent's
// once-a-second loop. start is the system's start (the datagrams'
// uptime counts from it); stats (nil: the agent's own) count what it
// sends. The agent address the datagrams carry is the source address of
// the first receiver's socket [M: BIG-IP sends its management address;
// openltm the address its collector sees the datagrams come from].
func NewAgent(rs []Receiver, start time.Time, stats *Stats) (*Agent, error) {
	if len(rs) == 0 {
		return nil, errors.New("sflow: no receiver")
	}
	if stats == nil {
		stats = &Stats{}
	}
	a := &Agent{start: start, stats: stats, max: 65507, done: make(chan struct{})}
	for _, r := range rs {
		c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(r.Addr))
		if err != nil {
			a.closeConns()
			return nil, err
		}
		a.conns = append(a.conns, c)
		if r.MaxDatagram > 0 && r.MaxDatagram < a.max {
			a.max = r.MaxDatagram
		}
	}
	a.addr = a.conns[0].LocalAddr().(*net.UDPAddr).AddrPort().Addr().Unmap()
	a.buf = make([]byte, a.headerLen(), a.max+2048)
	a.spare = make([]byte, 0, 4096)
	a.wg.Add(1)
	go a.loop()
	return a, nil
}

func (a *Agent) closeConns() {
	for _, c := range a.conns {
		c.Close()
	}
}

// Stats are the agent's counters.
func (a *Agent) Stats() *Stats { return a.stats }

// Close sends what is pending, stops the loop and closes the sockets.
func (a *Agent) Close() {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.closed = true
	a.flushLocked()
	a.mu.Unlock()
	close(a.done)
	a.wg.Wait()
	a.closeConns()
}

// SetSources replaces the counter sources; a source whose id was polled
// before keeps its sequence number and schedule.
func (a *Agent) SetSources(ss []*CounterSource) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old := map[uint32]*CounterSource{}
	for _, s := range a.sources {
		old[s.ID] = s
	}
	now := time.Now()
	for _, s := range ss {
		if o := old[s.ID]; o != nil {
			s.seq = o.seq
			s.next = o.next
			if s.next.Sub(now) > s.Interval {
				s.next = now.Add(s.Interval)
			}
		} else {
			s.next = now.Add(s.Interval)
		}
	}
	a.sources = ss
}

func (a *Agent) headerLen() int {
	if a.addr.Is4() {
		return 7 * 4
	}
	return 10 * 4
}

func (a *Agent) loop() {
	defer a.wg.Done()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case now := <-t.C:
			a.tick(now)
		}
	}
}

// tick polls the sources due and sends the samples pending.
func (a *Agent) tick(now time.Time) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.closed {
		return
	}
	for _, s := range a.sources {
		if now.Before(s.next) {
			continue
		}
		s.next = s.next.Add(s.Interval)
		if s.next.Before(now) {
			s.next = now.Add(s.Interval)
		}
		s.seq++
		at := len(a.buf)
		a.buf = appendU32(a.buf, formatCounterSample)
		l := len(a.buf)
		a.buf = appendU32(a.buf, 0)
		a.buf = appendU32(a.buf, s.seq)
		a.buf = appendU32(a.buf, s.ID)
		cnt := len(a.buf)
		a.buf = appendU32(a.buf, 0)
		var n int
		a.buf, n = s.Append(a.buf)
		putU32(a.buf[cnt:], uint32(n))
		patchLen(a.buf, l)
		a.placed(at)
		a.stats.CounterSamples.Add(1)
	}
	if a.n > 0 {
		a.flushLocked()
	}
}

func putU32(b []byte, v uint32) { _ = appendU32(b[:0], v) }

// placed takes the sample just appended at at into the datagram: when it
// made the datagram too long, the datagram goes without it and it starts
// the next; a sample longer than a datagram alone is dropped.
func (a *Agent) placed(at int) {
	if len(a.buf) <= a.max {
		if a.n == 0 {
			a.first = time.Now()
		}
		a.n++
		return
	}
	if a.n == 0 || len(a.buf)-at+a.headerLen() > a.max {
		a.buf = a.buf[:at]
		a.stats.Dropped.Add(1)
		return
	}
	a.spare = append(a.spare[:0], a.buf[at:]...)
	a.buf = a.buf[:at]
	a.flushLocked()
	a.buf = append(a.buf, a.spare...)
	a.n = 1
	a.first = time.Now()
}

// flushLocked sends the datagram being filled to every receiver.
func (a *Agent) flushLocked() {
	if a.n == 0 {
		return
	}
	a.seq++
	h := a.buf[:0]
	h = appendU32(h, 5)
	h = appendAddress(h, a.addr)
	h = appendU32(h, 0) // sub-agent id [M]
	h = appendU32(h, a.seq)
	h = appendU32(h, uint32(time.Since(a.start).Milliseconds()))
	_ = appendU32(h, a.n)
	for _, c := range a.conns {
		if _, err := c.Write(a.buf); err != nil {
			a.stats.Failures.Add(1)
		}
	}
	a.stats.Datagrams.Add(1)
	a.buf = a.buf[:a.headerLen()]
	a.n = 0
}

// addFlow encodes a flow sample into the datagram being filled.
func (a *Agent) addFlow(seq, id, rate, pool uint32, s *HTTPSample) {
	a.mu.Lock()
	if !a.closed {
		at := len(a.buf)
		a.buf = appendFlowSample(a.buf, seq, id, rate, pool, s)
		a.placed(at)
		a.stats.FlowSamples.Add(1)
	}
	a.mu.Unlock()
}
