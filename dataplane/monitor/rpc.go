package monitor

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// RPCCheck is the rpc monitor's program: its number and version, asked
// for over tcp or udp (mode). A host whose portmapper answers may have
// lost the program, or run it hung; only a call the program accepts
// proves it serves.
type RPCCheck struct {
	Program uint32
	// Version is the version called; with AnyVersion (version-number
	// none) any version the program serves will do [M].
	Version    uint32
	AnyVersion bool
	UDP        bool // mode udp; false is tcp (BIG-IP's default)
	// PortmapPort is where the portmapper is asked: a destination's
	// port; 0 is the portmapper's own, 111.
	PortmapPort uint16
}

// PortmapPort is the portmapper's port (RFC 1833), where the rpc monitor
// asks for its program unless its destination names another.
const PortmapPort = 111

func (c *RPCCheck) equal(o *RPCCheck) bool {
	if c == nil || o == nil {
		return c == o
	}
	return *c == *o
}

func (c *RPCCheck) check() error {
	if c == nil || c.Program == 0 {
		return errors.New("an rpc monitor needs program-number (the RPC program to call)")
	}
	return nil
}

// rpcResend is how often a udp call is sent again while no reply comes,
// as RPC clients over UDP retransmit [M].
const rpcResend = time.Second

// probeRPC asks the member's portmapper (PMAPPROC_GETPORT) for the port
// of the program and version over the monitor's transport, then calls
// the program's NULL procedure there: up when the call is accepted and
// succeeds. With version-number none the portmapper is asked for any
// version and the call is made with version 0, which a program answers
// with the versions it serves (PROG_MISMATCH): that answer, too, is up,
// as rpcinfo takes it [M]. The same transport (mode) carries both
// exchanges.
func probeRPC(ctx context.Context, spec *Spec, target netip.AddrPort) (Outcome, error) {
	c := spec.RPC
	if err := c.check(); err != nil {
		return Outcome{}, err
	}
	pm, proto, name := c.PortmapPort, uint32(ipprotoTCP), "tcp"
	if pm == 0 {
		pm = PortmapPort
	}
	if c.UDP {
		proto, name = ipprotoUDP, "udp"
	}
	vers := c.Version
	if c.AnyVersion {
		vers = 0
	}
	res, err := rpcExchange(ctx, c.UDP, netip.AddrPortFrom(target.Addr(), pm),
		pmapProgram, pmapVersion, pmapGetPort, c.Program, vers, proto, 0)
	if err != nil {
		return Outcome{}, fmt.Errorf("Portmapper: %w", err)
	}
	if len(res) < 4 {
		return Outcome{}, errors.New("Portmapper: GETPORT reply without a port")
	}
	port := binary.BigEndian.Uint32(res)
	if port == 0 || port > 65535 {
		what := fmt.Sprintf("version %d", c.Version)
		if c.AnyVersion {
			what = "any version"
		}
		return Outcome{}, fmt.Errorf("Program %d %s is not registered for %s", c.Program, what, name)
	}
	_, err = rpcExchange(ctx, c.UDP, netip.AddrPortFrom(target.Addr(), uint16(port)), c.Program, vers, rpcNullProc)
	var re *rpcError
	if err == nil || c.AnyVersion && errors.As(err, &re) && !re.denied && re.stat == rpcProgMisver {
		return Outcome{Up: true}, nil
	}
	return Outcome{}, fmt.Errorf("Program %d on port %d: %w", c.Program, port, err)
}

// rpcExchange makes one call and returns the procedure's results.
func rpcExchange(ctx context.Context, udp bool, to netip.AddrPort, prog, vers, proc uint32, args ...uint32) ([]byte, error) {
	var x [4]byte
	rand.Read(x[:])
	xid := binary.BigEndian.Uint32(x[:])
	msg := rpcCall(xid, prog, vers, proc, args...)
	if udp {
		return rpcUDP(ctx, to, msg, xid)
	}
	conn, err := dial(ctx, to)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	defer bound(ctx, conn)()
	rec := binary.BigEndian.AppendUint32(nil, rpcLastFrag|uint32(len(msg)))
	if _, err := conn.Write(append(rec, msg...)); err != nil {
		return nil, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
	}
	reply, err := readRecord(&capped{r: conn, left: maxReply})
	if err != nil {
		return nil, streamFailure(ctx, err, "RPC reply")
	}
	return rpcReply(reply, xid)
}

// readRecord reads one record of RPC's TCP record marking: fragments up
// to the one marked last.
func readRecord(r io.Reader) ([]byte, error) {
	var out []byte
	for {
		var h [4]byte
		if _, err := io.ReadFull(r, h[:]); err != nil {
			return nil, err
		}
		n := binary.BigEndian.Uint32(h[:])
		frag := make([]byte, min(int(n&^rpcLastFrag), maxReply))
		if _, err := io.ReadFull(r, frag); err != nil {
			return nil, err
		}
		out = append(out, frag...)
		if n&rpcLastFrag != 0 {
			return out, nil
		}
	}
}

// rpcUDP sends the call every rpcResend until a reply to it comes or the
// deadline passes; an ICMP port unreachable is an answer (nothing there).
func rpcUDP(ctx context.Context, to netip.AddrPort, msg []byte, xid uint32) ([]byte, error) {
	conn, err := dialer(ctx).DialContext(ctx, "udp", to.String())
	if err != nil {
		return nil, fmt.Errorf("Unable to connect; %v", unwrapSyscall(err))
	}
	defer conn.Close()
	defer bound(ctx, conn)()
	buf := make([]byte, maxReply)
	for {
		if dl, ok := ctx.Deadline(); ctx.Err() != nil || ok && !time.Now().Before(dl) {
			return nil, ErrNoResponse
		}
		if _, err := conn.Write(msg); err != nil {
			return nil, fmt.Errorf("Unable to send; %v", unwrapSyscall(err))
		}
		resend := time.Now().Add(rpcResend)
		if dl, ok := ctx.Deadline(); !ok || resend.Before(dl) {
			conn.SetReadDeadline(resend)
		}
		for {
			n, err := conn.Read(buf)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ErrNoResponse
				}
				if netTimeout(err) {
					break // send again
				}
				return nil, fmt.Errorf("Unable to receive; %v", unwrapSyscall(err))
			}
			res, err := rpcReply(buf[:n], xid)
			if errors.Is(err, errRPCOther) {
				continue
			}
			return res, err
		}
	}
}
