package rules

import (
	"fmt"

	"github.com/openltm/openltm/rules/tcl"
)

// UDPRateConn is a UDP flow a rule can pace (UDP::max_rate,
// UDP::max_buf_pkts, UDP::debug_queue), found by type assertion.
type UDPRateConn interface {
	// UDPMaxRate is the flow's rate in bytes per second, 0 for none;
	// SetUDPMaxRate changes it (0 lifts it).
	UDPMaxRate() uint64
	SetUDPMaxRate(bytesPerSec uint64) error
	// UDPMaxBufPkts is the most datagrams each direction's queue holds,
	// 0 for no packet bound; SetUDPMaxBufPkts changes it.
	UDPMaxBufPkts() int
	SetUDPMaxBufPkts(n int) error
	// UDPQueue reads the queues toward the member and toward the client.
	UDPQueue() (toServer, toClient UDPQueueStats)
}

// UDPQueueStats is one direction of a paced UDP flow's queue: what it
// holds now, its packet bound, and the datagrams it passed and dropped.
type UDPQueueStats struct {
	Pkts, Bytes, MaxPkts int
	Passed, Dropped      uint64
}

// IngressLimitConn is a flow whose client packets a rule can limit
// (IP::ingress_rate_limit, IP::ingress_drop_rate), found by type
// assertion: UDP flows drop the datagrams past the limit, TCP flows and
// an http virtual's clients hold the client back by reading no faster
// than the limit.
type IngressLimitConn interface {
	// IngressRateLimit is the limit in packets per second, 0 for none;
	// SetIngressRateLimit changes it (0 lifts it), starting its counts
	// afresh.
	IngressRateLimit() uint64
	SetIngressRateLimit(pps uint64) error
	// IngressDropRate is the client packets seen since the limit was set
	// and how many of them it dropped.
	IngressDropRate() (seen, dropped uint64)
}

// maxRuleRate bounds the rates these commands take: 2^40 (bytes or
// packets a second), beyond any link.
const maxRuleRate = 1 << 40

func registerRateLimits(t *tcl.Commands) {
	t.Register("UDP::max_rate", cmdUDPMaxRate)
	t.Register("UDP::max_buf_pkts", cmdUDPMaxBufPkts)
	t.Register("UDP::debug_queue", cmdUDPDebugQueue)
	t.Register("IP::ingress_rate_limit", cmdIngressRateLimit).Compile = ingressHook
	t.Register("IP::ingress_drop_rate", cmdIngressDropRate)
}

// udpRate is the rule's flow as a UDPRateConn.
func udpRate(in *tcl.Interp, name string) (UDPRateConn, error) {
	_, c, err := udpSess(in, name)
	if err != nil {
		return nil, err
	}
	rc, ok := c.(UDPRateConn)
	if !ok {
		return nil, tcl.Errorf("%s: this flow cannot be paced", name)
	}
	return rc, nil
}

// ruleCount parses a non-negative count up to limit, or is a Tcl error
// naming what it counts.
func ruleCount(name string, v tcl.Value, what string, limit int64) (int64, error) {
	n, err := v.Int64()
	if err != nil || n < 0 || n > limit {
		return 0, tcl.Errorf("%s: %q is not %s from 0 to %d", name, v.String(), what, limit)
	}
	return n, nil
}

// cmdUDPMaxRate is UDP::max_rate ?RATE?: the flow's rate in bytes per
// second (F5's page: 125000 is 1 Mbps), 0 for none. Setting returns the
// rate set [M: F5's example logs the command's result as it sets it].
func cmdUDPMaxRate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "UDP::max_rate"
	rc, err := udpRate(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	switch len(args) {
	case 1:
		return tcl.Int(int64(rc.UDPMaxRate())), nil
	case 2:
		n, err := ruleCount(name, args[1], "a rate in bytes per second", maxRuleRate)
		if err != nil {
			return tcl.Empty, err
		}
		if err := rc.SetUDPMaxRate(uint64(n)); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Int(n), nil
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?max-rate?")
}

// cmdUDPMaxBufPkts is UDP::max_buf_pkts ?N?: the most datagrams the
// flow's paced queues hold, each direction, before they drop; 0 for no
// packet bound [M: the udp profile has no such setting, so a flow starts
// at 0].
func cmdUDPMaxBufPkts(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "UDP::max_buf_pkts"
	rc, err := udpRate(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	switch len(args) {
	case 1:
		return tcl.Int(int64(rc.UDPMaxBufPkts())), nil
	case 2:
		n, err := ruleCount(name, args[1], "a number of packets", 1<<20)
		if err != nil {
			return tcl.Empty, err
		}
		if err := rc.SetUDPMaxBufPkts(int(n)); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Int(n), nil
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?max-buf-pkts?")
}

// cmdUDPDebugQueue is UDP::debug_queue: the flow's paced queues as a
// list of names and values [M: F5 shows its queue's internals; openltm
// gives its own, the rate and packet bound and, for each direction
// (to_server, to_client), the datagrams queued now, their bytes, and
// those passed and dropped].
func cmdUDPDebugQueue(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "UDP::debug_queue"
	rc, err := udpRate(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(name)
	}
	up, down := rc.UDPQueue()
	dir := func(s UDPQueueStats) string {
		return fmt.Sprintf("queued_pkts %d queued_bytes %d passed_pkts %d dropped_pkts %d", s.Pkts, s.Bytes, s.Passed, s.Dropped)
	}
	return tcl.Str(fmt.Sprintf("max_rate %d max_buf_pkts %d to_server {%s} to_client {%s}",
		rc.UDPMaxRate(), rc.UDPMaxBufPkts(), dir(up), dir(down))), nil
}

// ingressHook marks a rule that limits its clients' packets: a
// message-based (http) virtual's clients then get a connection the limit
// can hold back (Program.AttachesBWC), as BWC::policy's do.
func ingressHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.attachesBWC = true
	}
	return nil
}

// ingressConn is the rule's flow as an IngressLimitConn.
func ingressConn(in *tcl.Interp, name string) (IngressLimitConn, error) {
	_, c, err := sess(in, name)
	if err != nil {
		return nil, err
	}
	ic, ok := c.(IngressLimitConn)
	if !ok {
		return nil, tcl.Errorf("%s: this connection's client packets cannot be limited", name)
	}
	return ic, nil
}

// cmdIngressRateLimit is IP::ingress_rate_limit ?PPS?: the flow's limit
// on its client's packets a second, 0 for none [M: F5 documents no
// syntax; a UDP flow drops the datagrams past it, a TCP flow (and an
// http virtual's client connection) reads the client no faster, a
// segment's worth of bytes (1448) counted as one
// packet, so the client's window holds the rest back rather than any
// byte being lost].
func cmdIngressRateLimit(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "IP::ingress_rate_limit"
	ic, err := ingressConn(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	switch len(args) {
	case 1:
		return tcl.Int(int64(ic.IngressRateLimit())), nil
	case 2:
		n, err := ruleCount(name, args[1], "a rate in packets per second", maxRuleRate)
		if err != nil {
			return tcl.Empty, err
		}
		if err := ic.SetIngressRateLimit(uint64(n)); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Int(n), nil
	}
	return tcl.Empty, tcl.WrongArgs(name + " ?packets-per-second?")
}

// cmdIngressDropRate is IP::ingress_drop_rate: the percentage (0 to 100)
// of the client's packets the flow's ingress limit dropped since it was
// set, 0 without one [M: F5 documents no syntax or value; a TCP flow
// never drops, so it is always 0 there].
func cmdIngressDropRate(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const name = "IP::ingress_drop_rate"
	ic, err := ingressConn(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(name)
	}
	seen, dropped := ic.IngressDropRate()
	if seen == 0 {
		return tcl.Int(0), nil
	}
	return tcl.Int(int64(dropped * 100 / seen)), nil
}
