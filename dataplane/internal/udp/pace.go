package udp

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"

	"golang.org/x/time/rate"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/rules"
)

// flowPace is a rule's own limits on one flow (UDP::max_rate,
// UDP::max_buf_pkts): the datagrams of each direction wait in a bounded
// queue of the flow for a bucket of the rate, the bandwidth controller's
// queue and pacer (dataplane/bwc) on a bucket of the flow's own; those
// the queue has no room for are dropped and counted. A flow no rule
// limited holds none, and its datagrams pay one nil check.
//
// [M] F5's page calls the rate the flow's transmission rate in bytes per
// second: openltm paces both directions, each at the full rate on its own
// bucket (what the flow sends to its member and what it sends back to
// the client), and bounds each direction's queue at max_buf_pkts
// datagrams (0: only the queue's byte bound, half a second of the rate
// and at least 64 KB). The rate is set at the flow's start and may be
// changed or lifted (0) later; datagrams already queued then leave at the
// new rate. A paced datagram's SIP_REQUEST_SEND and SIP_RESPONSE_SEND
// events do not run, as under a bandwidth controller.
type flowPace struct {
	upB, downB *bwc.Bucket
	up         *bwc.Queue[*leg]
	toClient   *bwc.Queue[*flow]
	rate       atomic.Uint64 // bytes per second; 0: none
	maxPkts    atomic.Int64
}

// paceMu serializes the making of flows' paces (rare: a rule's command).
var paceMu sync.Mutex

// paced is f's pace, made on first use.
func (f *flow) paced() *flowPace {
	if p := f.pace.Load(); p != nil {
		return p
	}
	paceMu.Lock()
	defer paceMu.Unlock()
	if p := f.pace.Load(); p != nil {
		return p
	}
	p := &flowPace{upB: bwc.FlowBucket(0), downB: bwc.FlowBucket(0)}
	p.up = bwc.NewQueue(p.upB, func(lg *leg, d []byte) {
		if fb := f.bwc.Load(); fb != nil {
			fb.up.Send(lg, d) // the virtual's controller next (bwc.go)
			return
		}
		if !lg.gone.Load() {
			lg.send(d)
		}
	})
	p.toClient = bwc.NewQueue(p.downB, func(f *flow, d []byte) {
		if fb := f.bwc.Load(); fb != nil {
			fb.toClient.Send(f, d)
			return
		}
		if !f.ended.Load() {
			f.toClient(d)
		}
	})
	f.pace.Store(p)
	return p
}

// close drops what the flow's queues hold.
func (p *flowPace) close() {
	if p == nil {
		return
	}
	p.up.Close()
	p.toClient.Close()
}

// maxRateBytes is the largest UDP::max_rate openltm takes: 2^40 bytes
// per second, beyond any link.
const maxRateBytes = 1 << 40

// maxBufPkts is the largest UDP::max_buf_pkts.
const maxBufPkts = 1 << 20

var _ rules.UDPRateConn = (*flow)(nil)

// UDPMaxRate implements rules.UDPRateConn.
func (f *flow) UDPMaxRate() uint64 {
	if p := f.pace.Load(); p != nil {
		return p.rate.Load()
	}
	return 0
}

// SetUDPMaxRate implements rules.UDPRateConn: 0 lifts the rate (the
// queues stay, bounded by max_buf_pkts).
func (f *flow) SetUDPMaxRate(bytesPerSec uint64) error {
	if bytesPerSec > maxRateBytes {
		return errors.New("rate out of range")
	}
	if bytesPerSec == 0 && f.pace.Load() == nil {
		return nil
	}
	p := f.paced()
	p.rate.Store(bytesPerSec)
	p.upB.SetRate(bytesPerSec * 8)
	p.downB.SetRate(bytesPerSec * 8)
	p.up.SetRate(bytesPerSec)
	p.toClient.SetRate(bytesPerSec)
	return nil
}

// UDPMaxBufPkts implements rules.UDPRateConn.
func (f *flow) UDPMaxBufPkts() int {
	if p := f.pace.Load(); p != nil {
		return int(p.maxPkts.Load())
	}
	return 0
}

// SetUDPMaxBufPkts implements rules.UDPRateConn.
func (f *flow) SetUDPMaxBufPkts(n int) error {
	if n < 0 || n > maxBufPkts {
		return errors.New("packet count out of range")
	}
	if n == 0 && f.pace.Load() == nil {
		return nil
	}
	p := f.paced()
	p.maxPkts.Store(int64(n))
	p.up.SetMaxPackets(n)
	p.toClient.SetMaxPackets(n)
	return nil
}

// UDPQueue implements rules.UDPRateConn: both directions' queues.
func (f *flow) UDPQueue() (toServer, toClient rules.UDPQueueStats) {
	if p := f.pace.Load(); p != nil {
		return queueStats(p.up.Stats()), queueStats(p.toClient.Stats())
	}
	return
}

func queueStats(s bwc.QueueStats) rules.UDPQueueStats {
	return rules.UDPQueueStats{Pkts: s.Pkts, Bytes: s.Bytes, MaxPkts: s.MaxPkts, Passed: s.Passed, Dropped: s.Dropped}
}

// ingressLimit is a rule's packet rate on a flow's client datagrams
// (IP::ingress_rate_limit): those past it are dropped before the flow's
// rules and its member see them, and counted for IP::ingress_drop_rate.
type ingressLimit struct {
	pps           uint64
	lim           *rate.Limiter
	seen, dropped atomic.Uint64
}

// newIngressLimit is pps packets a second, of which a second's worth
// may come at once [M: the burst a client's first datagrams need].
func newIngressLimit(pps uint64) *ingressLimit {
	return &ingressLimit{pps: pps, lim: rate.NewLimiter(rate.Limit(pps), int(min(pps, math.MaxInt32)))}
}

// allow counts one client datagram and reports whether it may pass.
func (il *ingressLimit) allow() bool {
	il.seen.Add(1)
	if il.lim.Allow() {
		return true
	}
	il.dropped.Add(1)
	return false
}

var _ rules.IngressLimitConn = (*flow)(nil)

// IngressRateLimit implements rules.IngressLimitConn.
func (f *flow) IngressRateLimit() uint64 {
	if il := f.ingress.Load(); il != nil {
		return il.pps
	}
	return 0
}

// SetIngressRateLimit implements rules.IngressLimitConn: a new limit
// starts its counts afresh; 0 lifts it.
func (f *flow) SetIngressRateLimit(pps uint64) error {
	if pps == 0 {
		f.ingress.Store(nil)
		return nil
	}
	f.ingress.Store(newIngressLimit(pps))
	return nil
}

// IngressDropRate implements rules.IngressLimitConn.
func (f *flow) IngressDropRate() (seen, dropped uint64) {
	if il := f.ingress.Load(); il != nil {
		return il.seen.Load(), il.dropped.Load()
	}
	return 0, 0
}
