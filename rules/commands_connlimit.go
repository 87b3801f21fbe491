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
// key counts the limit per key value (a client's address, say): openltm
// keeps no per-key connection counts, so a rule naming key is kept with
// a warning and not run (connLimitHook), rather than limiting all the
// object's connections together.

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
	// from now on; 0 lifts it.
	SetConnLimit(scope LimitScope, limit int64) error
	// ConnLimit is scope's limit set for the connection (0: none).
	ConnLimit(scope LimitScope) int64
}

// connLimitKeyWhy is the reason a rule with LB::connlimit ... key is
// kept with a warning.
const connLimitKeyWhy = "openltm keeps no per-key connection counts for the key option"

func registerConnLimit(t *tcl.Commands) {
	t.Register("LB::connlimit", cmdConnLimit).Compile = connLimitHook
}

// connLimitHook warns of the key option when the rule writes it.
func connLimitHook(c *tcl.Compiler) error {
	r, ok := c.Context().(*Rule)
	if !ok {
		return nil
	}
	for i := 1; i < c.NumWords(); i++ {
		if w, lit := c.Literal(i); lit && w == "key" {
			line, col := c.Pos(0)
			r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: "LB::connlimit (key: " + connLimitKeyWhy + ")", Line: line, Col: col})
			break
		}
	}
	return nil
}

func cmdConnLimit(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "LB::connlimit virtual|node|poolmember ?limit <value>?"
	if len(args) != 2 && len(args) != 4 {
		if len(args) > 2 && (args[2].String() == "key" || len(args) > 4 && args[4].String() == "key") {
			return tcl.Empty, tcl.Errorf("LB::connlimit: not supported: %s", connLimitKeyWhy)
		}
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
	_, c, err := sess(in, "LB::connlimit")
	if err != nil {
		return tcl.Empty, err
	}
	cl, ok := c.(ConnLimiter)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::connlimit: this connection's load balancing takes no rule limits")
	}
	if len(args) == 2 {
		return tcl.Int(cl.ConnLimit(scope)), nil
	}
	if args[2].String() == "key" {
		return tcl.Empty, tcl.Errorf("LB::connlimit: not supported: %s", connLimitKeyWhy)
	}
	if args[2].String() != "limit" {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	n, err := strconv.ParseInt(args[3].String(), 10, 64)
	if err != nil || n < 0 {
		return tcl.Empty, tcl.Errorf("LB::connlimit: expected a connection count (0 or more) but got %q", args[3].String())
	}
	return tcl.Empty, tclErr(cl.SetConnLimit(scope, n))
}
