package daemon

import (
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// A pool's connection queue (queue-on-connection-limit).
var (
	poolQueueOn    = ltmPool.MustProp("queue-on-connection-limit")
	poolQueueDepth = ltmPool.MustProp("queue-depth-limit")
	poolQueueTime  = ltmPool.MustProp("queue-time-limit")
)

// poolQueue fills in p's connection queue from o: off unless
// queue-on-connection-limit is enabled; the time limit is in
// milliseconds, as BIG-IP counts it.
func (t *translator) poolQueue(o *objects.Object, p *dataplane.Pool) {
	if poolQueueOn.Effective(t.cfg, o) != "enabled" {
		return
	}
	p.QueueOnConnLimit = true
	p.QueueDepthLimit = atoi(poolQueueDepth.Effective(t.cfg, o))
	p.QueueTimeLimit = time.Duration(atoi(poolQueueTime.Effective(t.cfg, o))) * time.Millisecond
}
