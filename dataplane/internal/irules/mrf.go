package irules

import (
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules"
)

// The message-routing framework's rule glue, the same for a TCP
// virtual's client connections (internal/l4/mrf.go) and a UDP virtual's
// flows (internal/udp/mrf.go).

// HandlesMRF says whether a program has a handler of an event a message
// router runs: without one, its clients' messages run no rule at all.
func HandlesMRF(p *rules.Program) bool {
	for _, ev := range []rules.Event{rules.GenericMessageIngress, rules.GenericMessageEgress, rules.MRIngress, rules.MREgress, rules.MRFailed,
		rules.SIPRequest, rules.SIPResponse, rules.DiameterIngress, rules.DiameterEgress} {
		if p.Handles(ev) {
			return true
		}
	}
	return false
}

// The message protocols' names (mrf.Protocol.Name), "" the generic one.
const (
	MRFSIP      = "sip"
	MRFDiameter = "diameter"
	MRFMQTT     = "mqtt"
)

// MRFProtocol is the name of a router's message protocol ("" generic).
func MRFProtocol(cfg *mrf.Config) string {
	if cfg.Proto == nil {
		return ""
	}
	return cfg.Proto.Name()
}

// The events a client's message runs on its way in (its protocol's,
// then MR_INGRESS; MQTT's client-side events around them) and a message
// on its way to the client (MR_EGRESS, then its protocol's) [M: openltm
// runs no rules on peer connections, so a peer's response runs
// SIP_RESPONSE as it leaves toward the client].
var (
	sipIn      = []rules.Event{rules.SIPRequest, rules.MRIngress}
	sipOut     = []rules.Event{rules.MREgress, rules.SIPResponse}
	diamIn     = []rules.Event{rules.DiameterIngress, rules.MRIngress}
	diamOut    = []rules.Event{rules.MREgress, rules.DiameterEgress}
	mqttIn     = []rules.Event{rules.MQTTClientIngress, rules.MQTTClientData, rules.MRIngress, rules.MQTTServerEgress}
	mqttOut    = []rules.Event{rules.MQTTServerIngress, rules.MQTTServerData, rules.MREgress, rules.MQTTClientEgress}
	genericIn  = []rules.Event{rules.GenericMessageIngress, rules.MRIngress}
	genericOut = []rules.Event{rules.MREgress, rules.GenericMessageEgress}
)

// MRFIngress is the events a client's message runs on its way in, in
// order (shared: not to be changed).
func MRFIngress(proto string) []rules.Event {
	switch proto {
	case MRFSIP:
		return sipIn
	case MRFDiameter:
		return diamIn
	case MRFMQTT:
		return mqttIn
	}
	return genericIn
}

// MRFEgress is the events a message runs on its way to the client, in
// order (shared: not to be changed).
func MRFEgress(proto string) []rules.Event {
	switch proto {
	case MRFSIP:
		return sipOut
	case MRFDiameter:
		return diamOut
	case MRFMQTT:
		return mqttOut
	}
	return genericOut
}

// MRFSIPOutcome applies what SIP_REQUEST or SIP_RESPONSE did to m: its
// edits, SIP::discard (the message is dropped) and SIP::respond (the
// rule's answer goes to the client at once; the request goes on unless
// discarded too, as on the sip profile's flows). false: the client
// could not be written.
func MRFSIPOutcome(m *mrf.Message, out rules.SIPState) bool {
	if out.Edited {
		m.Data = out.Msg
	}
	if out.Discard {
		m.Drop = true
	}
	if out.Reply != nil {
		if s := m.Originator(); s != nil && s.Send(out.Reply) != nil {
			return false
		}
	}
	return true
}
