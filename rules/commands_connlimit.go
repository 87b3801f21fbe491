package rules

import (
	"strconv"

	"github.com/openltm/openltm/rules/tcl"
)

// LB::connlimit (virtual | node | poolmember) ?limit N? ?key K?: a
// connection limit of the rule's own for this connection's load-balancing
// decisions, on top of the configured connection-limit settings. With
// poolmember (node) the balancing passes over members (members of nodes)
// with N current connections or more, and a persisted or rule-named one
// over it is not taken (LB_FAILED runs when no member is left); with
// virtual the connection finds no member while the virtual already holds
// more than N connections, this one included [M: the clouddocs page
// names the three objects and the limit, and is silent on what a
// connection over the virtual's limit meets; openltm fails its load
// balancing, as when every member is at its limit]. Without limit the
// command answers the limit set for the object (0: none). limit 0 lifts
// it.
//
// key K counts the limit per key: only the connections whose rule gave
// the same object's limit the same key count toward it (K a client's
// address, say, limits each client to N connections on each member),
// and this connection counts under K on the virtual, and on the member
// and node it is balanced to, until it closes [M: the clouddocs page
// gives the option's syntax alone; a connection balanced anew counts on
// its new member only, and an empty key counts all the object's
// connections, as without one]. A limit set again without key counts
// all of them again; limit and key may come in either order.

// LimitScope is the object LB::connlimit sets a limit for.
type LimitScope uint8

// The objects.
const (
	LimitVirtual LimitScope = iota
	LimitNode
	LimitPoolMember
)

// ConnLimiter is a connection whose member choice honours LB::connlimit
// (the standard and UDP virtuals' flows, the message-based and HTTP
// virtuals' requests).
type ConnLimiter interface {
	// SetConnLimit sets scope's limit for the connection's decisions
	// from now on, counted per key when key is not empty; 0 lifts it.
	SetConnLimit(scope LimitScope, limit int64, key string) error
	// ConnLimit is scope's limit set for the connection (0: none).
	ConnLimit(scope LimitScope) int64
}

func registerConnLimit(t *tcl.Commands) {
	t.Register("LB::connlimit", cmdConnLimit)
}

func cmdConnLimit(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "LB::connlimit virtual|node|poolmember ?limit <value>? ?key <value>?"
	if len(args) < 2 || len(args)%2 != 0 || len(args) > 6 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	var scope LimitScope
	switch args[1].String() {
	case "virtual":
		scope = LimitVirtual
	case "node":
		scope = LimitNode
	case "poolmember":
		scope = LimitPoolMember
	default:
		return tcl.Empty, tcl.Errorf("LB::connlimit: bad object %q: must be virtual, node or poolmember", args[1].String())
	}
	limit, key, hasLimit, hasKey := int64(0), "", false, false
	for i := 2; i < len(args); i += 2 {
		switch opt := args[i].String(); {
		case opt == "limit" && !hasLimit:
			n, err := strconv.ParseInt(args[i+1].String(), 10, 64)
			if err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("LB::connlimit: expected a connection count (0 or more) but got %q", args[i+1].String())
			}
			limit, hasLimit = n, true
		case opt == "key" && !hasKey:
			key, hasKey = args[i+1].String(), true
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
	}
	_, c, err := sess(in, "LB::connlimit")
	if err != nil {
		return tcl.Empty, err
	}
	cl, ok := c.(ConnLimiter)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::connlimit: this connection's load balancing takes no rule limits")
	}
	if !hasLimit {
		// key alone names no limit to count: the limit set is read
		// [M].
		return tcl.Int(cl.ConnLimit(scope)), nil
	}
	return tcl.Empty, tclErr(cl.SetConnLimit(scope, limit, key))
}
