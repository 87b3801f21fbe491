package bwc

import (
	"math"
	"time"

	"golang.org/x/time/rate"
)

// Ingress is a rule's limit on a stream's client packets
// (IP::ingress_rate_limit), shared by the L4 proxy's flows and the http
// virtuals' clients. A stream cannot drop what the kernel has
// acknowledged, so the reader of the client waits after each read [M]:
// a packet per full segment it holds, so that what the client sends
// meanwhile stays in the socket buffers until its window closes. It
// never drops, so IP::ingress_drop_rate is 0 for a stream.
type Ingress struct {
	pps uint64
	lim *rate.Limiter
}

// NewIngress is a limit of pps packets a second, a second's worth at
// once; nil for 0 (none).
func NewIngress(pps uint64) *Ingress {
	if pps == 0 {
		return nil
	}
	return &Ingress{pps: pps, lim: rate.NewLimiter(rate.Limit(pps), int(min(pps, math.MaxInt32)))}
}

// PPS is the limit, 0 for a nil one.
func (ig *Ingress) PPS() uint64 {
	if ig == nil {
		return 0
	}
	return ig.pps
}

// Wait takes the packets n bytes of the client make.
func (ig *Ingress) Wait(n int) {
	pk := (n + packetBytes - 1) / packetBytes
	for pk > 0 {
		k := min(pk, ig.lim.Burst())
		r := ig.lim.ReserveN(time.Now(), k)
		if !r.OK() {
			return
		}
		if d := r.Delay(); d > 0 {
			t := time.NewTimer(d)
			<-t.C
		}
		pk -= k
	}
}
