package udp

import (
	"github.com/openltm/openltm/dataplane/bwc"
)

// flowBWC is a UDP flow under its virtual's bandwidth controller: the
// datagrams of each direction wait in a bounded queue of the flow for the
// policy's bucket, and those the queue has no room for are dropped and
// counted on the policy (dataplane/bwc). A dynamic policy's instance is
// the client's address and port [M: a UDP flow is one user, as a TCP
// connection is].
type flowBWC struct {
	b        *bwc.Bucket
	up       *bwc.Queue[*leg]
	toClient *bwc.Queue[*flow]
}

// newFlowBWC puts f under p; nil for no policy.
func newFlowBWC(f *flow, p *bwc.Policy) *flowBWC {
	if p == nil {
		return nil
	}
	b := p.Attach(f.Client.String())
	return &flowBWC{
		b: b,
		up: bwc.NewQueue(b, func(lg *leg, d []byte) {
			if !lg.gone.Load() {
				lg.send(d)
			}
		}),
		toClient: bwc.NewQueue(b, func(f *flow, d []byte) {
			if !f.ended.Load() {
				f.toClient(d)
			}
		}),
	}
}

// close drops what the flow's queues hold and releases its bucket.
func (fb *flowBWC) close() {
	if fb == nil {
		return
	}
	fb.up.Close()
	fb.toClient.Close()
	fb.b.Release()
}
