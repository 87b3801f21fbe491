package monitor

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/netip"
)

// EchoPort is the TCP echo service's port (RFC 862), where the tcp-echo
// monitor asks for its echo unless its destination names another.
const EchoPort = 7

// ErrNoEcho is a tcp-echo probe's answer that is not its message.
var ErrNoEcho = errors.New("Response did not echo the message sent")

// probeTCPEcho sends a fresh message to the node's TCP echo service and is
// up when the same bytes come back. BIG-IP's tcp_echo "verifies TCP
// connections", successful when it "receives a response to a TCP Echo
// message", and its manuals ask for TCP echo to be enabled on the
// monitored nodes; it is an address check (destination `*`), so the
// member's port plays no part. Choices [M]: the message goes over a full
// connection through the kernel to port 7, or spec.EchoPort (a
// destination's port): a process without raw sockets cannot send
// BIG-IP's own segments, as tcp-half-open finds too; the message is 16
// random bytes written as hex and a line end, new each probe, so a
// banner or a stale answer cannot pass for the echo.
func probeTCPEcho(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	port := uint16(EchoPort)
	if spec.EchoPort != 0 {
		port = spec.EchoPort
	}
	target = netip.AddrPortFrom(target.Addr(), port)
	var nonce [16]byte
	rand.Read(nonce[:])
	msg := []byte(hex.EncodeToString(nonce[:]) + "\r\n")
	c, err := dial(ctx, target)
	if err != nil {
		return Outcome{}, err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	}
	if _, err := c.Write(msg); err != nil {
		return Outcome{}, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	got := make([]byte, len(msg))
	n, err := io.ReadFull(c, got)
	switch {
	case n > 0 && !bytes.Equal(got[:n], msg[:n]):
		return Outcome{}, ErrNoEcho
	case err == nil:
		return Outcome{Up: true}, nil
	case netTimeout(err) || ctx.Err() != nil:
		return Outcome{}, ErrNoResponse
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return Outcome{}, fmt.Errorf("Connection closed after %d of the %d bytes sent came back", n, len(msg))
	}
	return Outcome{}, fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
}
