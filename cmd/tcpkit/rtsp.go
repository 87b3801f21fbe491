package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// rtspServerMain is `tcpkit rtsp-server`: an RTSP member (RFC 2326)
// answering OPTIONS, DESCRIBE, SETUP, PLAY and TEARDOWN, which sends RTP
// packets naming itself to the client's client_port from its server_port
// (or interleaved on the control connection) from PLAY to TEARDOWN.
func rtspServerMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rtsp-server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("listen", "", "address:port to listen on (TCP)")
	label := fs.String("label", "rtsp1", "the server's name, in its answers and RTP payloads")
	peers := fs.Bool("peers", false, "print each request's method and the address it came from (and a SETUP's Transport)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *listen == "" {
		return errors.New("rtsp-server: -listen is required")
	}
	var log func(string)
	if *peers {
		var mu sync.Mutex
		log = func(l string) {
			mu.Lock()
			fmt.Fprintf(stdout, "%s %s\n", *label, l)
			mu.Unlock()
		}
	}
	s, err := rtsp.ListenLog(*listen, *label, log)
	if err != nil {
		return fmt.Errorf("rtsp-server: %v", err)
	}
	fmt.Fprintf(stdout, "rtsp-server %s listening on %s\n", *label, s.Addr())
	<-ctx.Done()
	s.Close()
	return nil
}

// rtspClientMain is `tcpkit rtsp-client`: a player's control exchange
// (OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, each on a connection of its
// own unless -interleaved) that receives RTP on its client_port and
// prints each answer's status and Transport, and where the media came
// from.
func rtspClientMain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("rtsp-client", flag.ContinueOnError)
	fs.SetOutput(stderr)
	connect := fs.String("connect", "", "the virtual's address:port")
	bind := fs.String("bind", "", "the client's address (its control connections and RTP port)")
	path := fs.String("path", "/media", "the stream's path")
	packets := fs.Int("packets", 3, "the RTP packets to wait for after PLAY")
	inter := fs.Bool("interleaved", false, "ask for RTP interleaved on one control connection (RTP/AVP/TCP)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *connect == "" || *bind == "" {
		return errors.New("rtsp-client: -connect and -bind are required")
	}
	from, err := netip.ParseAddr(*bind)
	if err != nil {
		return fmt.Errorf("rtsp-client: -bind: %v", err)
	}
	url := "rtsp://" + *connect + *path
	cl := &rtspCli{vs: *connect, from: from, out: stdout}
	defer cl.close()
	for _, step := range []struct{ method, uri string }{{"OPTIONS", "*"}, {"DESCRIBE", url}} {
		if _, err := cl.do(step.method, step.uri); err != nil {
			return err
		}
	}
	var udp []*net.UDPConn
	transport := "RTP/AVP/TCP;unicast;interleaved=0-1"
	if !*inter {
		if udp, err = rtsp.ListenPair(from, rtsp.AnyPorts(2)); err != nil {
			return err
		}
		defer func() {
			for _, c := range udp {
				c.Close()
			}
		}()
		transport = "RTP/AVP;unicast;client_port=" + rtsp.LocalPorts(udp).String()
	}
	cl.keep = *inter
	r, err := cl.do("SETUP", url+"/track1", "Transport", transport)
	if err != nil {
		return err
	}
	sess := r.Session()
	if _, err := cl.do("PLAY", url, "Session", sess); err != nil {
		return err
	}
	deadline := time.Now().Add(10 * time.Second)
	buf := make([]byte, 2048)
	for i := 0; i < *packets && ctx.Err() == nil; i++ {
		var p []byte
		var src string
		if *inter {
			cl.c.SetReadDeadline(deadline)
			var m rtsp.Message
			frame, err := cl.rd.Next(&m)
			if err != nil || frame == nil {
				return fmt.Errorf("rtsp-client: no interleaved RTP: %v", err)
			}
			p, src = rtsp.RTPPayload(frame[4:]), fmt.Sprintf("interleaved channel %d", frame[1])
		} else {
			udp[0].SetReadDeadline(deadline)
			n, ap, err := udp[0].ReadFromUDPAddrPort(buf)
			if err != nil {
				return fmt.Errorf("rtsp-client: no RTP: %v", err)
			}
			p, src = rtsp.RTPPayload(buf[:n]), netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()).String()
		}
		fmt.Fprintf(stdout, "rtp %d from %s: %s\n", i+1, src, p)
	}
	_, err = cl.do("TEARDOWN", url, "Session", sess)
	return err
}

// rtspCli is rtsp-client's control connections.
type rtspCli struct {
	vs   string
	from netip.Addr
	out  io.Writer
	keep bool // one connection for every request
	cseq int
	c    net.Conn
	rd   *rtsp.Reader
}

func (cl *rtspCli) close() {
	if cl.c != nil {
		cl.c.Close()
		cl.c = nil
	}
}

// do sends a request with headers (name, value, ...) and prints its
// answer's status line and Transport.
func (cl *rtspCli) do(method, uri string, headers ...string) (*rtsp.Message, error) {
	if cl.c == nil {
		d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(cl.from, 0))}
		c, err := d.Dial("tcp", cl.vs)
		if err != nil {
			return nil, fmt.Errorf("rtsp-client: %v", err)
		}
		cl.c, cl.rd = c, rtsp.NewReader(c, 1<<16, 1<<20)
	}
	if !cl.keep {
		defer cl.close()
	}
	cl.cseq++
	m := &rtsp.Message{Request: true, Method: method, URI: uri, Version: "RTSP/1.0"}
	m.Add("CSeq", strconv.Itoa(cl.cseq))
	m.Add("User-Agent", "tcpkit rtsp-client")
	for i := 0; i+1 < len(headers); i += 2 {
		m.Add(headers[i], headers[i+1])
	}
	cl.c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := cl.c.Write(m.Encode(nil)); err != nil {
		return nil, fmt.Errorf("rtsp-client: %s: %v", method, err)
	}
	var r rtsp.Message
	for {
		frame, err := cl.rd.Next(&r)
		if err != nil {
			return nil, fmt.Errorf("rtsp-client: %s: %v", method, err)
		}
		if frame == nil {
			break
		}
	}
	fmt.Fprintf(cl.out, "%s %d %s\n", method, r.Status, r.Reason)
	for _, f := range r.Fields {
		if strings.EqualFold(f.Name, "Transport") || strings.HasPrefix(strings.ToLower(f.Name), "x-") {
			fmt.Fprintf(cl.out, "  %s: %s\n", f.Name, f.Value)
		}
	}
	if r.Status != 200 {
		return &r, fmt.Errorf("rtsp-client: %s answered %d %s", method, r.Status, r.Reason)
	}
	return &r, nil
}
