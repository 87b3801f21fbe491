package mblbvs

import (
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// LB::connlimit on message-based and HTTP virtuals: the limits a rule
// sets hold for the member choice of each of the client's later requests
// (messages), a member's connections being its server connections.

var _ rules.ConnLimiter = (*mblbRules)(nil)

// SetConnLimit implements rules.ConnLimiter.
func (r *mblbRules) SetConnLimit(scope rules.LimitScope, limit int64) error {
	r.limits[scope].Store(limit)
	r.limited.Store(true)
	return nil
}

// ConnLimit implements rules.ConnLimiter.
func (r *mblbRules) ConnLimit(scope rules.LimitScope) int64 { return r.limits[scope].Load() }

// ruleLimits is the limits for one member choice.
func (r *mblbRules) ruleLimits() state.RuleLimits {
	return state.RuleLimits{
		Virtual: r.limits[rules.LimitVirtual].Load(),
		Node:    r.limits[rules.LimitNode].Load(),
		Member:  r.limits[rules.LimitPoolMember].Load(),
	}
}
