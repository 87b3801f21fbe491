package dataplane

import (
	"bufio"
	"bytes"
	"errors"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// server is a labelled member: it answers each line with "<label> Response"
// and remembers who connected. It can be killed and restarted on the same
// address, as the field procedures do with real servers.
type server struct {
	t     *testing.T
	addr  string
	label string

	mu      sync.Mutex
	ln      net.Listener
	conns   map[net.Conn]bool
	remotes []netip.AddrPort
}

func startServer(t *testing.T, addr, label string) *server {
	t.Helper()
	s := &server{t: t, addr: addr, label: label, conns: map[net.Conn]bool{}}
	s.start()
	t.Cleanup(s.kill)
	return s
}

func (s *server) start() {
	s.t.Helper()
	var ln net.Listener
	var err error
	for i := 0; i < 50; i++ { // the port may linger briefly after a kill
		if ln, err = net.Listen("tcp", s.addr); err == nil {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		s.t.Fatal(err)
	}
	s.mu.Lock()
	s.ln = ln
	s.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.remotes = append(s.remotes, netip.MustParseAddrPort(c.RemoteAddr().String()))
			s.mu.Unlock()
			go s.handle(c)
		}
	}()
}

func (s *server) handle(c net.Conn) {
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			if line != "" {
				c.Write([]byte(s.label + " Response\n"))
			}
			if tc, ok := c.(*net.TCPConn); ok && err.Error() == "EOF" {
				tc.CloseWrite()
			}
			return
		}
		switch strings.TrimSpace(line) {
		case "reset":
			c.(*net.TCPConn).SetLinger(0)
			return
		}
		if _, err := c.Write([]byte(s.label + " Response\n")); err != nil {
			return
		}
	}
}

// kill closes the listener and every open connection.
func (s *server) kill() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ln != nil {
		s.ln.Close()
		s.ln = nil
	}
	for c := range s.conns {
		c.Close()
	}
}

func (s *server) lastRemote() netip.AddrPort {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.remotes) == 0 {
		return netip.AddrPort{}
	}
	return s.remotes[len(s.remotes)-1]
}

// client is one client connection through a virtual.
type client struct {
	t *testing.T
	c *net.TCPConn
	r *bufio.Reader
}

func dialVS(t *testing.T, vs string) *client {
	t.Helper()
	return dialFrom(t, "", vs)
}

func dialFrom(t *testing.T, src, vs string) *client {
	t.Helper()
	d := net.Dialer{Timeout: 2 * time.Second}
	if src != "" {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))
	}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Fatalf("dial %s: %v", vs, err)
	}
	t.Cleanup(func() { c.Close() })
	return &client{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
}

// unanswered dials vs and sends msg, reporting whether the virtual refused
// the client: a reset may reach the dialer before connect returns (a rule
// that resets in CLIENT_ACCEPTED races the handshake's last step), so a
// dial reset counts as a refusal as much as a reset after the message.
func unanswered(t *testing.T, vs, msg string) bool {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			return true
		}
		t.Fatalf("dial %s: %v", vs, err)
	}
	defer c.Close()
	k := &client{t: t, c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	_, err = k.ask(msg)
	return err != nil
}

// ask sends one message and returns the answer line ("" and the error when
// the connection failed).
func (c *client) ask(msg string) (string, error) {
	c.c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.c.Write([]byte(msg + "\n")); err != nil {
		return "", err
	}
	line, err := c.r.ReadString('\n')
	return strings.TrimSpace(line), err
}

func (c *client) mustAsk(msg string) string {
	c.t.Helper()
	a, err := c.ask(msg)
	if err != nil {
		c.t.Fatalf("ask %q: %v", msg, err)
	}
	return a
}

// tryAsk connects from src (any when ""), asks once and closes; a refused,
// reset or unanswered attempt is an error.
func tryAsk(src, vs string) error {
	d := net.Dialer{Timeout: 2 * time.Second}
	if src != "" {
		d.LocalAddr = net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))
	}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		return err
	}
	defer c.Close()
	cl := &client{c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	_, err = cl.ask("hi")
	return err
}

// once opens a connection, asks once and closes; it returns the answer.
func once(t *testing.T, vs string) string {
	t.Helper()
	c := dialVS(t, vs)
	defer c.c.Close()
	return c.mustAsk("hello")
}

// eventually polls cond for up to 5 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	// Up to 10 s: a loaded CI machine running every package at once can be
	// slow, and the conditions waited for are quick otherwise.
	for i := 0; i < 500; i++ {
		if cond() {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

// logBuf collects log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newPlane(t *testing.T) (*Plane, *logBuf) {
	t.Helper()
	lb := &logBuf{}
	p := New(Options{Logger: slog.New(slog.NewTextHandler(lb, nil)), ConnectTimeout: time.Second, BusyPoll: DefaultBusyPoll})
	t.Cleanup(p.Close)
	return p, lb
}

// loggedPlane is newPlane whose log is printed when the test fails.
func loggedPlane(t *testing.T) (*Plane, *logBuf) {
	t.Helper()
	p, logs := newPlane(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("plane log:\n%s", logs)
		}
	})
	return p, logs
}

func ap(s string) netip.AddrPort { return netip.MustParseAddrPort(s) }

// basic builds a virtual over one pool of members (addresses "ip:port").
func basic(vs string, members ...string) *Config {
	cfg := &Config{
		Virtuals: map[string]*Virtual{"/Common/vs": {Name: "/Common/vs", Destination: ap(vs), Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: "/Common/pool", SNAT: SNAT{Type: SNATNone}}},
		Pools:    map[string]*Pool{"/Common/pool": {Name: "/Common/pool", LBMode: RoundRobin}},
		Monitors: map[string]*Monitor{},
	}
	for _, m := range members {
		a := ap(m)
		cfg.Pools["/Common/pool"].Members = append(cfg.Pools["/Common/pool"].Members,
			Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	return cfg
}

func tcpMonitor(cfg *Config) {
	cfg.Monitors["/Common/tcp"] = &Monitor{Name: "/Common/tcp", Type: MonitorTCP,
		// A member is down once no probe has succeeded for Timeout: a
		// loaded machine can hold a live member's probes back for tens of
		// milliseconds, and a killed member is still seen down in a second.
		Interval: 20 * time.Millisecond, Timeout: time.Second}
	cfg.Pools["/Common/pool"].Monitor = MonitorRule{Names: []string{"/Common/tcp"}}
}

func mustApply(t *testing.T, p *Plane, cfg *Config) {
	t.Helper()
	if err := p.Apply(nil, cfg); err != nil {
		t.Fatalf("Apply: %v", err)
	}
}

func memberStat(t *testing.T, p *Plane, pool, member string) MemberStats {
	t.Helper()
	ps, ok := p.Pool(pool)
	if !ok {
		t.Fatalf("no pool %s", pool)
	}
	for _, m := range ps.Members {
		if m.Name == member {
			return m
		}
	}
	t.Fatalf("no member %s in %s", member, pool)
	return MemberStats{}
}

// serveConns listens on addr until the test or benchmark ends and runs
// handle on a goroutine for each connection, closing it when handle
// returns.
func serveConns(t testing.TB, addr string, handle func(c net.Conn)) {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	serveOn(t, ln, handle)
}

// serveOn is serveConns on a listener of the caller's (a TLS one, say).
func serveOn(t testing.TB, ln net.Listener, handle func(c net.Conn)) {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
}

// udpService is a real UDP service at addr for the test's life: each
// datagram is answered with what answer makes of its sender and
// payload.
func udpService(t *testing.T, addr string, answer func(from netip.AddrPort, b []byte) []byte) {
	t.Helper()
	srv, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	go func() {
		b := make([]byte, 2048)
		for {
			n, from, err := srv.ReadFromUDPAddrPort(b)
			if err != nil {
				return
			}
			srv.WriteToUDPAddrPort(answer(from, b[:n]), from)
		}
	}()
}
