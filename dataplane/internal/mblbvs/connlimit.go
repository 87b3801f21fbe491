package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// LB::connlimit on message-based and HTTP virtuals: the limits a rule
// sets hold for the member choice of each of the client's later requests
// (messages), a member's connections being its server connections.

var _ rules.ConnLimiter = (*mblbRules)(nil)

// SetConnLimit implements rules.ConnLimiter. With a key, the client
// connection counts under it on the virtual and on the member (and node)
// of its latest request, until it closes.
func (r *mblbRules) SetConnLimit(scope rules.LimitScope, limit int64, key string) error {
	r.limits[scope].Store(limit)
	if key != "" || r.keys[scope].Load() != nil {
		r.keys[scope].Store(&key)
	}
	r.limited.Store(true)
	return nil
}

// ConnLimit implements rules.ConnLimiter.
func (r *mblbRules) ConnLimit(scope rules.LimitScope) int64 { return r.limits[scope].Load() }

// ruleLimits is the limits for one member choice.
func (r *mblbRules) ruleLimits() state.RuleLimits {
	return state.RuleLimits{
		Virtual:    r.limits[rules.LimitVirtual].Load(),
		Node:       r.limits[rules.LimitNode].Load(),
		Member:     r.limits[rules.LimitPoolMember].Load(),
		VirtualKey: r.key(rules.LimitVirtual),
		NodeKey:    r.key(rules.LimitNode),
		MemberKey:  r.key(rules.LimitPoolMember),
	}
}

// key is scope's LB::connlimit key ("": none).
func (r *mblbRules) key(scope rules.LimitScope) string {
	if k := r.keys[scope].Load(); k != nil {
		return *k
	}
	return ""
}
