package doh

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/miekg/dns"
)

// UpstreamPath is the path a member's DoH requests go to [M: BIG-IP's
// doh-proxy has no path setting; RFC 8484's servers and clients use
// /dns-query].
const UpstreamPath = "/dns-query"

// upstreamIdle is how long an idle connection to a member is kept for
// the next query [M]; a commit's new service opens its own, and the old
// service's close after this.
const upstreamIdle = 60 * time.Second

// upstreamAttempts is how many members one query is sent to: the chosen
// one, and one more when it fails [M], as the plain-DNS pool queries do.
const upstreamAttempts = 2

// Upstream sends a doh-proxy virtual's queries to its members as DNS over
// HTTPS (BIG-IP's DoH-to-DoH proxy: doh-proxy with a server-ssl profile,
// toward a pool of DoH servers): a POST of application/dns-message, over
// HTTP/2 when the member's TLS handshake takes h2, else HTTP/1.1, its
// connections kept for the next queries.
type Upstream struct {
	client *http.Client
	tr     *http.Transport
	st     *Stats
	// handshake, when set, runs each member connection's TLS handshake
	// (within the server-ssl profile's bounds) and counts it; ctx is the
	// query's that dialled it (AskContext).
	handshake func(ctx context.Context, tc *tls.Conn) error
}

// NewUpstream makes the upstream of a doh-proxy virtual; cfg is its
// server-ssl profile's configuration (ALPN h2 and http/1.1 are offered on
// a copy), st the profile's counters, timeout the bound of each member's
// exchange.
func NewUpstream(cfg *tls.Config, st *Stats, timeout time.Duration) *Upstream {
	c := cfg.Clone()
	c.NextProtos = []string{"h2", "http/1.1"}
	tr := &http.Transport{
		TLSClientConfig:     c,
		ForceAttemptHTTP2:   true,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     upstreamIdle,
		TLSHandshakeTimeout: timeout,
		DialContext:         (&net.Dialer{Timeout: timeout}).DialContext,
		DisableCompression:  true,
	}
	u := &Upstream{client: &http.Client{Transport: tr, Timeout: timeout}, tr: tr, st: st}
	d := &net.Dialer{Timeout: timeout}
	// The member's TLS is dialled here rather than by net/http so that
	// its handshake is the profile's (counted, bounded, logged); a
	// *tls.Conn that agreed h2 still gets HTTP/2 from the transport.
	tr.DialTLSContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		tc := tls.Client(raw, c)
		raw.SetDeadline(time.Now().Add(timeout))
		if u.handshake != nil {
			err = u.handshake(ctx, tc)
		} else {
			err = tc.HandshakeContext(ctx)
		}
		if err != nil {
			raw.Close()
			return nil, err
		}
		raw.SetDeadline(time.Time{})
		return tc, nil
	}
	return u
}

// Close drops the idle connections to the members.
func (u *Upstream) Close() { u.tr.CloseIdleConnections() }

// errMember is a member's answer that is not a DNS answer to the query.
var errMember = errors.New("the member's answer is not a DNS answer")

// Exchange sends wire (q) to the DoH server at dst and reads its answer.
// An error is a failed member: no connection, no TLS handshake, a status
// other than 200, or a body that is not the DNS answer to q.
func (u *Upstream) Exchange(ctx context.Context, dst netip.AddrPort, q *dns.Msg, wire []byte) (*dns.Msg, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+dst.String()+UpstreamPath, bytes.NewReader(wire))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", ContentType)
	req.Header.Set("Accept", ContentType)
	res, err := u.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(res.Body, 4096)) // the connection is kept
		return nil, fmt.Errorf("the member answered %s", res.Status)
	}
	if mt, _, err := mime.ParseMediaType(res.Header.Get("Content-Type")); err != nil || mt != ContentType {
		return nil, errMember
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, maxQuery+1))
	if err != nil {
		return nil, err
	}
	m := new(dns.Msg)
	if len(b) > maxQuery || m.Unpack(b) != nil || !m.Response || m.Id != q.Id || len(m.Question) != len(q.Question) {
		return nil, errMember
	}
	return m, nil
}

// Member is one member a query may go to, as the pool chose it.
type Member struct {
	// Addr is where its DoH server listens (translated as the virtual
	// says).
	Addr netip.AddrPort
	// Done is told whether it answered (its counters), nil for none.
	Done func(answered bool, in, out int)
}

// Ask sends wire (q) to the member next chooses, and to one more when it
// fails; next is given the members that failed and says false when the
// pool has none left. The status is 200 with the answer, 503 when no
// member could be chosen, 502 when the members chosen all failed.
func (u *Upstream) Ask(q *dns.Msg, wire []byte, next func(failed int) (Member, bool)) (*dns.Msg, int) {
	return u.AskContext(context.Background(), q, wire, next)
}

// AskContext is Ask whose member connections are dialled under ctx (its
// values reach the handshake hook: the virtual the query came to).
func (u *Upstream) AskContext(ctx context.Context, q *dns.Msg, wire []byte, next func(failed int) (Member, bool)) (*dns.Msg, int) {
	status := http.StatusServiceUnavailable
	for attempt := 0; attempt < upstreamAttempts; attempt++ {
		mem, ok := next(attempt)
		if !ok {
			break
		}
		u.st.MemberRequests.Add(1)
		m, err := u.Exchange(ctx, mem.Addr, q, wire)
		if mem.Done != nil {
			in := 0
			if m != nil {
				in = m.Len()
			}
			mem.Done(err == nil, in, len(wire))
		}
		if err == nil {
			return m, http.StatusOK
		}
		u.st.MemberFailures.Add(1)
		status = http.StatusBadGateway
	}
	return nil, status
}
