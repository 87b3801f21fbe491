package udp

import (
	"github.com/openltm/openltm/dataplane/bwc"
)

// flowBWC is a UDP flow under a bandwidth controller (its virtual's, or
// the one a rule attached with BWC::policy): the datagrams of each
// direction wait in a bounded queue of the flow for the policy's bucket,
// and those the queue has no room for are dropped and counted on the
// policy (dataplane/bwc). The virtual's dynamic policy's instance is the
// client's address and port [M: a UDP flow is one user, as a TCP
// connection is]; a rule's is the session it names.
type flowBWC struct {
	b        *bwc.Bucket
	up       *bwc.Queue[*leg]
	toClient *bwc.Queue[*flow]
}

// newFlowBWCOn puts f on bucket b: a policy's (with a rate class chained
// after it or not) or a rate class's. Each direction's queue waits on
// the class only for the datagrams of the class's direction.
func newFlowBWCOn(f *flow, b *bwc.Bucket) *flowBWC {
	return &flowBWC{
		b: b,
		up: bwc.NewQueueDir(b, true, func(lg *leg, d []byte) {
			if !lg.gone.Load() {
				lg.send(d)
			}
		}),
		toClient: bwc.NewQueueDir(b, false, func(f *flow, d []byte) {
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

// setBWC puts f under fb (nil: none) in place of what it was under,
// whose queued datagrams are dropped [M: a rule attaches a flow in
// CLIENT_ACCEPTED, before anything is queued]. A flow that has ended
// keeps none. The member sockets the flow opens from then on take fb's
// marking; those open keep theirs.
func (f *flow) setBWC(fb *flowBWC) {
	f.bwc.Swap(fb).close()
	if fb != nil && f.ended.Load() {
		// end took the flow's controller before this one was stored.
		if f.bwc.CompareAndSwap(fb, nil) {
			fb.close()
		}
	}
}
