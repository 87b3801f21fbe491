// Package earlyclient is an HTTP/3 client that sends its requests in
// 0-RTT and keeps them there: a server can only be seen to treat early
// requests as such when they reach it before the handshake completes,
// and on loopback a handshake completes within a fraction of a
// millisecond. So the client holds its own end of the handshake (its
// Handshake and 1-RTT packets) until an answer came or a while passed,
// and lets the server's first flight in only once its requests left in
// 0-RTT packets. tcpkit's `http3 -0rtt` and the http3 package's tests
// use it; it is a test client, not a proxy's.
package earlyclient

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/quic-go/quic-go"
	"github.com/quic-go/quic-go/http3"
)

// Answer is one request's answer (Err when it got none).
type Answer struct {
	Resp *http.Response
	Body []byte
	Err  error
}

// Result is what Do saw: whether the server took the 0-RTT, and each
// request's answer in order.
type Result struct {
	Used0RTT bool
	Answers  []Answer
}

// Do primes a session ticket with a first connection (a handshake, no
// request), then asks reqs (without bodies) in 0-RTT on a second one, holding the
// handshake's end until the first answer or hold passed. tc must offer
// ALPN h3; its ClientSessionCache is set when nil.
func Do(ctx context.Context, addr string, tc *tls.Config, reqs []*http.Request, hold time.Duration) (*Result, error) {
	ua, err := net.ResolveUDPAddr("udp", addr)
	if err != nil {
		return nil, err
	}
	tc = tc.Clone()
	if tc.ClientSessionCache == nil {
		tc.ClientSessionCache = tls.NewLRUClientSessionCache(4)
	}
	stored := &notifyCache{ClientSessionCache: tc.ClientSessionCache, put: make(chan struct{}, 1)}
	tc.ClientSessionCache = stored

	// The first connection: a ticket.
	first, err := quic.DialAddr(ctx, addr, tc, &quic.Config{})
	if err != nil {
		return nil, err
	}
	select {
	case <-stored.put:
	case <-time.After(5 * time.Second):
		first.CloseWithError(0, "")
		return nil, errors.New("earlyclient: the server sent no session ticket (session-ticket disabled?)")
	case <-ctx.Done():
		first.CloseWithError(0, "")
		return nil, ctx.Err()
	}
	first.CloseWithError(0, "")

	pc, err := net.ListenUDP("udp", nil)
	if err != nil {
		return nil, err
	}
	g := &gate{PacketConn: pc, sent: make(chan struct{}), early: make(chan struct{}), open: make(chan struct{})}
	tr := &quic.Transport{Conn: g}
	defer tr.Close()
	defer pc.Close()
	// The hold is bounded whatever happens: a server that refuses 0-RTT
	// (or issued a ticket without it) completes the handshake first.
	defer g.release()
	stop := time.AfterFunc(hold, g.release)
	defer stop.Stop()
	conn, err := tr.DialEarly(ctx, ua, tc, &quic.Config{})
	if err != nil {
		return nil, err
	}
	defer conn.CloseWithError(0, "")
	cc := (&http3.Transport{}).NewClientConn(conn)
	res := &Result{Answers: make([]Answer, len(reqs))}
	strs := make([]*http3.RequestStream, len(reqs))
	for i, r := range reqs {
		str, err := cc.OpenRequestStream(ctx)
		if err == nil {
			if r.Body != nil && r.Body != http.NoBody {
				err = errors.New("earlyclient: a request with a body cannot be sent: quic-go's request stream declares none")
			} else {
				err = str.SendRequestHeader(r)
			}
		}
		if err == nil {
			err = str.Close()
		}
		if err != nil {
			res.Answers[i].Err = err
			continue
		}
		strs[i] = str
	}
	close(g.sent) // the next 0-RTT packet carries them; then the server may answer
	var wg sync.WaitGroup
	for i, str := range strs {
		if str == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := str.ReadResponse()
			if err != nil {
				res.Answers[i].Err = err
				return
			}
			g.answered()
			res.Answers[i].Resp = resp
			res.Answers[i].Body, res.Answers[i].Err = io.ReadAll(resp.Body)
			resp.Body.Close()
		}()
	}
	wg.Wait()
	g.release()
	select {
	case <-conn.HandshakeComplete():
	case <-conn.Context().Done():
	case <-ctx.Done():
	}
	res.Used0RTT = conn.ConnectionState().Used0RTT
	return res, nil
}

// notifyCache tells of each ticket stored.
type notifyCache struct {
	tls.ClientSessionCache
	put chan struct{}
}

func (c *notifyCache) Put(key string, cs *tls.ClientSessionState) {
	c.ClientSessionCache.Put(key, cs)
	if cs != nil {
		select {
		case c.put <- struct{}{}:
		default:
		}
	}
}

// gate is the client's socket: it holds the server's datagrams until
// the requests left in a 0-RTT packet (sent, then one such packet:
// early), and the client's datagrams that end the handshake or carry
// 1-RTT until open.
type gate struct {
	net.PacketConn
	sent, early, open chan struct{}
	earlyOnce, once   sync.Once
	answer            sync.Once
	mu                sync.Mutex
	quiet             *time.Timer
}

// SetReadBuffer and SetWriteBuffer are the socket's, which quic-go
// sizes.
func (g *gate) SetReadBuffer(n int) error  { return g.PacketConn.(*net.UDPConn).SetReadBuffer(n) }
func (g *gate) SetWriteBuffer(n int) error { return g.PacketConn.(*net.UDPConn).SetWriteBuffer(n) }

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// answered opens the gate at the first answer: it came in 0.5-RTT, the
// server having taken the request early.
func (g *gate) answered() { g.answer.Do(g.release) }

func (g *gate) WriteTo(b []byte, addr net.Addr) (int, error) {
	select {
	case <-g.open:
		return g.PacketConn.WriteTo(b, addr)
	default:
	}
	kinds := packetKinds(b)
	if kinds&^(1<<kindInitial|1<<kindZeroRTT) != 0 {
		<-g.open // quic-go writes from its own goroutine; the hold is bounded by Do
		return g.PacketConn.WriteTo(b, addr)
	}
	n, err := g.PacketConn.WriteTo(b, addr)
	if kinds&(1<<kindZeroRTT) != 0 {
		select {
		case <-g.sent:
			// The requests are leaving in 0-RTT packets: once the
			// client has written none for a while, they are all out.
			g.mu.Lock()
			if g.quiet == nil {
				g.quiet = time.AfterFunc(quietFor, func() { g.earlyOnce.Do(func() { close(g.early) }) })
			} else {
				g.quiet.Reset(quietFor)
			}
			g.mu.Unlock()
		default:
		}
	}
	return n, err
}

// quietFor is how long after its last 0-RTT packet the client takes its
// requests to be out: quic-go writes what it has queued at once, so a
// pause this long means nothing is left (were it not so, a request
// would go later, in 1-RTT, and be seen as not early).
const quietFor = 250 * time.Millisecond

func (g *gate) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := g.PacketConn.ReadFrom(b)
	if err == nil {
		select {
		case <-g.early:
		case <-g.open:
		case <-time.After(2 * time.Second): // bounded: the requests may have gone in the first flight
			g.earlyOnce.Do(func() { close(g.early) })
		}
	}
	return n, addr, err
}

// The long header packet types (RFC 9000 section 17.2), and short for a
// 1-RTT packet.
const (
	kindInitial = iota
	kindZeroRTT
	kindHandshake
	kindRetry
	kindShort
)

// packetKinds is the set of packet kinds coalesced in datagram b (RFC
// 9000 section 12.2), an unreadable rest counted as short.
func packetKinds(b []byte) int {
	kinds := 0
	for len(b) > 0 {
		if b[0]&0x80 == 0 {
			return kinds | 1<<kindShort // a short header runs to the end
		}
		typ := int(b[0]>>4) & 3
		kinds |= 1 << typ
		p := 5 // flags, version
		if len(b) < p+1 {
			return kinds | 1<<kindShort
		}
		p += 1 + int(b[p]) // destination connection ID
		if len(b) < p+1 {
			return kinds | 1<<kindShort
		}
		p += 1 + int(b[p]) // source connection ID
		if typ == kindRetry {
			return kinds
		}
		if typ == kindInitial {
			tl, n := varint(b[min(p, len(b)):])
			if n == 0 {
				return kinds | 1<<kindShort
			}
			p += n + tl
		}
		l, n := varint(b[min(p, len(b)):])
		if n == 0 || p+n+l > len(b) {
			return kinds | 1<<kindShort
		}
		b = b[p+n+l:]
	}
	return kinds
}

// varint reads a QUIC variable-length integer (RFC 9000 section 16): its
// value and length, 0 when b is short.
func varint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	n := 1 << (b[0] >> 6)
	if len(b) < n {
		return 0, 0
	}
	v := int(b[0] & 0x3f)
	for _, c := range b[1:n] {
		v = v<<8 | int(c)
	}
	return v, n
}
