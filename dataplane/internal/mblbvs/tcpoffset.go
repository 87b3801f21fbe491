package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

var _ rules.StreamOffsetter = (*mblbRules)(nil)

// StreamOffset implements rules.StreamOffsetter (TCP::offset): the client
// connection's bytes received, or those of the server connection the
// event's message came on, less the message bytes the rule holds.
func (r *mblbRules) StreamOffset(s rules.Side) (int64, error) {
	var in uint64
	var held int
	if r.d != nil && (r.d.Side() == mblb.ServerSide) == (s == rules.ServerSide) {
		held = len(r.d.Payload())
	}
	if s == rules.ClientSide {
		in = r.f.BytesIn.Load()
	} else {
		var l *mblb.Leg
		switch {
		case r.d != nil && r.d.Side() == mblb.ServerSide:
			l = r.d.Leg()
		case r.hx != nil && r.hx.IsResponse():
			l = r.hx.ServerLeg()
		}
		if l == nil {
			return 0, errors.New("the event has no one server connection (a message-based or HTTP virtual's server side is one per member)")
		}
		in = l.BytesIn.Load()
	}
	return max(int64(in)-int64(held), 0), nil
}
