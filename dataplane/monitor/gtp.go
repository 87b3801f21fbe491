package monitor

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// probeGTP sends one Echo Request to target and waits for its Echo
// Response until the deadline; answers to other requests (a late one of
// an earlier probe) are read past.
func probeGTP(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c, err := dialer(ctx).DialContext(ctx, "udp", target.String())
	if err != nil {
		return Outcome{}, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	defer c.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(5 * time.Second)
	}
	c.SetDeadline(dl)
	seq := rand.Uint32()
	req := gtpmsg.Echo(spec.GTPVersion, seq)
	tracef(ctx, "sent GTPv%d Echo Request %s", spec.GTPVersion, quoted(req))
	if _, err := c.Write(req); err != nil {
		return Outcome{}, udpError(err)
	}
	buf := make([]byte, 1500)
	var last error
	for i := 0; i < 16; i++ {
		n, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				if last != nil {
					return Outcome{}, last
				}
				return Outcome{}, ErrNoResponse
			}
			return Outcome{}, udpError(err)
		}
		tracef(ctx, "received %s", quoted(buf[:n]))
		if last = gtpmsg.EchoAnswers(buf[:n], spec.GTPVersion, seq); last == nil {
			return Outcome{Up: true}, nil
		}
	}
	return Outcome{}, last
}
