//go:build linux

package dataplane

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quic-go/quic-go"
	qhttp3 "github.com/quic-go/quic-go/http3"

	"github.com/openltm/openltm/dataplane/http3"
	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortHTTP3Beside: in a namespace of its own, an HTTP/3 virtual
// on one port of an address that a UDP wildcard on every port steers
// keeps its port: its QUIC socket is passed over like a plain UDP
// virtual's listener (steerPlan, from the plane's h3Listeners), so a
// request over HTTP/3 reaches the virtual's member, not the wildcard's
// UDP member; a plain UDP datagram to another port of the address is
// the wildcard's still.
func TestAnyPortHTTP3Beside(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	t.Setenv("QUIC_GO_DISABLE_RECEIVE_BUFFER_WARNING", "true") // the client's socket is not a *net.UDPConn
	startPortEcho(t, "127.26.202.31:30031", "H")
	startUDPMember(t, "127.26.202.30:30030", "WU")
	p, logs := loggedPlane(t)
	cfg := basic("127.26.202.1:30443", "127.26.202.31:30031")
	vs := cfg.Virtuals["/Common/vs"]
	vs.Protocol = ProtoUDP
	vs.MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	cert, key, _ := testCert(t, "h3.test")
	vs.TLS = clientSSL(t, cert, key)
	vs.HTTP3 = &http3.Config{Profile: "/Common/http3", QUICProfile: "/Common/quic"}
	withPool(cfg, "/Common/pw", "127.26.202.30:30030")
	cfg.Virtuals["/Common/wu"] = wildcardOf("/Common/wu", "/Common/pw", ProtoUDP)
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	// The client's socket is connected, as the UDP tests' are: the
	// kernel finds a connected UDP socket before the steering runs, so
	// the virtual's answers reach it, not the UDP wildcard.
	tr := &qhttp3.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true, ServerName: "h3.test"},
		Dial: func(ctx context.Context, addr string, tc *tls.Config, qc *quic.Config) (*quic.Conn, error) {
			u, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(ap("127.26.202.5:0")), net.UDPAddrFromAddrPort(ap(addr)))
			if err != nil {
				return nil, err
			}
			pc := connectedPC{u}
			c, err := quic.Dial(ctx, pc, u.RemoteAddr(), tc, qc)
			if err != nil {
				u.Close()
				return nil, err
			}
			context.AfterFunc(c.Context(), func() { u.Close() })
			return c, nil
		}}
	defer tr.Close()
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Second}
	resp, err := hc.Get("https://127.26.202.1:30443/x")
	if err != nil {
		t.Fatalf("HTTP/3 to the virtual beside the UDP wildcard: %v\n%s", err, logs)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(string(body), "H ") {
		t.Errorf("HTTP/3: %d %q, want the virtual's member H", resp.StatusCode, body)
	}
	if got := dialUDP(t, "", "127.26.202.1:30444").mustAsk("u"); got != "WU:u" {
		t.Errorf("udp to another port of the address: %q, want the wildcard's WU:u", got)
	}
}

// connectedPC is a connected UDP socket as the net.PacketConn quic-go
// takes: what it sends goes to the peer the socket is connected to.
// (Only the methods of net.PacketConn: quic-go would send with an
// address on a socket with control messages, which a connected one
// refuses.)
type connectedPC struct{ c *net.UDPConn }

func (p connectedPC) ReadFrom(b []byte) (int, net.Addr, error) {
	n, err := p.c.Read(b)
	return n, p.c.RemoteAddr(), err
}
func (p connectedPC) WriteTo(b []byte, _ net.Addr) (int, error) { return p.c.Write(b) }
func (p connectedPC) Close() error                              { return p.c.Close() }
func (p connectedPC) LocalAddr() net.Addr                       { return p.c.LocalAddr() }
func (p connectedPC) SetDeadline(t time.Time) error             { return p.c.SetDeadline(t) }
func (p connectedPC) SetReadDeadline(t time.Time) error         { return p.c.SetReadDeadline(t) }
func (p connectedPC) SetWriteDeadline(t time.Time) error        { return p.c.SetWriteDeadline(t) }
