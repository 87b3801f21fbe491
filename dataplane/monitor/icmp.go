package monitor

import (
	"context"
	"errors"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/internal/icmpecho"
)

// ErrICMPPrivilege is returned when the process may not open a raw ICMP
// socket (gateway-icmp needs root or CAP_NET_RAW).
var ErrICMPPrivilege = errors.New("gateway-icmp needs a raw ICMP socket (root or CAP_NET_RAW)")

// probeICMP sends one echo request and waits for its echo reply.
func probeICMP(ctx context.Context, addr netip.Addr) (Outcome, error) {
	pc, err := listenConfig(ctx).ListenPacket(ctx, icmpecho.Network(addr), "")
	if err != nil {
		return Outcome{}, ErrICMPPrivilege
	}
	defer pc.Close()
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(5 * time.Second)
	}
	pc.SetDeadline(dl)
	switch err := icmpecho.Exchange(pc, addr, "openltm!"); {
	case err == nil:
		return Outcome{Up: true}, nil
	case errors.Is(err, icmpecho.ErrNoReply):
		return Outcome{}, ErrNoResponse
	default:
		return Outcome{}, err
	}
}
