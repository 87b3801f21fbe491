package daemon

import (
	"github.com/openltm/openltm/dataplane"
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
// only the standard TCP proxy's flows take a rule's clone, and elsewhere
// every connection would be reset by the command's Tcl error. BIG-IP
// takes the rule there; openltm does not act on it yet.
func (t *translator) ruleClones(o *objects.Object, v *dataplane.Virtual, rule string) bool {
	if rule == "" {
		return true
	}
	kind := ""
	switch {
	case v.Protocol == dataplane.ProtoUDP:
		kind = "a UDP virtual server"
	case v.DNS != nil:
		kind = "a virtual server with a dns profile"
	case v.MBLB != nil:
		kind = "an http or message-based virtual server"
	case v.Socks != nil:
		kind = "a virtual server with a socks profile"
	case v.ILX != nil:
		kind = "a virtual server with an ilx plugin profile"
	case v.TLS != nil && v.TLS.Forward != nil:
		kind = "an SSL forward proxy virtual server"
	default:
		return true
	}
	t.keep(o, "rule %s: clone pool on %s is valid on BIG-IP but not implemented yet (openltm clones a standard TCP virtual server's connections from a rule)", rule, kind)
	return false
}
