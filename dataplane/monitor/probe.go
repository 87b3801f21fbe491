// Package monitor runs BIG-IP health monitors against one target each: the
// probes (tcp, tcp-half-open, http, gateway-icmp) and the timing rules that
// turn probe results into a status (interval, timeout, time-until-up,
// up-interval, manual-resume; reference §8). It knows nothing of pools: the
// dataplane starts one Instance per monitored member or node and combines
// their statuses by the monitor rule.
//
// tcp-half-open here completes the TCP handshake through the kernel and
// resets the connection at once (SO_LINGER 0). BIG-IP sends a bare SYN and
// answers the SYN-ACK with a RST, so the server's application never sees a
// connection. With this probe the listening application may accept() a
// connection that is already reset; the port's availability is judged the
// same way (SYN-ACK ⇒ up, RST or silence ⇒ down).
package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"regexp"
	"time"
)

// Type is a monitor type keyword.
type Type string

// The probe types.
const (
	TCP         Type = "tcp"
	TCPHalfOpen Type = "tcp-half-open"
	HTTP        Type = "http"
	GatewayICMP Type = "gateway-icmp"
)

// Spec is one monitor's settings, compiled.
type Spec struct {
	Type         Type
	Interval     time.Duration
	Timeout      time.Duration
	TimeUntilUp  time.Duration
	UpInterval   time.Duration
	ManualResume bool
	Send         string
	Recv         *regexp.Regexp // nil: any answer (http) or none needed (tcp)
	RecvDisable  *regexp.Regexp
	Reverse      bool
}

// Equal reports whether two specs probe and time the same way, so a commit
// that does not change a monitor keeps its running instances.
func (s *Spec) Equal(o *Spec) bool {
	re := func(a, b *regexp.Regexp) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.String() == b.String()
	}
	return s.Type == o.Type && s.Interval == o.Interval && s.Timeout == o.Timeout &&
		s.TimeUntilUp == o.TimeUntilUp && s.UpInterval == o.UpInterval &&
		s.ManualResume == o.ManualResume && s.Send == o.Send && s.Reverse == o.Reverse &&
		re(s.Recv, o.Recv) && re(s.RecvDisable, o.RecvDisable)
}

// Outcome is one probe's verdict.
type Outcome struct {
	Up bool
	// Disabled is set when recv-disable matched: up, but no new flows.
	Disabled bool
}

// Errors a probe reports as the monitor's last error, worded like BIG-IP's.
var (
	ErrNoResponse = errors.New("No successful responses received before deadline")
	ErrNoMatch    = errors.New("Response did not match the receive string")
	// ErrReverseMatch is a reverse monitor's receive string matching.
	ErrReverseMatch = errors.New("Response matched the receive string of a reverse monitor")
)

const maxReply = 64 << 10

// Probe runs one check of spec against target within ctx's deadline.
func Probe(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	switch spec.Type {
	case GatewayICMP:
		return probeICMP(ctx, target.Addr())
	case TCPHalfOpen:
		c, err := dial(ctx, target)
		if err != nil {
			return Outcome{}, err
		}
		c.SetLinger(0)
		c.Close()
		return Outcome{Up: true}, nil
	case TCP, HTTP:
		return probeStream(ctx, spec, target)
	}
	return Outcome{}, fmt.Errorf("unsupported monitor type %q", spec.Type)
}

func dial(ctx context.Context, target netip.AddrPort) (*net.TCPConn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", target.String())
	if err != nil {
		if ctx.Err() != nil {
			return nil, ErrNoResponse
		}
		return nil, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	return c.(*net.TCPConn), nil
}

func unwrapSyscall(err error) error {
	var op *net.OpError
	if errors.As(err, &op) {
		return op.Err
	}
	return err
}

// probeStream connects, sends, and reads until the receive strings decide or
// the server closes or the deadline passes.
func probeStream(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if spec.Send != "" {
		if _, err := io.WriteString(c, spec.Send); err != nil {
			return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
		}
	}
	needReply := spec.Recv != nil || spec.RecvDisable != nil || spec.Type == HTTP
	if !needReply {
		return Outcome{Up: true}, nil
	}
	var buf bytes.Buffer
	chunk := make([]byte, 4096)
	for buf.Len() < maxReply {
		n, rerr := c.Read(chunk)
		buf.Write(chunk[:n])
		if o, done := judge(spec, buf.Bytes(), false); done {
			return verdict(o)
		}
		if rerr != nil {
			break
		}
	}
	if o, done := judge(spec, buf.Bytes(), true); done {
		return verdict(o)
	}
	if buf.Len() == 0 {
		return Outcome{}, ErrNoResponse
	}
	return Outcome{}, ErrNoMatch
}

func verdict(o Outcome) (Outcome, error) {
	if !o.Up {
		return o, ErrReverseMatch
	}
	return o, nil
}

// judge decides on the reply so far; final means no more bytes will come.
func judge(spec *Spec, reply []byte, final bool) (Outcome, bool) {
	if spec.Recv == nil && spec.RecvDisable == nil {
		return Outcome{Up: true}, len(reply) > 0
	}
	if spec.Reverse && spec.Recv != nil {
		if spec.Recv.Match(reply) {
			return Outcome{}, true
		}
		return Outcome{Up: true}, final && len(reply) > 0
	}
	if spec.Recv != nil && spec.Recv.Match(reply) {
		return Outcome{Up: true}, true
	}
	if spec.RecvDisable != nil && spec.RecvDisable.Match(reply) {
		return Outcome{Up: true, Disabled: true}, true
	}
	if spec.Recv == nil && final && len(reply) > 0 {
		return Outcome{Up: true}, true
	}
	return Outcome{}, false
}
