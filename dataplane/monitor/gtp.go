package monitor

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/netip"
	"time"
)

// GTP message types (3GPP TS 29.060 and 29.274 number them alike).
const (
	gtpEchoRequest  = 1
	gtpEchoResponse = 2
)

// gtpEcho builds a GTP Echo Request of version 1 (GTPv1-C: the sequence
// number flag set, TEID 0) or 2 (GTPv2-C: no TEID, a Recovery IE with
// restart counter 0, which TS 29.274 requires in the request).
func gtpEcho(version int, seq uint32) []byte {
	if version == 1 {
		b := []byte{0x32, gtpEchoRequest, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0}
		binary.BigEndian.PutUint16(b[8:], uint16(seq))
		return b
	}
	b := []byte{0x40, gtpEchoRequest, 0, 9, 0, 0, 0, 0, 3, 0, 1, 0, 0}
	b[4], b[5], b[6] = byte(seq>>16), byte(seq>>8), byte(seq)
	return b
}

// gtpEchoAnswers reports whether b is the Echo Response to the request of
// version and seq; the error says what else it is.
func gtpEchoAnswers(b []byte, version int, seq uint32) error {
	if len(b) < 8 {
		return fmt.Errorf("GTP answer of %d bytes is too short", len(b))
	}
	if v := int(b[0] >> 5); v != version {
		return fmt.Errorf("GTP answer of version %d to a GTPv%d Echo Request", v, version)
	}
	if b[1] != gtpEchoResponse {
		return fmt.Errorf("GTP answer of message type %d, not an Echo Response", b[1])
	}
	var got uint32
	if version == 1 {
		if len(b) < 12 || b[0]&0x02 == 0 {
			return errors.New("GTPv1 Echo Response without a sequence number")
		}
		got, seq = uint32(binary.BigEndian.Uint16(b[8:])), seq&0xffff
	} else {
		got, seq = uint32(b[4])<<16|uint32(b[5])<<8|uint32(b[6]), seq&0xffffff
	}
	if got != seq {
		return fmt.Errorf("GTP Echo Response to sequence number %d, not %d", got, seq)
	}
	return nil
}

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
	req := gtpEcho(spec.GTPVersion, seq)
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
		if last = gtpEchoAnswers(buf[:n], spec.GTPVersion, seq); last == nil {
			return Outcome{Up: true}, nil
		}
	}
	return Outcome{}, last
}
