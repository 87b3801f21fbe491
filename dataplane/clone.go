package dataplane

import (
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/l4"
	"github.com/openltm/openltm/rules"
)

// ClonePool is one of a virtual's clone-pools, as the daemon translates it.
type ClonePool = config.ClonePool

// CloneStats is what a virtual's clone pools got, summed over them:
// openltm's own rows of show ltm virtual (the pools' own counts are in
// show ltm pool).
type CloneStats struct {
	// Conns counts clone connections opened, Bytes what they carried.
	Conns, Bytes uint64
	// Dropped counts copies given up: no clone member available, its
	// connect failed, or it was slower than the traffic.
	Dropped uint64
}

// RuleCloneLate reports whether a rule's clone pool on v may start after
// CLIENT_ACCEPTED, in CLIENT_DATA, LB_SELECTED, LB_FAILED,
// SERVER_CONNECTED or SERVER_DATA (a plain TCP virtual, whose client
// bytes one copy loop reads), so that the daemon warns at commit of the clones the
// dataplane skips.
func RuleCloneLate(v *Virtual) bool { return v.Protocol != ProtoUDP && l4.LateClonable(v) }

// RuleCloneUDPMessages is the events after CLIENT_ACCEPTED in which a
// rule's clone pool may start on v, a UDP virtual: a message-routing
// one's ingress events over a client's message (the protocol's and
// MR_INGRESS), copying from its datagram on; nil for the other kinds.
func RuleCloneUDPMessages(v *Virtual) []rules.Event {
	if v.Protocol != ProtoUDP || v.MRF == nil {
		return nil
	}
	return irules.MRFIngress(irules.MRFProtocol(v.MRF))
}

// RuleCloneMessages is the events after CLIENT_ACCEPTED in which a
// rule's clone pool may start on v, a TCP gateway: over a client's
// message on one that serves the client message by message (mqtt, fix,
// rtsp, diameter, message routing: generic, SIP, Diameter, MQTT), copying
// from that message on, and (message routing aside) in the member's
// choice after the first message (LB_SELECTED, LB_FAILED,
// SERVER_CONNECTED), from that message on; before the copy loops start on socks
// (SOCKS_REQUEST) and ftp (LB_SELECTED, LB_FAILED, SERVER_CONNECTED)
// ones, copying as from CLIENT_ACCEPTED; over a member's message on
// mqtt (MQTT_SERVER_INGRESS, MQTT_SERVER_DATA), fix (its events with
// response-parsing) and diameter (a member's DIAMETER_INGRESS), copying
// the member's messages from that one on; nil for the other kinds. The
// daemon asks it to warn at commit of the clones the dataplane skips.
func RuleCloneMessages(v *Virtual) []rules.Event {
	if v.Protocol == ProtoUDP || v.MBLB != nil {
		return nil
	}
	if evs := l4.EarlyCloneEvents(v); evs != nil {
		return evs // socks, ftp: before their loops start
	}
	// The member's choice after the first message (l4.bindMsg).
	bind := []rules.Event{rules.LBSelected, rules.LBFailed, rules.ServerConnected}
	switch {
	case v.MQTT != nil:
		return append([]rules.Event{rules.MQTTClientIngress, rules.MQTTClientData, rules.MQTTServerIngress, rules.MQTTServerData}, bind...)
	case v.FIX != nil:
		return append([]rules.Event{rules.FIXHeader, rules.FIXMessage}, bind...)
	case v.RTSP != nil:
		return append([]rules.Event{rules.RTSPRequest, rules.RTSPRequestData}, bind...)
	case v.Diameter != nil:
		return append([]rules.Event{rules.DiameterIngress}, bind...)
	case v.MRF != nil:
		return irules.MRFIngress(irules.MRFProtocol(v.MRF))
	}
	return nil
}
