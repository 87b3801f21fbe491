package iquery

import (
	"context"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// CheckOf is the request a GSLB sends for one probe of spec at dest. A
// monitor that is a program or a protocol session (external, scripted,
// databases, ...) is not sent: its settings may hold secrets or
// commands, and the device asked runs only what it can judge alone.
func CheckOf(spec *monitor.Spec, dest netip.AddrPort) (*MonitorCheck, error) {
	switch spec.Type {
	case monitor.TCP, monitor.TCPHalfOpen, monitor.HTTP, monitor.HTTPS, monitor.UDP, monitor.GatewayICMP:
	default:
		return nil, fmt.Errorf("a %s monitor is not run by another device", spec.Type)
	}
	c := &MonitorCheck{Name: spec.Name, Type: string(spec.Type), Dest: dest, Send: spec.Send, Reverse: spec.Reverse}
	if spec.Recv != nil {
		c.Recv = spec.Recv.String()
	}
	if spec.RecvDisable != nil {
		c.RecvDisable = spec.RecvDisable.String()
	}
	return c, nil
}

// Spec compiles a received check back into a probe (CheckOf's types
// only).
func (c *MonitorCheck) Spec() (*monitor.Spec, error) {
	s := &monitor.Spec{Name: c.Name, Type: monitor.Type(c.Type), Send: c.Send, Reverse: c.Reverse}
	if _, err := CheckOf(s, c.Dest); err != nil {
		return nil, err
	}
	var err error
	if c.Recv != "" {
		if s.Recv, err = regexp.Compile(c.Recv); err != nil {
			return nil, err
		}
	}
	if c.RecvDisable != "" {
		if s.RecvDisable, err = regexp.Compile(c.RecvDisable); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Run runs a received check from src (an address of this device;
// invalid: the system's choice) within timeout.
func (c *MonitorCheck) Run(src netip.Addr, timeout time.Duration) ProbeResult {
	spec, err := c.Spec()
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if src.IsValid() {
		ctx = monitor.WithSource(ctx, src)
	}
	out, err := monitor.Probe(ctx, spec, c.Dest)
	if err != nil {
		return ProbeResult{Error: err.Error()}
	}
	return ProbeResult{Up: out.Up}
}

// Monitor asks the publisher followed as key to run one monitor probe
// (see ProbeRequest.Monitor) and returns its verdict.
func (s *Subscriber) Monitor(ctx context.Context, key string, src netip.Addr, check *MonitorCheck) (monitor.Outcome, error) {
	timeout := 5 * time.Second
	if d, ok := ctx.Deadline(); ok {
		timeout = time.Until(d)
	}
	res, err := s.Probe(ctx, key, ProbeRequest{Src: src, TimeoutMS: timeout.Milliseconds(), Monitor: check})
	switch {
	case err == nil:
		return monitor.Outcome{Up: res.Up}, nil
	case res.Error == "":
		// The request did not reach the device or its answer did not
		// come back: no answer, not a down one.
		return monitor.Outcome{}, fmt.Errorf("%w (iQuery: %v)", monitor.ErrNoResponse, err)
	case res.Error == monitor.ErrNoResponse.Error() || strings.Contains(res.Error, context.DeadlineExceeded.Error()):
		return monitor.Outcome{}, monitor.ErrNoResponse
	}
	return monitor.Outcome{}, err
}
