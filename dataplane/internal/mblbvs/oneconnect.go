package mblbvs

import (
	"errors"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/rules"
)

// ONECONNECT::label and ONECONNECT::select on a message-based virtual
// (an HTTP virtual's go through its HTTP actions, http.go): they key the
// OneConnect server connections of the messages the client's reader
// frames from then on, so they are taken where that reader runs the
// rule, CLIENT_ACCEPTED and CLIENT_DATA.

var _ rules.OneConnectKeyer = (*mblbRules)(nil)

var errOneConnectEvent = errors.New("ONECONNECT::label and ONECONNECT::select key the client's messages in CLIENT_ACCEPTED and CLIENT_DATA on a message-based virtual")

// oneConnectEvent reports whether the running event is the client
// reader's.
func (r *mblbRules) oneConnectEvent() bool {
	return r.f.sess != nil && (r.ev == config.EventClientAccepted || r.ev == config.EventClientData)
}

// OneConnectLabel implements rules.OneConnectKeyer.
func (r *mblbRules) OneConnectLabel(label string) error {
	if !r.oneConnectEvent() {
		return errOneConnectEvent
	}
	r.f.sess.SetOneConnectLabel(label)
	return nil
}

// OneConnectSelect implements rules.OneConnectKeyer.
func (r *mblbRules) OneConnectSelect(persist bool) error {
	if !r.oneConnectEvent() {
		return errOneConnectEvent
	}
	r.f.sess.SelectPersist(persist)
	return nil
}
