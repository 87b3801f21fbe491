package monitor

import (
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"syscall"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// MaxDSCP is the largest ip-dscp: six bits of the IP header's TOS byte.
const MaxDSCP = 63

// dscpKey carries a probe's DSCP to the dialers of every probe type, so
// the types that dial through a library (dns, radius, the databases)
// mark their sockets as the hand-written ones do.
type dscpKey struct{}

// withDSCP is ctx carrying the DSCP the probe's sockets are marked with.
func withDSCP(ctx context.Context, dscp uint8) context.Context {
	if dscp == 0 {
		return ctx
	}
	return context.WithValue(ctx, dscpKey{}, dscp)
}

// control is the dialer Control that marks a probe's socket with ctx's
// DSCP (IP_TOS, and the IPv6 traffic class), nil when there is none.
func control(ctx context.Context) func(network, address string, c syscall.RawConn) error {
	dscp, _ := ctx.Value(dscpKey{}).(uint8)
	if dscp == 0 {
		return nil
	}
	tos := sockopt.TOS{Set: true, Value: dscp << 2}
	return func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { tos.Apply(int(fd)) })
	}
}

// srcKey carries the local address a probe's TCP connections leave from.
type srcKey struct{}

// WithSource makes the TCP probes run with ctx connect from src, so a GSLB
// that asks another device to probe a site (a prober, BIG-IP DNS's
// big3d) sees the site as that device does, through its firewalls.
func WithSource(ctx context.Context, src netip.Addr) context.Context {
	return context.WithValue(ctx, srcKey{}, src)
}

// dialer is the dialer every probe connects with: a plain one, or one
// that marks the socket with the monitor's ip-dscp.
func dialer(ctx context.Context) *net.Dialer {
	return &net.Dialer{Control: control(ctx)}
}

// tcpDialer is dialer leaving from the source WithSource set (the TCP
// probes: tcp, tcp-half-open, http, https).
func tcpDialer(ctx context.Context) *net.Dialer {
	d := dialer(ctx)
	if src, ok := ctx.Value(srcKey{}).(netip.Addr); ok && src.IsValid() {
		d.LocalAddr = &net.TCPAddr{IP: src.AsSlice()}
	}
	return d
}

// listenConfig is dialer's counterpart for the sockets a probe listens
// on (icmp, ftp's active data connection).
func listenConfig(ctx context.Context) *net.ListenConfig {
	return &net.ListenConfig{Control: control(ctx)}
}

// basicAuthSend is an http monitor's send string with the Authorization
// header BIG-IP adds for its username and password: before the blank line
// that ends the request's header, or, when the send string has none (GET
// /\r\n), after its request line with the header ended. A send string
// that has an Authorization header of its own keeps it [M].
func basicAuthSend(send, user, pass string) string {
	if user == "" || send == "" {
		return send
	}
	head := send
	if i := strings.Index(head, "\r\n\r\n"); i >= 0 {
		head = head[:i]
	}
	for line := range strings.SplitSeq(head, "\n") {
		if k, _, ok := strings.Cut(line, ":"); ok && strings.EqualFold(strings.TrimSpace(k), "authorization") {
			return send
		}
	}
	field := "Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass)) + "\r\n"
	if i := strings.Index(send, "\r\n\r\n"); i >= 0 {
		return send[:i+2] + field + send[i+2:]
	}
	line, rest, ok := strings.Cut(send, "\n")
	if !ok {
		return send + "\r\n" + field + "\r\n"
	}
	return line + "\n" + field + rest + "\r\n"
}

// Adaptive is adaptive response-time monitoring: a probe that answers
// but takes longer than Limit, or diverges from the mean response time of
// the last Timespan by more than Divergence, fails, so a member that
// slows down is taken out before it stops answering.
type Adaptive struct {
	// Relative takes Divergence as a percentage of the mean; otherwise
	// it is milliseconds above the mean (adaptive-divergence-type).
	Relative bool
	// Divergence is adaptive-divergence-value.
	Divergence int
	// Limit is adaptive-limit; 0 sets none.
	Limit time.Duration
	// Timespan is adaptive-sampling-timespan: how far back the mean
	// reaches.
	Timespan time.Duration
}

func (a *Adaptive) equal(o *Adaptive) bool {
	if a == nil || o == nil {
		return a == o
	}
	return *a == *o
}

func (a *Adaptive) check() error {
	if a == nil {
		return nil
	}
	if a.Divergence < 0 || a.Limit < 0 || a.Timespan < 0 {
		return fmt.Errorf("adaptive settings must not be negative")
	}
	return nil
}

// maxSamples bounds the response times an instance keeps for the mean
// (a short interval and a long timespan).
const maxSamples = 4096

// sample is one answered probe's response time.
type sample struct {
	at time.Time
	rt time.Duration
}

// history is one instance's response times within the sampling timespan.
type history struct {
	s   []sample
	sum time.Duration
}

// judge says why a probe answered in rt at now fails adaptive
// monitoring, nil when it passes, and records it when it passes. The mean
// is of the passed probes before it within the timespan, so a member that
// slows down stays failed until its quick answers leave the timespan [M];
// with none left, only the limit applies, and its new pace becomes the
// mean. Response times are judged in whole milliseconds, as BIG-IP's
// settings are: a divergence under 1 ms never fails a probe [M].
func (h *history) judge(a *Adaptive, now time.Time, rt time.Duration) error {
	cut := now.Add(-a.Timespan)
	drop := 0
	for drop < len(h.s) && (h.s[drop].at.Before(cut) || len(h.s)-drop >= maxSamples) {
		h.sum -= h.s[drop].rt
		drop++
	}
	if drop > 0 {
		h.s = append(h.s[:0], h.s[drop:]...)
	}
	var err error
	if a.Limit > 0 && rt > a.Limit {
		err = fmt.Errorf("Response time %d ms exceeds the adaptive limit of %d ms", rt.Milliseconds(), a.Limit.Milliseconds())
	} else if n := len(h.s); n > 0 {
		mean := h.sum / time.Duration(n)
		allowed := time.Duration(a.Divergence) * time.Millisecond
		unit := "ms"
		if a.Relative {
			allowed, unit = mean*time.Duration(a.Divergence)/100, "%"
		}
		if over := rt - mean; over > allowed && over >= time.Millisecond {
			err = fmt.Errorf("Response time %d ms diverges from the mean of %d ms by more than %d %s",
				rt.Milliseconds(), mean.Milliseconds(), a.Divergence, unit)
		}
	}
	if err == nil {
		h.s = append(h.s, sample{at: now, rt: rt})
		h.sum += rt
	}
	return err
}
