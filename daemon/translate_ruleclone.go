package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// cloningRule is the name of the first rule of list with a clone pool
// command, "" when none has one.
func cloningRule(list []*rules.Rule) string {
	for _, r := range list {
		if r.Clones() {
			return r.Name
		}
	}
	return ""
}

// ruleClones keeps with a warning a virtual server whose rule clones
// (clone pool) when openltm cannot clone its connections from a rule:
// standard TCP virtuals clone the client's bytes, http virtuals (HTTP/1,
// and the streams of HTTP/2 and HTTP/3 clients) its requests, UDP
// virtuals its flow's datagrams; elsewhere every connection would be
// reset by the command's Tcl error. BIG-IP takes the rule there; openltm
// does not act on it yet.
func (t *translator) ruleClones(o *objects.Object, v *dataplane.Virtual, rule string) bool {
	if rule == "" {
		return true
	}
	kind := ""
	switch {
	case v.DNS != nil:
		kind = "a virtual server with a dns profile"
	case v.Protocol == dataplane.ProtoUDP:
		return true // dataplane/internal/udp/clone.go
	case v.Socks != nil:
		kind = "a virtual server with a socks profile"
	case v.ILX != nil:
		kind = "a virtual server with an ilx plugin profile"
	case v.MBLB != nil && v.MBLB.ExplicitProxy != nil:
		kind = "an explicit HTTP proxy virtual server"
	case v.TLS != nil && v.TLS.Forward != nil:
		kind = "an SSL forward proxy virtual server"
	case v.MBLB != nil && v.MBLB.Request.Mode != mblb.HTTP:
		kind = "a message-based virtual server"
	default:
		return true // standard TCP (dataplane/internal/l4/clone.go), http (dataplane/internal/mblbvs/clone.go)
	}
	t.keep(o, "rule %s: clone pool on %s is valid on BIG-IP but not implemented yet (openltm clones the connections of standard TCP, http and UDP virtual servers from a rule)", rule, kind)
	return false
}
