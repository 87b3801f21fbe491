package tlsprof

import (
	"crypto/tls"
	"errors"
	"net"
	"time"
)

// HelloConn is the socket under one TLS connection, watching the first
// handshake message in each direction for its session ID: the ClientHello
// and the ServerHello both carry one at the same place (type, length,
// version, random, then the ID). Go's crypto/tls keeps neither, and the
// iRules' SSL::sessionid reads them. Only the first bytes of each
// direction are looked at (at most 76, kept in a fixed array); after that
// Read and Write pass straight through.
//
// A HelloConn is used as the net.Conn given to tls.Server or tls.Client;
// the embedded TCP connection answers everything else (deadlines,
// CloseWrite, linger).
type HelloConn struct {
	*net.TCPConn
	server  bool // the TLS server's socket (client-ssl), else the client's
	in, out helloScan
	// keys is the connection's key log, kept only for connections whose
	// rules read the secrets (KeepKeys).
	keys *KeyLog
	// head is read before the socket (Unread).
	head []byte
	// shello runs over the ServerHello (OnServerHello, serverhello.go);
	// nil: not watched.
	shello func(*ServerHello) error
	sh     serverHelloScan
}

// KeepKeys starts the connection's key log, to be given to its
// tls.Config as KeyLogWriter (WithKeyLog); Keys finds it from the
// connection afterwards.
func (h *HelloConn) KeepKeys() *KeyLog {
	if h.keys == nil {
		h.keys = &KeyLog{}
	}
	return h.keys
}

// ClientRandom is the random of the ClientHello as it crossed the socket,
// nil when it has not yet or the first bytes were no hello. Call it from
// the handshake's goroutine, or once the handshake is done.
func (h *HelloConn) ClientRandom() []byte {
	if h.server {
		return h.in.random(msgClientHello)
	}
	return h.out.random(msgClientHello)
}

// NewHelloConn watches c, the socket of a TLS server (server true: a
// client-ssl connection) or of a TLS client (a server-ssl one).
func NewHelloConn(c *net.TCPConn, server bool) *HelloConn {
	return &HelloConn{TCPConn: c, server: server}
}

// Unread has Read return b before the socket's bytes: the client's first
// bytes, which a virtual server read (its TLS hello) before handing the
// connection to this one (`virtual NAME` in CLIENTSSL_CLIENTHELLO).
func (h *HelloConn) Unread(b []byte) { h.head = b }

func (h *HelloConn) Read(b []byte) (int, error) {
	var (
		n   int
		err error
	)
	if len(h.head) > 0 {
		n = copy(b, h.head)
		h.head = h.head[n:]
	} else {
		n, err = h.TCPConn.Read(b)
	}
	if !h.in.done && n > 0 {
		h.in.feed(b[:n])
	}
	if h.shello != nil && !h.server && !h.sh.done && n > 0 {
		if sh := h.sh.feed(b[:n]); sh != nil {
			if herr := h.shello(sh); herr != nil {
				return 0, herr
			}
		}
	}
	return n, err
}

func (h *HelloConn) Write(b []byte) (int, error) {
	if h.shello != nil && h.server && !h.sh.done {
		if err := h.serverHelloOut(b); err != nil {
			return 0, err
		}
	}
	n, err := h.TCPConn.Write(b)
	if !h.out.done && n > 0 {
		h.out.feed(b[:n])
	}
	return n, err
}

// SessionIDs are the session IDs of the two hellos as they crossed the
// socket: current is the ServerHello's (the session the connection runs
// under), requested the ClientHello's (the session the client asked to
// resume). Either is nil when its hello carried none or has not been
// seen. Call it once the handshake is done (it is not synchronised with
// Read and Write).
func (h *HelloConn) SessionIDs() (current, requested []byte) {
	if h.server {
		return h.out.id(), h.in.id()
	}
	return h.in.id(), h.out.id()
}

// SessionIDs are the session IDs of c's handshake (see
// HelloConn.SessionIDs) when c runs over a HelloConn, else nil.
func SessionIDs(c *tls.Conn) (current, requested []byte) {
	if h := helloConnOf(c.NetConn()); h != nil {
		return h.SessionIDs()
	}
	return nil, nil
}

// HelloSessionID reads the session ID of the TLS hello at the start of b,
// the first bytes of one direction of a connection passed through: done
// is false while more bytes are needed to tell, id is nil when the hello
// carries none or b does not start with a hello. SSL persistence keys on
// it (the ClientHello's ID asks to resume a session, the ServerHello's
// names the session the server runs).
func HelloSessionID(b []byte) (id []byte, done bool) {
	var s helloScan
	s.feed(b)
	if !s.done {
		return nil, false
	}
	if v := s.id(); v != nil {
		return append([]byte(nil), v...), true
	}
	return nil, true
}

// helloScan follows the start of one direction of a TLS connection up to
// the session ID of its first handshake message.
type helloScan struct {
	buf  [helloMax]byte
	n    uint8 // at most helloMax: a byte keeps each HelloConn small
	done bool
	ok   bool // buf holds a whole session ID
}

const (
	recordHeader = 5              // type, version, length
	helloFixed   = 4 + 2 + 32 + 1 // handshake header, version, random, ID length
	maxIDLen     = 32
	helloMax     = recordHeader + helloFixed + maxIDLen

	recordHandshake = 22
	msgClientHello  = 1
	msgServerHello  = 2
)

func (s *helloScan) feed(b []byte) {
	s.n += uint8(copy(s.buf[s.n:], b))
	// Bytes that are no hello are known from their first byte or their
	// sixth (the record's type, the message's): a short answer in
	// plaintext is not waited on for the rest of a hello's header.
	if s.buf[0] != recordHandshake || (s.n > recordHeader && s.buf[5] != msgClientHello && s.buf[5] != msgServerHello) {
		s.done = s.n > 0
		return // not a hello: no session ID to find
	}
	if s.n < recordHeader+helloFixed {
		return
	}
	s.done = true
	recLen := int(s.buf[3])<<8 | int(s.buf[4])
	idLen := int(s.buf[recordHeader+helloFixed-1])
	if idLen > maxIDLen || recordHeader+helloFixed+idLen > recordHeader+recLen {
		return // malformed, or a hello split into records too small to hold its ID
	}
	if int(s.n) < recordHeader+helloFixed+idLen {
		s.done = false // the ID's bytes are still to come
		return
	}
	s.ok = true
}

// random is the hello's random when the message is of type msg (a
// ClientHello or a ServerHello), nil otherwise: it sits after the
// handshake header and the version.
func (s *helloScan) random(msg byte) []byte {
	const at = recordHeader + 4 + 2
	if s.n < at+32 || s.buf[0] != recordHandshake || s.buf[recordHeader] != msg {
		return nil
	}
	return s.buf[at : at+32 : at+32]
}

func (s *helloScan) id() []byte {
	if !s.ok {
		return nil
	}
	l := int(s.buf[recordHeader+helloFixed-1])
	if l == 0 {
		return nil
	}
	return s.buf[recordHeader+helloFixed : recordHeader+helloFixed+l : recordHeader+helloFixed+l]
}

// ParseClientHello reads the ClientHello at the start of b, the first
// bytes a client sent on a connection openltm passes through without
// terminating TLS (ssl persistence: CLIENTSSL_CLIENTHELLO and the
// policies' ssl-client-hello conditions). It runs crypto/tls's own
// server handshake over b up to the hello, the parser that reads the
// hellos of the connections openltm terminates, so that rules see the
// same ClientHelloInfo either way. done is false while b holds part of
// the hello (it may span records and segments); h is nil when b does
// not start with a ClientHello crypto/tls accepts.
func ParseClientHello(b []byte) (h *tls.ClientHelloInfo, done bool) {
	// The first record's own length says it is not in yet: no need to
	// parse (a client sending its hello a byte at a time would have it
	// parsed once per byte otherwise).
	if len(b) < recordHeader || b[0] == recordHandshake && len(b) < recordHeader+(int(b[3])<<8|int(b[4])) {
		return nil, false
	}
	cfg := &tls.Config{GetConfigForClient: func(chi *tls.ClientHelloInfo) (*tls.Config, error) {
		h = chi
		return nil, errHelloRead
	}}
	err := tls.Server(&helloBytes{b: b}, cfg).Handshake()
	if h != nil {
		h.Conn = nil // the bytes, not a connection
		return h, true
	}
	return nil, !errors.Is(err, errHelloShort)
}

var (
	errHelloRead  = errors.New("tlsprof: client hello read")
	errHelloShort = errors.New("tlsprof: client hello incomplete")
)

// helloBytes is a net.Conn reading b once, then answering errHelloShort;
// what the handshake writes (an alert) is dropped.
type helloBytes struct{ b []byte }

func (c *helloBytes) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, errHelloShort
	}
	n := copy(p, c.b)
	c.b = c.b[n:]
	return n, nil
}

func (c *helloBytes) Write(p []byte) (int, error)        { return len(p), nil }
func (c *helloBytes) Close() error                       { return nil }
func (c *helloBytes) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *helloBytes) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *helloBytes) SetDeadline(t time.Time) error      { return nil }
func (c *helloBytes) SetReadDeadline(t time.Time) error  { return nil }
func (c *helloBytes) SetWriteDeadline(t time.Time) error { return nil }
