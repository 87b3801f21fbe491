package rules

import (
	"hash/fnv"
	"time"

	"github.com/openltm/openltm/rules/tcl"
	//lint:ignore SA1019 BIG-IP's md4 command gives MD4's digest; rules written for it must get the same
	"golang.org/x/crypto/md4"
)

// FlowActivity is the part of a connection FLOW::idle_duration and
// FLOW::refresh need: when it last carried data, and a way to count now as
// activity, so that a rule can keep a quiet but wanted connection (a
// control channel beside a busy data channel) from its idle timeout.
// Optional, checked with a type assertion.
type FlowActivity interface {
	// FlowLastActive is when either side of the connection last moved data.
	FlowLastActive() time.Time
	// RefreshFlow counts now as activity: the idle timeout starts again.
	RefreshFlow()
}

// Flow handles: BIG-IP's FLOW::this names a flow by an opaque handle;
// openltm's rules only ever reach the two flows of their own connection,
// so the handle is the side's name [M].
const (
	flowClient = "clientside"
	flowServer = "serverside"
)

func registerFlow(t *tcl.Commands) {
	t.Register("FLOW::this", cmdFlowThis)
	t.Register("FLOW::peer", cmdFlowPeer)
	t.Register("FLOW::idle_timeout", cmdFlowIdleTimeout)
	t.Register("FLOW::idle_duration", cmdFlowIdleDuration)
	t.Register("FLOW::refresh", cmdFlowRefresh)
	t.Register("FLOW::priority", cmdFlowPriority)
	t.Register("peer", cmdPeer).Compile = scriptLast
	t.Register("sharedvar", cmdSharedvar)
	t.Register("fasthash", cmdFasthash)
	t.Register("md4", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("md4 string")
		}
		h := md4.New()
		h.Write(tcl.BytesOf(args[1]))
		return tcl.Bytes(h.Sum(nil)), nil
	})
}

// flowSide reads a flow handle of this connection.
func flowSide(cmd string, v tcl.Value) (Side, error) {
	switch v.String() {
	case flowClient:
		return ClientSide, nil
	case flowServer:
		return ServerSide, nil
	}
	return 0, tcl.Errorf("%s: %q is not a flow of this connection (FLOW::this gives one)", cmd, v.String())
}

func flowHandle(s Side) tcl.Value {
	if s == ServerSide {
		return tcl.Str(flowServer)
	}
	return tcl.Str(flowClient)
}

// cmdFlowThis is FLOW::this ?clientside|serverside?: the handle of the
// event's flow, or of the side named.
func cmdFlowThis(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, _, err := sess(in, "FLOW::this")
	if err != nil {
		return tcl.Empty, err
	}
	side, ok := sideOf(s, args)
	if !ok {
		return tcl.Empty, tcl.WrongArgs("FLOW::this ?clientside|serverside?")
	}
	return flowHandle(side), nil
}

// cmdFlowPeer is FLOW::peer FLOW: the other flow of the connection.
func cmdFlowPeer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("FLOW::peer flow")
	}
	if _, _, err := sess(in, "FLOW::peer"); err != nil {
		return tcl.Empty, err
	}
	side, err := flowSide("FLOW::peer", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	if side == ClientSide {
		return flowHandle(ServerSide), nil
	}
	return flowHandle(ClientSide), nil
}

// flowArgs splits a FLOW:: command's optional leading flow handle from
// the rest of its words.
func flowArgs(cmd string, args []tcl.Value, maxRest int, usage string) ([]tcl.Value, error) {
	rest := args[1:]
	if len(rest) > 0 {
		if w := rest[0].String(); w == flowClient || w == flowServer {
			rest = rest[1:]
		} else if len(rest) > maxRest {
			if _, err := flowSide(cmd, rest[0]); err != nil {
				return nil, err
			}
		}
	}
	if len(rest) > maxRest {
		return nil, tcl.WrongArgs(usage)
	}
	return rest, nil
}

// cmdFlowIdleTimeout is FLOW::idle_timeout ?FLOW? ?SECONDS?: the idle
// timeout of the connection, in seconds (0: none), or sets it. openltm
// keeps one idle timer per connection, which both sides' traffic
// restarts, so either flow's timeout is the connection's and setting one
// sets both [M]. 0 and indefinite take the timeout away, as the tcp
// profile's idle-timeout 0 does not (BIG-IP's 0 there is "immediate") but
// TCP::idletime 0 does [M].
func cmdFlowIdleTimeout(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "FLOW::idle_timeout"
	rest, err := flowArgs(name, args, 1, name+" ?flow? ?timeout?")
	if err != nil {
		return tcl.Empty, err
	}
	_, c, err := sess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	it, ok := c.(IdleTimer)
	if !ok {
		return tcl.Empty, tcl.Errorf("%s: this virtual server's connections have no idle timeout", name)
	}
	if len(rest) == 0 {
		return tcl.Int(int64((it.FlowIdleTimeout() + time.Second - 1) / time.Second)), nil
	}
	if rest[0].String() == "indefinite" {
		it.SetFlowIdleTimeout(0)
		return tcl.Empty, nil
	}
	n, err := rest[0].Int64()
	if err != nil || n < 0 || n > maxIdleTimeout {
		return tcl.Empty, tcl.Errorf("%s: %q is not a number of seconds from 0 to %d, or indefinite", name, rest[0].String(), maxIdleTimeout)
	}
	it.SetFlowIdleTimeout(time.Duration(n) * time.Second)
	return tcl.Empty, nil
}

// activity is the connection's FlowActivity, or a Tcl error.
func activity(in *tcl.Interp, name string) (FlowActivity, error) {
	_, c, err := sess(in, name)
	if err != nil {
		return nil, err
	}
	fa, ok := c.(FlowActivity)
	if !ok {
		return nil, tcl.Errorf("%s: this virtual server's connections keep no activity time", name)
	}
	return fa, nil
}

// cmdFlowIdleDuration is FLOW::idle_duration ?FLOW?: how long, in whole
// seconds, the connection has carried nothing (either flow's traffic
// counts, as for its one idle timer) [M: the unit].
func cmdFlowIdleDuration(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "FLOW::idle_duration"
	if _, err := flowArgs(name, args, 0, name+" ?flow?"); err != nil {
		return tcl.Empty, err
	}
	fa, err := activity(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	d := time.Since(fa.FlowLastActive())
	if d < 0 {
		d = 0
	}
	return tcl.Int(int64(d / time.Second)), nil
}

// cmdFlowRefresh is FLOW::refresh ?FLOW?: counts now as activity, so the
// idle timeout starts again.
func cmdFlowRefresh(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "FLOW::refresh"
	if _, err := flowArgs(name, args, 0, name+" ?flow?"); err != nil {
		return tcl.Empty, err
	}
	fa, err := activity(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	fa.RefreshFlow()
	return tcl.Empty, nil
}

// maxFlowPriority is the highest FLOW::priority: BIG-IP's priorities are
// 0 to 7, which SO_PRIORITY carries as the packets' queueing priority
// (Linux lets a process without CAP_NET_ADMIN use 0 to 6).
const maxFlowPriority = 7

// cmdFlowPriority is FLOW::priority ?FLOW? ?PRIORITY?: the flow's
// priority, 0 to 7, as the kernel queues its packets (SO_PRIORITY, which
// a qdisc such as prio or mqprio, or a VLAN's egress QoS map, acts on),
// or sets it [M: BIG-IP's flow priority is its own packet scheduler's].
// Without a flow word it is the event's side.
func cmdFlowPriority(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "FLOW::priority"
	s, _, err := sess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	side := s.side
	rest := args[1:]
	if len(rest) > 0 && (rest[0].String() == flowClient || rest[0].String() == flowServer) {
		side, _ = flowSide(name, rest[0])
		rest = rest[1:]
	}
	if len(rest) > 1 {
		return tcl.Empty, tcl.WrongArgs(name + " ?flow? ?priority?")
	}
	of := func(*ConnState) Side { return side }
	if len(rest) == 0 {
		var n int
		err := socketOf(in, name, of, func(fd int) error {
			var err error
			n, err = getPriority(fd)
			return err
		})
		return tcl.Int(int64(n)), err
	}
	n, err := rest[0].Int64()
	if err != nil || n < 0 || n > maxFlowPriority {
		return tcl.Empty, tcl.Errorf("%s: %q is not a priority from 0 to %d", name, rest[0].String(), maxFlowPriority)
	}
	return tcl.Empty, socketOf(in, name, of, func(fd int) error { return setPriority(fd, int(n)) })
}

// cmdPeer is peer SCRIPT: the script run in the other side's context
// than the event's (a server event's rule reading the client's flow,
// and the other way round), as clientside and serverside name a side.
func cmdPeer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("peer script")
	}
	s := sessionOf(in)
	if s == nil {
		return in.EvalValue(args[1])
	}
	saved := s.side
	s.side = ClientSide
	if saved == ClientSide {
		s.side = ServerSide
	}
	v, err := in.EvalValue(args[1])
	s.side = saved
	return v, err
}

// cmdSharedvar is sharedvar NAME ?NAME ...?: BIG-IP 9's way to share a
// variable among the rules of a connection. openltm's rules of one
// connection already share its variables (as BIG-IP's have since 9.4),
// so at an event's level it changes nothing; inside a proc it links the
// names to the connection's variables, as global does, so that a proc
// called from the event sees and sets them [M].
func cmdSharedvar(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("sharedvar varname ?varname ...?")
	}
	for _, a := range args[1:] {
		if a.String() == "" {
			return tcl.Empty, tcl.Errorf("sharedvar: a variable name cannot be empty")
		}
	}
	return in.Commands().Lookup("global").Fn(in, args)
}

// cmdFasthash is fasthash STRING: a quick, non-cryptographic hash of the
// bytes, for spreading keys over buckets (32-bit FNV-1a as an unsigned
// number [M: BIG-IP does not document its function, so no rule can
// depend on its values]).
func cmdFasthash(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("fasthash string")
	}
	h := fnv.New32a()
	h.Write(tcl.BytesOf(args[1]))
	return tcl.Int(int64(h.Sum32())), nil
}
