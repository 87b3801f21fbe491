package dataplane

import "github.com/openltm/openltm/dataplane/internal/state"

// ConnQueueStats is a pool's connection queue in `show ltm pool` (connq):
// depth, ages in milliseconds, and what became of the connections it
// held.
type ConnQueueStats = state.ConnQueueStats

// syncConnQueues follows a commit in the pools' connection queues: a
// deleted pool's waiting connections are reset; a pool whose queueing was
// turned off lets each choose once more (served if a member has room,
// reset otherwise); a lowered depth limit resets those beyond it; and
// every queue's head chooses again, since a raised connection limit or a
// member added or enabled may have made room.
func syncConnQueues(old, now map[string]*state.Pool) {
	for name, p := range old {
		if now[name] != p {
			p.Queue.Close()
		}
	}
	for _, p := range now {
		if !p.Queue.Waiting() {
			continue
		}
		cfg := p.Snap.Load().Cfg
		if !cfg.QueueOnConnLimit {
			p.Queue.Flush()
			continue
		}
		p.Queue.Trim(cfg.QueueDepthLimit)
	}
}
