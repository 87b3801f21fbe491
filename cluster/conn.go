package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"sync"
	"time"

	"github.com/openltm/openltm/cluster/trust"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// Config is how a device reaches its device group's etcd cluster: ltmd
// settings (see the package documentation).
type Config struct {
	// Device is this device's name (cm device NAME).
	Device string
	// Endpoints are etcd client URLs.
	Endpoints []string
	// Identity is the device's certificate from the trust domain; nil
	// connects without TLS (an etcd on loopback that needs none).
	Identity *trust.Identity
	// DomainCA is the trust domain's CA certificate (PEM) the device
	// expects; when set with Identity, the device checks its own
	// certificate before it connects.
	DomainCA []byte
	// DialTimeout bounds Connect (default 5 s).
	DialTimeout time.Duration
	// RequestTimeout bounds each etcd request made for the caller
	// (default 3 s): past it the group counts as Disconnected.
	RequestTimeout time.Duration
}

// Conn is one device's client of the group's etcd cluster. It records
// whether etcd answered lately, which is the "Disconnected" in sync status.
type Conn struct {
	cfg Config
	cli *clientv3.Client

	mu      sync.Mutex
	lastErr error // nil when the last request reached etcd
}

// Connect dials the etcd cluster and checks that it answers and accepts the
// device's certificate. A device whose certificate is not from the trust
// domain is refused with a NotTrustedError; an unreachable cluster gives a
// DisconnectedError.
func Connect(ctx context.Context, cfg Config) (*Conn, error) {
	if err := trust.ValidDeviceName(cfg.Device); err != nil {
		return nil, err
	}
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("no etcd endpoints configured for the device group")
	}
	if cfg.DialTimeout == 0 {
		cfg.DialTimeout = 5 * time.Second
	}
	if cfg.RequestTimeout == 0 {
		cfg.RequestTimeout = 3 * time.Second
	}
	cc := clientv3.Config{
		Endpoints:   cfg.Endpoints,
		DialTimeout: cfg.DialTimeout,
		Logger:      zap.NewNop(),
		// Notice a dead connection within a couple of seconds so the
		// watch catches up soon after etcd returns.
		DialKeepAliveTime:    2 * time.Second,
		DialKeepAliveTimeout: 2 * time.Second,
		// Retry a lost connection at most a second apart (gRPC's
		// default backoff grows to two minutes), so a device is back
		// in its group about as soon as etcd is.
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, Jitter: 0.2, MaxDelay: time.Second},
			MinConnectTimeout: time.Second,
		})},
	}
	if id := cfg.Identity; id != nil {
		if id.Device != cfg.Device {
			return nil, &NotTrustedError{Device: cfg.Device,
				Reason: fmt.Sprintf("its certificate was issued to %q", id.Device)}
		}
		if cfg.DomainCA != nil {
			if err := id.Verify(cfg.DomainCA); err != nil {
				return nil, &NotTrustedError{Device: cfg.Device, Reason: err.Error()}
			}
		}
		cc.TLS = id.ClientTLS()
	}
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, &DisconnectedError{Op: "connect to the device group", Endpoints: cfg.Endpoints, Err: err}
	}
	c := &Conn{cfg: cfg, cli: cli}
	rctx, cancel := context.WithTimeout(ctx, cfg.DialTimeout)
	defer cancel()
	_, err = cli.Get(rctx, keyPrefix+"probe")
	if err != nil {
		cli.Close()
		if handshakeRefused(err) || (cfg.Identity != nil && refusedByTLS(cfg.Endpoints, cc.TLS)) {
			return nil, &NotTrustedError{Device: cfg.Device, Reason: "the etcd cluster refused its certificate"}
		}
		return nil, &DisconnectedError{Op: "connect to the device group", Endpoints: cfg.Endpoints, Err: err}
	}
	return c, nil
}

// refusedByTLS tells an etcd that refuses the device's certificate from one
// that is down: gRPC reports both as a timeout. With TLS 1.3 the server's
// refusal arrives as an alert on the first read after the handshake.
func refusedByTLS(endpoints []string, cfg *tls.Config) bool {
	for _, ep := range endpoints {
		u, err := url.Parse(ep)
		if err != nil || u.Scheme != "https" {
			continue
		}
		c := cfg.Clone()
		c.NextProtos = []string{"h2"}
		conn, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", u.Host, c)
		if err != nil {
			if handshakeRefused(err) {
				return true
			}
			continue
		}
		_ = conn.SetReadDeadline(time.Now().Add(2 * time.Second))
		_, err = conn.Read(make([]byte, 1))
		conn.Close()
		if handshakeRefused(err) {
			return true
		}
	}
	return false
}

// Client is the underlying etcd client, for callers that need more.
func (c *Conn) Client() *clientv3.Client { return c.cli }

// Device is this device's name.
func (c *Conn) Device() string { return c.cfg.Device }

// Close closes the client. Leases are not revoked here: Member.Close does
// that; a closed client simply stops renewing them, as a crash would.
func (c *Conn) Close() error { return c.cli.Close() }

// closed reports whether the client was closed (a request would only wait
// for its timeout).
func (c *Conn) closed() bool { return c.cli.Ctx().Err() != nil }

// Connected reports whether the last etcd request of this device succeeded,
// and the error when it did not.
func (c *Conn) Connected() (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr == nil, c.lastErr
}

// note records the outcome of a request and turns transport failures into
// a DisconnectedError naming op.
func (c *Conn) note(op string, err error) error {
	if err != nil && !unreachable(err) {
		return err
	}
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
	if err == nil {
		return nil
	}
	return &DisconnectedError{Op: op, Endpoints: c.cfg.Endpoints, Err: err}
}

// reqCtx bounds one request by RequestTimeout.
func (c *Conn) reqCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.RequestTimeout)
}

// bulkCtx bounds a request that carries n bytes: RequestTimeout plus a
// second per MiB, so a large configuration is not cut off on a slow link.
func (c *Conn) bulkCtx(ctx context.Context, n int) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.cfg.RequestTimeout+time.Duration(n>>20)*time.Second)
}
