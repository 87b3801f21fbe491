// Package etcdtest starts a real, single-member etcd server on loopback for
// tests and transcripts: random free ports, a data directory of the caller's
// choosing (a temporary one by default), a bounded wait for readiness, and
// Stop/Restart on the same directory and ports so that tests can take etcd
// away and bring it back the way an outage does.
package etcdtest

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/etcd/client/pkg/v3/transport"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// StartTimeout bounds how long Start and Restart wait for the member to be
// ready to serve; a slow, shared machine needs a few seconds.
const StartTimeout = 30 * time.Second

// TLS names the PEM files of a server that requires client certificates:
// the server's certificate and key, and the CA that client certificates
// must chain to.
type TLS struct {
	CertFile, KeyFile, CAFile string
}

// Options adjust the server. The zero value is a plain-text member with
// etcd's defaults.
type Options struct {
	// Dir is the data directory; empty means a fresh temporary one.
	Dir string
	// TLS, when set, serves clients over TLS and requires a client
	// certificate issued by TLS.CAFile.
	TLS *TLS
	// MaxRequestBytes overrides etcd's request size limit (1.5 MiB) when
	// non-zero.
	MaxRequestBytes uint
	// Host is the loopback address the member and its relays listen on
	// (127.0.0.1 when empty), so that tests keeping to an address range
	// of their own can.
	Host string
}

func (o Options) host() string {
	if o.Host == "" {
		return "127.0.0.1"
	}
	return o.Host
}

// Server is one running (or stopped) etcd member.
type Server struct {
	opts Options

	mu      sync.Mutex
	e       *embed.Etcd
	client  url.URL
	peer    url.URL
	scheme  string
	stopped bool
	proxies []*Proxy
	front   *Proxy
}

// Start starts a member and registers its shutdown with tb.Cleanup. It fails
// the test when the member is not ready within StartTimeout.
func Start(tb testing.TB, opts Options) *Server {
	tb.Helper()
	if opts.Dir == "" {
		opts.Dir = tb.TempDir()
	}
	s, err := Launch(opts)
	if err != nil {
		tb.Fatalf("etcdtest: %v", err)
	}
	tb.Cleanup(s.Close)
	return s
}

// Launch starts a member outside a Go test (a transcript's setup, say);
// opts.Dir is required, and the caller calls Close.
func Launch(opts Options) (*Server, error) {
	if opts.Dir == "" {
		return nil, errors.New("etcdtest: Options.Dir is required")
	}
	s := &Server{opts: opts, scheme: "http"}
	if opts.TLS != nil {
		s.scheme = "https"
	}
	var err error
	// A port picked free can be taken before etcd binds it; try a few.
	for try := 0; try < 5; try++ {
		s.client, s.peer, err = s.freeURLs()
		if err != nil {
			continue
		}
		if err = s.start(); err == nil {
			break
		}
		if !strings.Contains(err.Error(), "address already in use") {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("start etcd: %w", err)
	}
	if s.front, err = s.Proxy(); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Close stops the member and its relays.
func (s *Server) Close() {
	s.Stop()
	s.mu.Lock()
	proxies := s.proxies
	s.proxies = nil
	s.mu.Unlock()
	for _, p := range proxies {
		p.Close()
	}
}

func (s *Server) freeURLs() (client, peer url.URL, err error) {
	port := func() (int, error) {
		l, err := net.Listen("tcp", net.JoinHostPort(s.opts.host(), "0"))
		if err != nil {
			return 0, err
		}
		defer l.Close()
		return l.Addr().(*net.TCPAddr).Port, nil
	}
	cp, err := port()
	if err != nil {
		return client, peer, err
	}
	pp, err := port()
	if err != nil {
		return client, peer, err
	}
	client = url.URL{Scheme: s.scheme, Host: net.JoinHostPort(s.opts.host(), strconv.Itoa(cp))}
	peer = url.URL{Scheme: "http", Host: net.JoinHostPort(s.opts.host(), strconv.Itoa(pp))}
	return client, peer, nil
}

func (s *Server) start() error {
	cfg := embed.NewConfig()
	cfg.Name = "etcdtest"
	cfg.Dir = s.opts.Dir
	cfg.ListenClientUrls = []url.URL{s.client}
	cfg.AdvertiseClientUrls = []url.URL{s.client}
	cfg.ListenPeerUrls = []url.URL{s.peer}
	cfg.AdvertisePeerUrls = []url.URL{s.peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	cfg.Metrics = "basic"
	if s.opts.MaxRequestBytes != 0 {
		cfg.MaxRequestBytes = s.opts.MaxRequestBytes
	}
	if t := s.opts.TLS; t != nil {
		cfg.ClientTLSInfo = transport.TLSInfo{
			CertFile:       t.CertFile,
			KeyFile:        t.KeyFile,
			TrustedCAFile:  t.CAFile,
			ClientCertAuth: true,
		}
	}
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return err
	case <-time.After(StartTimeout):
		e.Server.Stop()
		e.Close()
		return errors.New("etcd was not ready within " + StartTimeout.String())
	}
	s.mu.Lock()
	s.e = e
	s.stopped = false
	s.mu.Unlock()
	return nil
}

// Endpoints are the client URLs to hand to clientv3.Config. They lead
// through a relay (see Proxy) so that Stop can drop clients at once, as a
// crash of etcd would.
func (s *Server) Endpoints() []string { return s.front.Endpoints() }

// DirectEndpoints are the member's own client URLs.
func (s *Server) DirectEndpoints() []string { return []string{s.client.String()} }

// Dir is the member's data directory.
func (s *Server) Dir() string { return s.opts.Dir }

// MaxRequestBytes is the request size limit the member enforces.
func (s *Server) MaxRequestBytes() uint {
	if s.opts.MaxRequestBytes != 0 {
		return s.opts.MaxRequestBytes
	}
	return embed.DefaultMaxRequestBytes
}

// Stop shuts the member down and keeps its data directory; it may be called
// more than once. Clients connected through the relays lose their
// connections first, so the shutdown does not wait for them.
func (s *Server) Stop() {
	s.mu.Lock()
	e := s.e
	s.e = nil
	s.stopped = true
	proxies := s.proxies
	s.mu.Unlock()
	for _, p := range proxies {
		p.Cut()
	}
	if e != nil {
		e.Close()
	}
	for _, p := range proxies {
		p.Restore()
	}
}

// Restart starts a stopped member again on the same data directory and
// ports, as an operator restarting etcd after an outage would.
func (s *Server) Restart() error {
	s.mu.Lock()
	if !s.stopped {
		s.mu.Unlock()
		return errors.New("etcdtest: Restart of a running member")
	}
	s.mu.Unlock()
	var err error
	// The ports were just released; a listener in TIME_WAIT or a late
	// close can hold them for a moment.
	deadline := time.Now().Add(StartTimeout)
	for {
		if err = s.start(); err == nil || time.Now().After(deadline) ||
			!strings.Contains(err.Error(), "address already in use") {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("etcdtest: restart etcd: %w", err)
	}
	return nil
}

// Client returns a plain-text client of the member, closed at cleanup. For
// a TLS member build the client with the device's certificate instead.
func (s *Server) Client(tb testing.TB) *clientv3.Client {
	tb.Helper()
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   s.Endpoints(),
		DialTimeout: 5 * time.Second,
		Logger:      zap.NewNop(),
	})
	if err != nil {
		tb.Fatalf("etcdtest: client: %v", err)
	}
	tb.Cleanup(func() { cli.Close() })
	return cli
}
