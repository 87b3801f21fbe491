package monitor

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"
)

// UDPSettle is how long a udp monitor without a receive string waits for
// an ICMP port unreachable before it counts the silence as up.
var UDPSettle = time.Second

// ErrPortUnreachable is a udp probe answered by ICMP port unreachable.
var ErrPortUnreachable = errors.New("ICMP port unreachable")

func probeUDP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c, err := dialer(ctx).DialContext(ctx, "udp", target.String())
	if err != nil {
		return Outcome{}, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	defer c.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(5 * time.Second)
	}
	expect := spec.Recv != nil || spec.RecvDisable != nil
	if !expect {
		// Leave room before the probe's deadline, so silence is judged
		// here and not by the deadline.
		dl = time.Now().Add(min(UDPSettle, time.Until(dl)/2))
	}
	c.SetDeadline(dl)
	tracef(ctx, "sent %s", quoted([]byte(spec.Send)))
	if _, err := c.Write([]byte(spec.Send)); err != nil {
		return Outcome{}, udpError(err)
	}
	buf := make([]byte, maxReply)
	for i := 0; i < 64; i++ {
		n, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if !expect {
					tracef(ctx, "no answer, no ICMP unreachable")
					return Outcome{Up: true}, nil // silence without an unreachable
				}
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, udpError(err)
		}
		tracef(ctx, "received %s", quoted(buf[:n]))
		if o, done := judge(spec, buf[:n], true); done {
			return verdict(o)
		}
	}
	return Outcome{}, ErrNoMatch
}

func udpError(err error) error {
	if errors.Is(err, syscall.ECONNREFUSED) {
		return ErrPortUnreachable
	}
	return fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
}
