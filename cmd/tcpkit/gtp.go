package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// gtpServerMain is `tcpkit gtp-server`: a GTP peer answering Echo
// Requests and Create Session (GTPv2) or Create PDP Context (GTPv1)
// Requests, naming itself in a Private Extension IE.
func gtpServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gtp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (UDP)")
	label := fs.String("label", "G1", "the name the answers carry")
	if err := fs.Parse(args); err != nil {
		return err
	}
	a, err := netip.ParseAddrPort(*listen)
	if err != nil {
		return fmt.Errorf("gtp-server: -listen: %v", err)
	}
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(a))
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); c.Close() }()
	err = gtpmsg.Serve(c, *label)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// gtpClientMain is `tcpkit gtp-client`: n requests (Echo or Create
// Session/PDP Context) to the virtual, each from a port of its own,
// printing each answer's type and the peer that answered.
func gtpClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gtp-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "address:port of the virtual")
	bind := fs.String("bind", "", "local address")
	version := fs.Int("v", 2, "GTP version, 1 or 2")
	kind := fs.String("type", "echo", "echo, create or malformed (a length past the datagram)")
	imsi := fs.String("imsi", "001010123456789", "the IMSI of a create request")
	apn := fs.String("apn", "internet", "the APN of a create request")
	n := fs.Int("n", 1, "requests")
	if err := fs.Parse(args); err != nil {
		return err
	}
	to, err := netip.ParseAddrPort(*connect)
	if err != nil {
		return fmt.Errorf("gtp-client: -connect: %v", err)
	}
	if *version != 1 && *version != 2 {
		return errors.New("gtp-client: -v is 1 or 2")
	}
	var laddr *net.UDPAddr
	if *bind != "" {
		b, err := netip.ParseAddr(*bind)
		if err != nil {
			return fmt.Errorf("gtp-client: -bind: %v", err)
		}
		laddr = net.UDPAddrFromAddrPort(netip.AddrPortFrom(b, 0))
	}
	for i := 0; i < *n && ctx.Err() == nil; i++ {
		req, err := gtpRequest(*version, *kind, *imsi, *apn, uint32(i+1))
		if err != nil {
			return err
		}
		c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(to))
		if err != nil {
			return err
		}
		ans, err := gtpExchange(c, req)
		c.Close()
		if err != nil {
			fmt.Fprintf(stdout, "request %d: %v\n", i+1, err)
			continue
		}
		fmt.Fprintf(stdout, "request %d: answer type %d seq %d from %s\n", i+1, ans.Type, ans.Seq, gtpmsg.Label(ans))
	}
	return nil
}

// gtpRequest builds a request of the client's.
func gtpRequest(v int, kind, imsi, apn string, seq uint32) ([]byte, error) {
	switch kind {
	case "echo":
		return gtpmsg.Echo(v, seq), nil
	case "malformed": // an Echo Request whose length runs past the datagram
		b := gtpmsg.Echo(v, seq)
		b[3] += 40
		return b, nil
	case "create":
	default:
		return nil, fmt.Errorf("gtp-client: -type %q is not echo, create or malformed", kind)
	}
	id, ok := gtpmsg.EncodeTBCD(imsi)
	if !ok {
		return nil, fmt.Errorf("gtp-client: -imsi %q is not digits", imsi)
	}
	m := gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: gtpmsg.CreateSessionRequest, HasTEID: true, Seq: seq},
		IEs: []gtpmsg.IE{{Type: gtpmsg.IEv2IMSI, Value: id}, {Type: gtpmsg.IEv2APN, Value: gtpmsg.EncodeAPN(apn)}}}
	if v == 1 {
		m = gtpmsg.Message{Header: gtpmsg.Header{Version: 1, Type: gtpmsg.CreatePDPRequest, HasSeq: true, Seq: seq},
			IEs: []gtpmsg.IE{{Type: gtpmsg.IEv1IMSI, Value: id}, {Type: gtpmsg.IEv1APN, Value: gtpmsg.EncodeAPN(apn)}}}
	}
	return m.Append(nil), nil
}

// gtpExchange sends req, again after a second without an answer, three
// times at most.
func gtpExchange(c *net.UDPConn, req []byte) (*gtpmsg.Message, error) {
	buf := make([]byte, 65535)
	for try := 0; try < 3; try++ {
		if _, err := c.Write(req); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(time.Second))
		n, err := c.Read(buf)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return nil, err
		}
		return gtpmsg.Parse(append([]byte(nil), buf[:n]...))
	}
	return nil, errors.New("no answer")
}
