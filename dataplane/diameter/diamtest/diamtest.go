// Package diamtest is a Diameter server and client for tests, on the
// codec the diameter profile uses (dataplane/diammsg): a server answers
// CER with a CEA and every other request with an answer carrying its
// own Origin-Host, so a test sees which member a request reached, and
// keeps what it received; a client exchanges capabilities and sends
// requests, pairing answers by hop-by-hop identifier.
package diamtest

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// Got is one request a server received: its command, Session-Id,
// Origin-Host and Destination-Host.
type Got struct {
	Code                  uint32
	Session, Origin, Dest string
	HostIP                string
	// Retransmit: the header's T flag was set.
	Retransmit bool
	// From is the address and port the request's connection came from.
	From string
}

// Server is a Diameter peer listening on one address.
type Server struct {
	Name string
	// Watchdog: the server sends a DWR after each CEA and records the
	// DWAs it gets.
	Watchdog bool
	ln       net.Listener
	mu       sync.Mutex
	got      []Got
	dwas     int
	conns    map[net.Conn]bool
	done     chan struct{}
	silent   atomic.Bool
	muteCER  atomic.Bool
}

// Silent makes the server keep every request but a CER unanswered (on),
// as a member that hangs does, or answer again (off).
func (s *Server) Silent(on bool) { s.silent.Store(on) }

// MuteCER makes the server leave CERs unanswered too (on), as a peer
// that never completes the capabilities exchange.
func (s *Server) MuteCER(on bool) { s.muteCER.Store(on) }

// Start runs a server named name (its Origin-Host) on addr.
func Start(addr, name string, watchdog bool) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return Serve(ln, name, watchdog), nil
}

// StartTLS runs a server named name on addr that speaks Diameter over
// TLS from the connection's start (RFC 6733 13) with cfg.
func StartTLS(addr, name string, cfg *tls.Config) (*Server, error) {
	ln, err := tls.Listen("tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	return Serve(ln, name, false), nil
}

// Serve runs a server named name on ln.
func Serve(ln net.Listener, name string, watchdog bool) *Server {
	s := &Server{Name: name, Watchdog: watchdog, ln: ln, conns: map[net.Conn]bool{}, done: make(chan struct{})}
	go s.accept()
	return s
}

// Addr is where the server listens.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and its connections.
func (s *Server) Close() {
	if s.ln != nil {
		s.ln.Close()
	}
	s.mu.Lock()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
}

// Got is what the server received, CERs included.
func (s *Server) Got() []Got {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Got(nil), s.got...)
}

// DWAs is how many watchdog answers the server got.
func (s *Server) DWAs() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dwas
}

func (s *Server) accept() {
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		go s.serve(c)
	}
}

func (s *Server) serve(c net.Conn) {
	defer func() {
		c.Close()
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
	}()
	rd := diammsg.Reader{R: c}
	for {
		raw, err := rd.Next()
		if err != nil {
			return
		}
		m, err := diammsg.Parse(raw)
		if err != nil {
			return
		}
		if !m.Request() {
			if m.Code() == diammsg.CmdDeviceWatchdog {
				s.mu.Lock()
				s.dwas++
				s.mu.Unlock()
			}
			continue
		}
		g := Got{Code: m.Code(), Session: string(m.Get(diammsg.AVPSessionID)), Origin: string(m.Get(diammsg.AVPOriginHost)),
			Dest: string(m.Get(diammsg.AVPDestinationHost)), Retransmit: m.Flags()&diammsg.FlagRetransmit != 0, From: c.RemoteAddr().String()}
		if a, ok := diammsg.AddressOf(m.Get(diammsg.AVPHostIPAddress)); ok {
			g.HostIP = a.String()
		}
		s.mu.Lock()
		s.got = append(s.got, g)
		s.mu.Unlock()
		if s.silent.Load() && m.Code() != diammsg.CmdCapabilitiesExchange || s.muteCER.Load() && m.Code() == diammsg.CmdCapabilitiesExchange {
			continue
		}
		var b []byte
		if sid := m.Get(diammsg.AVPSessionID); sid != nil {
			b = diammsg.AppendAVP(b, diammsg.AVPSessionID, diammsg.AVPFlagMandatory, 0, sid)
		}
		b = diammsg.AppendAVP(b, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(diammsg.ResultSuccess))
		b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(s.Name))
		b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("members.example"))
		if m.Code() == diammsg.CmdCapabilitiesExchange {
			b = diammsg.AppendAVP(b, diammsg.AVPHostIPAddress, diammsg.AVPFlagMandatory, 0, diammsg.Address(c.LocalAddr().(*net.TCPAddr).AddrPort().Addr().Unmap()))
			b = diammsg.AppendAVP(b, diammsg.AVPVendorID, diammsg.AVPFlagMandatory, 0, diammsg.U32(0))
			b = diammsg.AppendAVP(b, diammsg.AVPProductName, 0, 0, []byte("diamtest"))
		}
		if _, err := c.Write(diammsg.Build(m.Flags()&^diammsg.FlagRequest, m.Code(), m.AppID(), m.HopByHop(), m.EndToEnd(), b)); err != nil {
			return
		}
		if m.Code() == diammsg.CmdCapabilitiesExchange && s.Watchdog {
			dwr := diammsg.AppendAVP(nil, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(s.Name))
			dwr = diammsg.AppendAVP(dwr, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("members.example"))
			c.Write(diammsg.Build(diammsg.FlagRequest, diammsg.CmdDeviceWatchdog, 0, 0xdddd, 0xdddd, dwr))
		}
	}
}

// Client is a Diameter peer connected to a server (or a virtual).
type Client struct {
	c   net.Conn
	rd  diammsg.Reader
	hbh uint32
}

// Dial connects to addr.
func Dial(addr string) (*Client, error) {
	c, err := net.DialTimeout("tcp", addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, rd: diammsg.Reader{R: c}, hbh: 1000}, nil
}

// NewClient speaks Diameter over c, a connection the caller made (from
// an address and port of its choosing).
func NewClient(c net.Conn) *Client { return &Client{c: c, rd: diammsg.Reader{R: c}, hbh: 1000} }

// DialTLS connects to addr and speaks Diameter over TLS with cfg.
func DialTLS(addr string, cfg *tls.Config) (*Client, error) {
	c, err := tls.DialWithDialer(&net.Dialer{Timeout: 10 * time.Second}, "tcp", addr, cfg)
	if err != nil {
		return nil, err
	}
	return &Client{c: c, rd: diammsg.Reader{R: c}, hbh: 1000}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.c.Close() }

// Write sends raw bytes as they are.
func (c *Client) Write(b []byte) error {
	_, err := c.c.Write(b)
	return err
}

// Answer is an answer the client got.
type Answer struct {
	Code        uint32
	Result      uint32
	Session     string
	Origin      string
	OriginRealm string
	HostIP      string
}

// CER sends a Capabilities-Exchange-Request as host (realm
// clients.example, Host-IP-Address 192.0.2.1) and returns its answer.
func (c *Client) CER(host string) (Answer, error) {
	var b []byte
	b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(host))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("clients.example"))
	b = diammsg.AppendAVP(b, diammsg.AVPHostIPAddress, diammsg.AVPFlagMandatory, 0, []byte{0, 1, 192, 0, 2, 1})
	b = diammsg.AppendAVP(b, diammsg.AVPVendorID, diammsg.AVPFlagMandatory, 0, diammsg.U32(0))
	b = diammsg.AppendAVP(b, diammsg.AVPProductName, 0, 0, []byte("diamtest"))
	b = diammsg.AppendAVP(b, diammsg.AVPAuthAppID, diammsg.AVPFlagMandatory, 0, diammsg.U32(4))
	ans, err := c.Exchange([]uint32{diammsg.CmdCapabilitiesExchange}, 0, b)
	if err != nil {
		return Answer{}, err
	}
	return ans[0], nil
}

// Request is a Credit-Control-Request (272, application 4) of one
// session from host, with Destination-Host dest when not "".
func Request(host, session, dest string) []byte {
	return RequestTo(host, session, "members.example", dest)
}

// RequestTo is Request with Destination-Realm realm.
func RequestTo(host, session, realm, dest string) []byte {
	var b []byte
	b = diammsg.AppendAVP(b, diammsg.AVPSessionID, diammsg.AVPFlagMandatory, 0, []byte(session))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte(host))
	b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("clients.example"))
	b = diammsg.AppendAVP(b, diammsg.AVPDestinationRealm, diammsg.AVPFlagMandatory, 0, []byte(realm))
	if dest != "" {
		b = diammsg.AppendAVP(b, diammsg.AVPDestinationHost, diammsg.AVPFlagMandatory, 0, []byte(dest))
	}
	return b
}

// Exchange sends one request per code (application app, the AVPs avps
// each) at once and waits for every answer, returned in request order;
// it fails when an answer does not pair with a request.
func (c *Client) Exchange(codes []uint32, app uint32, avps ...[]byte) ([]Answer, error) {
	first := c.hbh
	var out []byte
	for i, code := range codes {
		a := avps[min(i, len(avps)-1)]
		out = append(out, diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, code, app, c.hbh, c.hbh, a)...)
		c.hbh++
	}
	if _, err := c.c.Write(out); err != nil {
		return nil, err
	}
	ans := make([]Answer, len(codes))
	seen := make([]bool, len(codes))
	c.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	defer c.c.SetReadDeadline(time.Time{})
	for n := 0; n < len(codes); {
		raw, err := c.rd.Next()
		if err != nil {
			return nil, err
		}
		m, err := diammsg.Parse(raw)
		if err != nil {
			return nil, err
		}
		if m.Request() {
			continue
		}
		i := int(m.HopByHop() - first)
		if i < 0 || i >= len(codes) || seen[i] || m.Code() != codes[i] {
			return nil, fmt.Errorf("an answer (command %d, hop-by-hop %d) pairs with no request", m.Code(), m.HopByHop())
		}
		seen[i] = true
		n++
		a := Answer{Code: m.Code(), Session: string(m.Get(diammsg.AVPSessionID)), Origin: string(m.Get(diammsg.AVPOriginHost)),
			OriginRealm: string(m.Get(diammsg.AVPOriginRealm))}
		if rc := m.Get(diammsg.AVPResultCode); len(rc) == 4 {
			a.Result = uint32(rc[0])<<24 | uint32(rc[1])<<16 | uint32(rc[2])<<8 | uint32(rc[3])
		}
		if ip, ok := diammsg.AddressOf(m.Get(diammsg.AVPHostIPAddress)); ok {
			a.HostIP = ip.String()
		}
		ans[i] = a
	}
	return ans, nil
}

// ErrReset is what Wait returns when the connection was reset.
var ErrReset = errors.New("connection reset")

// Wait reads until the connection ends: nil on a clean close, ErrReset
// on a reset, the error after 15 seconds of neither.
func (c *Client) Wait() error {
	c.c.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf := make([]byte, 4096)
	for {
		_, err := c.c.Read(buf)
		if err == nil {
			continue
		}
		var ne *net.OpError
		if errors.As(err, &ne) && !ne.Timeout() {
			return ErrReset
		}
		if err.Error() == "EOF" {
			return nil
		}
		return err
	}
}
