package l4

import (
	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/rules"
)

var _ rules.IngressLimitConn = (*proxied)(nil)

// IngressRateLimit implements rules.IngressLimitConn.
func (pr *proxied) IngressRateLimit() uint64 { return pr.ingress.Load().PPS() }

// SetIngressRateLimit implements rules.IngressLimitConn: reads from the
// client wait on pps packets a second (bwc.Ingress), a second's worth at
// once.
func (pr *proxied) SetIngressRateLimit(pps uint64) error {
	pr.ingress.Store(bwc.NewIngress(pps))
	return nil
}

// IngressDropRate implements rules.IngressLimitConn: a stream drops none.
func (pr *proxied) IngressDropRate() (seen, dropped uint64) { return 0, 0 }
