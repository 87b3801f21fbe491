package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
)

// gtpServerMain is `tcpkit gtp-server`: a GTP peer (gtpmsg.Serve)
// answering Echo Requests, a session's requests with TEIDs of its own,
// and G-PDUs, naming itself in each answer.
func gtpServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gtp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (UDP)")
	label := fs.String("label", "G1", "the name the answers carry")
	peers := fs.Bool("peers", false, "print the address and port each message came from")
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
	if *peers {
		err = servePeers(c, *label, stdout)
	} else {
		err = gtpmsg.Serve(c, *label)
	}
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// servePeers is gtpmsg.Serve printing where each message came from
// ("LABEL message from ADDR:PORT").
func servePeers(c *net.UDPConn, label string, stdout io.Writer) error {
	buf := make([]byte, 65535)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s message from %s\n", label, from)
		if a := gtpmsg.Respond(buf[:n], label); a != nil {
			c.WriteToUDPAddrPort(a, from)
		}
	}
}

// gtpClientMain is `tcpkit gtp-client`: n requests (Echo or Create
// Session/PDP Context) to the virtual, each from a port of its own
// (-same: one request sent n times from one port, as a peer
// retransmits), printing each answer's type and the peer that
// answered; or, with -type session, one subscriber's GTPv2 session
// (gtpSession).
func gtpClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gtp-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "address:port of the virtual")
	bind := fs.String("bind", "", "local address")
	version := fs.Int("v", 2, "GTP version, 1 or 2")
	kind := fs.String("type", "echo", "echo, create, malformed (a length past the datagram) or session")
	imsi := fs.String("imsi", "001010123456789", "the IMSI of a create request")
	apn := fs.String("apn", "internet", "the APN of a create request")
	n := fs.Int("n", 1, "requests (a session's Modify Bearer Requests and G-PDUs)")
	same := fs.Bool("same", false, "send one request n times from one port (a retransmission)")
	gtpu := fs.String("gtpu", "", "a session's G-PDUs go to this address:port (GTP-U), from a port of their own")
	del := fs.Bool("delete", false, "end the session with a Delete Session Request")
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
	if *kind == "session" {
		var u netip.AddrPort
		if *gtpu != "" {
			if u, err = netip.ParseAddrPort(*gtpu); err != nil {
				return fmt.Errorf("gtp-client: -gtpu: %v", err)
			}
		}
		return gtpSession(ctx, stdout, laddr, to, u, *imsi, *apn, *n, *del)
	}
	var from []string
	var c *net.UDPConn
	for i := 0; i < *n && ctx.Err() == nil; i++ {
		seq := uint32(i + 1)
		if *same {
			seq = 1
		}
		req, err := gtpRequest(*version, *kind, *imsi, *apn, seq)
		if err != nil {
			return err
		}
		if c == nil {
			if c, err = net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(to)); err != nil {
				return err
			}
		}
		ans, err := gtpExchange(c, req)
		if !*same {
			c.Close()
			c = nil
		}
		if err != nil {
			fmt.Fprintf(stdout, "request %d: %v\n", i+1, err)
			continue
		}
		fmt.Fprintf(stdout, "request %d: answer type %d seq %d from %s\n", i+1, ans.Type, ans.Seq, gtpmsg.Label(ans))
		from = appendNew(from, gtpmsg.Label(ans))
	}
	if c != nil {
		c.Close()
	}
	if *same {
		fmt.Fprintf(stdout, "answers from: %s\n", strings.Join(from, " "))
	}
	return nil
}

// gtpSession is a subscriber's GTPv2 session from one port: a Create
// Session Request, n Modify Bearer Requests to the control plane TEID
// the answer gave, n G-PDUs to its user plane TEID (to gtpu, when
// valid), and a Delete Session Request with del. It prints each answer
// and, last, the peers that answered ("answers from: G1" when the
// session stayed on one).
func gtpSession(ctx context.Context, stdout io.Writer, laddr *net.UDPAddr, to, gtpu netip.AddrPort, imsi, apn string, n int, del bool) error {
	c, err := net.DialUDP("udp", laddr, net.UDPAddrFromAddrPort(to))
	if err != nil {
		return err
	}
	defer c.Close()
	var from []string
	seq := uint32(1)
	req, err := gtpRequest(2, "create", imsi, apn, seq)
	if err != nil {
		return err
	}
	ans, err := gtpExchange(c, req)
	if err != nil {
		return fmt.Errorf("gtp-client: create session: %v", err)
	}
	teids := ans.TEIDs(nil)
	if ans.Type != gtpmsg.CreateSessionResponse || !ans.Accepted() || len(teids) < 2 {
		return fmt.Errorf("gtp-client: create session: answer type %d accepted %v with %d TEIDs", ans.Type, ans.Accepted(), len(teids))
	}
	cp, up := teids[0], teids[1]
	fmt.Fprintf(stdout, "create: answer type %d from %s\n", ans.Type, gtpmsg.Label(ans))
	from = appendNew(from, gtpmsg.Label(ans))
	var u *net.UDPConn
	if gtpu.IsValid() {
		var ua *net.UDPAddr
		if laddr != nil {
			ua = &net.UDPAddr{IP: laddr.IP}
		}
		if u, err = net.DialUDP("udp", ua, net.UDPAddrFromAddrPort(gtpu)); err != nil {
			return err
		}
		defer u.Close()
	}
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		seq++
		m := gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: gtpmsg.ModifyBearerRequest, HasTEID: true, TEID: cp, Seq: seq}}
		if ans, err = gtpExchange(c, m.Append(nil)); err != nil {
			fmt.Fprintf(stdout, "modify %d: %v\n", i, err)
			continue
		}
		fmt.Fprintf(stdout, "modify %d: answer type %d from %s\n", i, ans.Type, gtpmsg.Label(ans))
		from = appendNew(from, gtpmsg.Label(ans))
		if u == nil {
			continue
		}
		g := gtpmsg.Message{Header: gtpmsg.Header{Version: 1, Type: gtpmsg.GPDU, TEID: up}, Payload: []byte("ping")}
		if ans, err = gtpExchange(u, g.Append(nil)); err != nil {
			fmt.Fprintf(stdout, "g-pdu %d: %v\n", i, err)
			continue
		}
		fmt.Fprintf(stdout, "g-pdu %d: answer from %s\n", i, ans.Payload)
		from = appendNew(from, string(ans.Payload))
	}
	if del {
		seq++
		m := gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: gtpmsg.DeleteSessionRequest, HasTEID: true, TEID: cp, Seq: seq}}
		if ans, err = gtpExchange(c, m.Append(nil)); err != nil {
			fmt.Fprintf(stdout, "delete: %v\n", err)
		} else {
			fmt.Fprintf(stdout, "delete: answer type %d accepted %v from %s\n", ans.Type, ans.Accepted(), gtpmsg.Label(ans))
			from = appendNew(from, gtpmsg.Label(ans))
		}
	}
	fmt.Fprintf(stdout, "answers from: %s\n", strings.Join(from, " "))
	return nil
}

// appendNew appends s to list unless it is there.
func appendNew(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
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
