package l4

import (
	"math"
	"time"

	"golang.org/x/time/rate"

	"github.com/openltm/openltm/rules"
)

// segmentBytes is the bytes of one client segment, for a packet limit on
// a stream: a full segment of a 1500-byte Ethernet link.
const segmentBytes = 1448

// ingressPace is a rule's limit on a flow's client packets
// (IP::ingress_rate_limit). A stream cannot drop what the kernel has
// acknowledged, so the copy loop reads the client no faster than the
// limit [M]: each read waits for a packet per full segment it holds, and
// what the client sends meanwhile stays in its socket buffers until the
// window closes. It never drops, so IP::ingress_drop_rate is 0.
type ingressPace struct {
	pps uint64
	lim *rate.Limiter
}

// wait takes the packets n bytes of the client make.
func (ip *ingressPace) wait(n int) {
	pk := (n + segmentBytes - 1) / segmentBytes
	for pk > 0 {
		k := min(pk, ip.lim.Burst())
		r := ip.lim.ReserveN(time.Now(), k)
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

var _ rules.IngressLimitConn = (*proxied)(nil)

// IngressRateLimit implements rules.IngressLimitConn.
func (pr *proxied) IngressRateLimit() uint64 {
	if ip := pr.ingress.Load(); ip != nil {
		return ip.pps
	}
	return 0
}

// SetIngressRateLimit implements rules.IngressLimitConn: reads from the
// client wait on pps packets a second, a second's worth at once.
func (pr *proxied) SetIngressRateLimit(pps uint64) error {
	if pps == 0 {
		pr.ingress.Store(nil)
		return nil
	}
	pr.ingress.Store(&ingressPace{pps: pps, lim: rate.NewLimiter(rate.Limit(pps), int(min(pps, math.MaxInt32)))})
	return nil
}

// IngressDropRate implements rules.IngressLimitConn: a stream drops none.
func (pr *proxied) IngressDropRate() (seen, dropped uint64) { return 0, 0 }
