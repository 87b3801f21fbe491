package sflow

import (
	"math"
	"sync/atomic"
)

// Sampler is a virtual's HTTP data source: it picks one request in Rate
// (sFlow's skip counts, drawn at random around the rate so that periodic
// traffic is not sampled in step) and sends each picked request as a flow
// sample. A request costs one atomic decrement; a picked one an encoding
// into the agent's datagram.
type Sampler struct {
	// ID is the source id (ClassLogical, the virtual's index).
	ID    uint32
	agent atomic.Pointer[Agent]
	rate  atomic.Uint32
	skip  atomic.Int64
	last  atomic.Int64  // the skip count drawn last
	pool  atomic.Uint32 // requests seen up to the last pick
	seq   atomic.Uint32
	rnd   atomic.Uint64
}

// NewSampler is the sampler of source id.
func NewSampler(id uint32) *Sampler {
	s := &Sampler{ID: id}
	s.rnd.Store(uint64(id)*0x9e3779b97f4a7c15 | 1)
	s.skip.Store(math.MaxInt64)
	return s
}

// Set points the sampler at agent (nil: it picks nothing) with rate
// (0: none); the next pick comes after a fresh skip count.
func (s *Sampler) Set(agent *Agent, rate uint32) {
	old := s.agent.Swap(agent)
	if s.rate.Swap(rate) != rate || agent == nil || old == nil {
		s.reset()
	}
}

// Rate is the sampling rate in force.
func (s *Sampler) Rate() uint32 { return s.rate.Load() }

// reset draws the next skip count.
func (s *Sampler) reset() {
	r := s.rate.Load()
	if r == 0 || s.agent.Load() == nil {
		s.last.Store(0)
		s.skip.Store(math.MaxInt64)
		return
	}
	n := int64(1)
	if r > 1 {
		// xorshift: uniform in [1, 2r-1], whose mean is r.
		x := s.rnd.Load()
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		s.rnd.Store(x)
		n = 1 + int64(x%uint64(2*r-1))
	}
	s.last.Store(n)
	s.skip.Store(n)
}

// Pick is called once per request: true when the request is to be
// sampled (its answer then goes to Sample).
func (s *Sampler) Pick() bool {
	if s.skip.Add(-1) != 0 {
		return false
	}
	s.pool.Add(uint32(s.last.Load()))
	s.reset()
	return true
}

// Sample sends a picked request's flow sample.
func (s *Sampler) Sample(h *HTTPSample) {
	a := s.agent.Load()
	if a == nil {
		return
	}
	a.addFlow(s.seq.Add(1), s.ID, s.rate.Load(), s.pool.Load(), h)
}

// Samples is how many flow samples the sampler sent, and Pool the
// requests it had seen up to its last pick (the samples' sample_pool).
func (s *Sampler) Samples() (samples, pool uint32) { return s.seq.Load(), s.pool.Load() }
