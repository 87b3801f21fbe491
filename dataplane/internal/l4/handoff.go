package l4

import (
	"net"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/tlsprof"
	"github.com/openltm/openltm/rules"
)

// A connection handed on after its first bytes were read: `virtual NAME`
// in CLIENTSSL_CLIENTHELLO on a virtual server that passes TLS through
// (sslpersist.go) hands the client to the named virtual server together
// with the ClientHello it read (proxied.head), as `virtual NAME` in
// CLIENT_DATA does with the bytes collected (handoff_data.go). That
// virtual reads those bytes before the socket's: its client-ssl
// handshake (terminate), its own hello read (peekFirst, firstKey), its
// rules' CLIENT_DATA, or its member (passFirst) get the connection as the
// client sent it. The socket cannot take bytes back, so the bytes travel
// beside it.

// headConn is the client's socket with the bytes a virtual server read
// before handing it on, returned first. Only tls.Server reads through it
// (Read, Write, deadlines); the flow keeps the socket for everything else.
type headConn struct {
	*net.TCPConn
	head []byte
}

func (c *headConn) Read(b []byte) (int, error) {
	if len(c.head) > 0 {
		n := copy(b, c.head)
		c.head = c.head[n:]
		return n, nil
	}
	return c.TCPConn.Read(b)
}

// clientTLSConn is what the client's TLS server reads and writes: the
// socket, or a HelloConn over it when the virtual has rules (hc), with
// the bytes handed over first.
func clientTLSConn(c *net.TCPConn, hc *tlsprof.HelloConn, head []byte) net.Conn {
	if hc != nil {
		if len(head) > 0 {
			hc.Unread(head)
		}
		return hc
	}
	if len(head) > 0 {
		return &headConn{TCPConn: c, head: head}
	}
	return c
}

// eventClientHello is CLIENTSSL_CLIENTHELLO as a flow's rule state names
// the event running (runSSLEvent).
var eventClientHello = config.Event(rules.ClientSSLClientHello.String())
