package daemon

import (
	"slices"
	"strings"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// cloningRules are the rules of list with a clone command.
func cloningRules(list []*rules.Rule) []*rules.Rule {
	var out []*rules.Rule
	for _, r := range list {
		if r.Clones() || r.CloneNexthop() {
			out = append(out, r)
		}
	}
	return out
}

// ruleCloneKind says which events a rule's clone pool acts in on v, and
// what v is when it acts in none: standard TCP virtuals (and the
// message-routing, Diameter, MQTT, FIX and RTSP ones, whose messages the
// clone gets as the client sent them, SOCKS tunnels after their
// negotiation) clone the client's bytes from CLIENT_ACCEPTED (plain
// ones also from CLIENT_DATA, LB_SELECTED, LB_FAILED or
// SERVER_CONNECTED: dataplane.RuleCloneLate; the mqtt, fix, diameter
// and message-routing ones from a client message's events, the mqtt,
// fix and diameter ones also from a member's message's ingress events,
// copying the member's messages: dataplane.RuleCloneMessages), UDP
// virtuals the flow's datagrams, message-based virtuals the client's
// messages, http virtuals (HTTP/1, and the streams of HTTP/2 and
// HTTP/3 clients) the client's requests from CLIENT_ACCEPTED or from
// the request whose HTTP_REQUEST ran it, dns virtuals each query from
// its DNS_REQUEST.
func ruleCloneKind(v *dataplane.Virtual) (events []rules.Event, kind string) {
	switch {
	case v.DoH != nil && v.DNS != nil:
		// Each query taken out of its request is copied as a TCP
		// query (dataplane/dnsvs/doh.go, DoHCopies); the connection's
		// later ones from DNS_RESPONSE.
		return []rules.Event{rules.DNSRequest, rules.DNSResponse}, ""
	case v.DoH != nil:
		// Its clone pools copy the queries (dnsvs.ProxyCopies), but no
		// rule event runs on it (dohRuleEvents warns of them).
		return nil, "a DNS over HTTPS virtual server without a dns profile (none of its rules' events runs; its clone-pools copy the queries)"
	case v.DNS != nil:
		// Each query (UDP and TCP) is copied after its DNS_REQUEST; over
		// TCP a clone in DNS_RESPONSE copies the connection's later
		// queries. CLIENT_ACCEPTED does not run on a dns virtual's
		// queries.
		if v.Protocol == dataplane.ProtoUDP {
			return []rules.Event{rules.DNSRequest}, "" // dataplane/dnsvs/clone.go
		}
		return []rules.Event{rules.DNSRequest, rules.DNSResponse}, ""
	case v.Protocol == dataplane.ProtoUDP:
		// Message routing over UDP (sip, generic) also from a client
		// message's ingress events, from its datagram on.
		return append([]rules.Event{rules.ClientAccepted}, dataplane.RuleCloneUDPMessages(v)...), "" // dataplane/internal/udp/clone.go
	case v.ILX != nil:
		return nil, "a virtual server with an ilx plugin profile (the plugin owns the connection)"
	case v.MBLB != nil && v.MBLB.ExplicitProxy != nil:
		// The client's connection, as on a standard virtual; by
		// HTTP_REQUEST the request's head was read.
		return []rules.Event{rules.ClientAccepted}, "" // dataplane/internal/mblbvs/clone.go, fwdCopy
	case v.MBLB != nil && v.MBLB.Request.Mode == mblb.HTTP:
		return []rules.Event{rules.ClientAccepted, rules.HTTPRequest, rules.HTTPRequestData}, "" // dataplane/internal/mblbvs/clone.go
	case v.MBLB != nil:
		return []rules.Event{rules.ClientAccepted}, "" // dataplane/internal/mblbvs/clone.go
	case v.TLS != nil && v.TLS.Forward != nil:
		return nil, "an SSL forward proxy virtual server without an http profile (its rules' CLIENT_ACCEPTED does not run; its clone pools copy the decrypted bytes)"
	}
	if dataplane.RuleCloneLate(v) {
		// A plain TCP flow: the events that run on the client's
		// goroutine, from the bytes the member was not sent yet.
		// SERVER_DATA's clone is joined by the client's goroutine at
		// its next read (joinSrvClones).
		return []rules.Event{rules.ClientAccepted, rules.ClientData, rules.LBSelected, rules.LBFailed, rules.ServerConnected, rules.ServerData}, "" // dataplane/internal/l4/clone.go
	}
	// Gateways that serve the client message by message (mqtt, fix,
	// diameter, message routing) also clone from a client's message's
	// events, from that message on (l4/clone.go, beginMsg).
	return append([]rules.Event{rules.ClientAccepted}, dataplane.RuleCloneMessages(v)...), "" // dataplane/internal/l4/clone.go
}

// ruleClones warns, at commit, of a rule's clone pool that openltm skips
// on v: on a kind of virtual it does not clone from a rule, or in an
// event where that kind cannot start the copy; and of clone nexthop,
// which it always skips. The virtual carries its
// traffic either way; the skipped clone is counted as dropped where the
// virtual can count it. BIG-IP takes the rule there.
func (t *translator) ruleClones(o *objects.Object, v *dataplane.Virtual, list []*rules.Rule) {
	for _, r := range list {
		if r.CloneNexthop() {
			t.note(o, "rule %s: clone nexthop is valid on BIG-IP but skipped: a proxy on the host's sockets copies no frames to a VLAN (clone pool copies the bytes)", r.Name)
		}
		if !r.Clones() {
			continue // clone nexthop alone
		}
		events, kind := ruleCloneKind(v)
		if kind != "" {
			t.note(o, "rule %s: clone pool on %s is valid on BIG-IP but skipped: openltm does not clone its traffic from a rule yet", r.Name, kind)
			continue
		}
		var late []string
		for _, ev := range r.CloneEvents() {
			if !slices.Contains(events, ev) {
				late = append(late, ev.String())
			}
		}
		if len(late) > 0 {
			why := "before the bytes it would copy passed"
			if v.DNS != nil {
				why = "CLIENT_ACCEPTED does not run on a dns virtual server's queries, and a UDP query has gone by DNS_RESPONSE"
			} else if v.Socks != nil || v.FTP != nil {
				why = "before the tunnel's or the control connection's copy loops start"
			} else if dataplane.RuleCloneMessages(v) != nil || dataplane.RuleCloneUDPMessages(v) != nil {
				why = "the events over a message where it is read"
			}
			t.note(o, "rule %s: clone pool in %s is valid on BIG-IP but skipped here: openltm starts a rule's clone on this virtual server in %s only, %s", r.Name, strings.Join(late, ", "), eventList(events), why)
		}
	}
}

// eventList is evs as F5 writes them, "A or B", "A, B or C".
func eventList(evs []rules.Event) string {
	s := make([]string, len(evs))
	for i, e := range evs {
		s[i] = e.String()
	}
	if len(s) < 3 {
		return strings.Join(s, " or ")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
