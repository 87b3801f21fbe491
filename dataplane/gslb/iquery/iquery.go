// Package iquery is the channel between ltmd instances that BIG-IP's
// iQuery is between a GTM and the BIG-IPs it balances over: an ltmd
// serving GSLB subscribes to the ltmd of each datacenter and receives its
// virtual servers, their availability and their traffic as a stream.
//
// Both ends are mutually authenticated over TLS 1.3 with certificates
// each device makes for itself (NewIdentity) and the other has been told
// to trust (Trust.Add), as F5's bigip_add exchanges device certificates:
// no certificate authority is involved, a peer is trusted by its
// certificate's SHA-256 fingerprint. A peer presenting any other
// certificate is refused during the handshake and logged.
//
// The stream is newline-delimited JSON: each Report is the publisher's
// whole state (virtual servers with status and counters), sent when a
// subscriber connects and whenever the publisher publishes; a subscriber
// whose connection breaks reports the peer down and dials again.
package iquery

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"
)

// Identity is a device's key and self-signed certificate: what it shows
// to its peers.
type Identity struct {
	Name string
	cert tls.Certificate
}

// NewIdentity makes a key pair and a certificate for the device name,
// valid for ten years (as BIG-IP's device certificates are long-lived).
func NewIdentity(name string) (*Identity, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().AddDate(10, 0, 0),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, err
	}
	return &Identity{Name: name, cert: tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}}, nil
}

// CertPEM is the certificate to hand to peers (the exchange).
func (id *Identity) CertPEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: id.cert.Certificate[0]})
}

// Fingerprint is the certificate's SHA-256, as `show` lists trusted
// devices.
func (id *Identity) Fingerprint() string { return fingerprint(id.cert.Certificate[0]) }

func fingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// Trust is the set of peer certificates a device accepts. It is safe for
// concurrent use; changes apply to the next handshake.
type Trust struct {
	mu    sync.RWMutex
	certs map[string]string // fingerprint -> device name (the certificate's CN)
	// logged is when each refusal (peer and reason) was last logged: a
	// peer retrying every second is logged once a minute.
	logMu  sync.Mutex
	logged map[string]time.Time
}

// refused logs a refused peer, once a minute per peer and reason.
func (t *Trust) refused(log *slog.Logger, peer string, err error) {
	host := peer
	if ap, perr := netip.ParseAddrPort(peer); perr == nil {
		host = ap.Addr().String() // a subscriber dials from a new port each time
	}
	key := host + " " + err.Error()
	now := time.Now()
	t.logMu.Lock()
	if t.logged == nil {
		t.logged = map[string]time.Time{}
	}
	last, seen := t.logged[key]
	if !seen || now.Sub(last) >= time.Minute {
		t.logged[key] = now
	}
	if len(t.logged) > 1024 {
		for k, at := range t.logged {
			if now.Sub(at) >= time.Minute {
				delete(t.logged, k)
			}
		}
	}
	t.logMu.Unlock()
	if !seen || now.Sub(last) >= time.Minute {
		log.Warn("iquery: refused a peer", "peer", peer, "error", err)
	}
}

// NewTrust returns an empty trust set.
func NewTrust() *Trust { return &Trust{certs: map[string]string{}} }

// Add trusts the certificate in PEM form and returns its device name.
func (t *Trust) Add(certPEM []byte) (string, error) {
	b, _ := pem.Decode(certPEM)
	if b == nil || b.Type != "CERTIFICATE" {
		return "", errors.New("iquery: not a PEM certificate")
	}
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		return "", fmt.Errorf("iquery: %w", err)
	}
	t.mu.Lock()
	t.certs[fingerprint(b.Bytes)] = c.Subject.CommonName
	t.mu.Unlock()
	return c.Subject.CommonName, nil
}

// Remove stops trusting a certificate by fingerprint.
func (t *Trust) Remove(fp string) {
	t.mu.Lock()
	delete(t.certs, fp)
	t.mu.Unlock()
}

// verify accepts exactly a trusted certificate.
func (t *Trust) verify(raw [][]byte) (string, error) {
	if len(raw) == 0 {
		return "", errors.New("no certificate")
	}
	fp := fingerprint(raw[0])
	t.mu.RLock()
	name, ok := t.certs[fp]
	t.mu.RUnlock()
	if !ok {
		cn := "?"
		if c, err := x509.ParseCertificate(raw[0]); err == nil {
			cn = c.Subject.CommonName
		}
		return "", fmt.Errorf("certificate of %q (sha256 %s) is not trusted", cn, fp)
	}
	return name, nil
}

// stillTrusted checks an open stream's peer against the trust set as it
// is now: a certificate removed since the handshake ends the stream, and
// is logged like a refused handshake.
func (t *Trust) stillTrusted(c *tls.Conn, log *slog.Logger, peer string) bool {
	pcs := c.ConnectionState().PeerCertificates
	if len(pcs) == 0 {
		return false
	}
	if _, err := t.verify([][]byte{pcs[0].Raw}); err != nil {
		t.refused(log, peer, err)
		return false
	}
	return true
}

func (t *Trust) tlsConfig(id *Identity, log *slog.Logger, peer string, pol *TLSPolicy) *tls.Config {
	c := &tls.Config{
		Certificates: []tls.Certificate{id.cert},
		ClientAuth:   tls.RequireAnyClientCert,
		// Trust is by pinned certificate, not by a CA: the standard chain
		// check is replaced by the fingerprint check below.
		InsecureSkipVerify: true,
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if _, err := t.verify(raw); err != nil {
				t.refused(log, peer, err)
				return err
			}
			return nil
		},
	}
	pol.apply(c)
	return c
}

// VirtualServer is one virtual server as the publishing ltmd reports it.
type VirtualServer struct {
	Name        string         `json:"name"`
	Destination netip.AddrPort `json:"destination"`
	// Available is false when the LTM side has it down or disabled.
	Available bool `json:"available"`
	// Status is "up", "down" or "unknown" (no monitor result yet: the
	// GSLB decides as for a virtual server nothing reported on).
	Status      string `json:"status,omitempty"`
	Connections int64  `json:"connections"`
	BitsIn      int64  `json:"bits_in"`
	BitsOut     int64  `json:"bits_out"`
	// Packets is packets per second, in and out.
	Packets int64 `json:"packets,omitempty"`
}

// Report is a publisher's whole state at one time.
type Report struct {
	Device         string          `json:"device"`
	Seq            uint64          `json:"seq"`
	Time           time.Time       `json:"time"`
	VirtualServers []VirtualServer `json:"virtual_servers"`
	// Links are the publisher's links with the throughput of the virtual
	// servers reached over them (link discovery).
	Links []Link `json:"links,omitempty"`
	// Sources are the addresses the publisher probes LDNSes from when a
	// GSLB asks (its self IPs and its links' uplink addresses).
	Sources []netip.Addr `json:"sources,omitempty"`
	// Host is the publisher's own load, for a gtm server's resource
	// limits (big3d reports the same of a BIG-IP); nil from a publisher
	// that does not know it.
	Host *Host `json:"host,omitempty"`
	// Via is the address the subscriber's stream reached the peer at,
	// one of those it follows the peer at; set by the subscriber, not
	// sent.
	Via string `json:"-"`
}

// Host is a publisher's load at the time of its report. A figure below 0
// is unknown (the first report, before a second reading gives a rate).
type Host struct {
	// CPUUsage is the percent of the host's processors busy over the
	// last interval.
	CPUUsage int64 `json:"cpu_usage"`
	// MemAvail is the host's available memory, kilobytes.
	MemAvail int64 `json:"mem_avail"`
	// Bps and Pps are the traffic of its virtual servers together, bits
	// and packets per second, in and out.
	Bps int64 `json:"bps"`
	Pps int64 `json:"pps"`
}

// message is one line of a stream from a publisher: a report or the
// result of a probe the subscriber asked for.
type message struct {
	Report *Report      `json:"report,omitempty"`
	Probe  *ProbeResult `json:"probe,omitempty"`
}

// ProbeRequest asks a datacenter's ltmd to measure the round-trip time
// to an LDNS from one of its addresses (a line from subscriber to
// publisher).
type ProbeRequest struct {
	ID        uint64     `json:"id"`
	Src       netip.Addr `json:"src"`
	LDNS      netip.Addr `json:"ldns"`
	Port      uint16     `json:"port"`
	TimeoutMS int64      `json:"timeout_ms"`
	Protocols []string   `json:"protocols"`
	// Monitor, when set, makes the request a monitor probe of a virtual
	// server instead of an RTT probe: the GSLB chose this device as the
	// server's prober (prober-preference, prober-pool), as BIG-IP DNS has
	// a chosen BIG-IP's big3d probe. Src is then the address the probe
	// leaves from, when it is one of the device's.
	Monitor *MonitorCheck `json:"monitor,omitempty"`
}

// MonitorCheck is one probe of a monitor at a destination, in the terms
// of the monitor (its type, send and receive strings), not a program: a
// device runs only the plain kinds (tcp, tcp-half-open, http, https,
// udp, gateway-icmp): see monitor.go.
type MonitorCheck struct {
	Name        string         `json:"name"`
	Type        string         `json:"type"`
	Dest        netip.AddrPort `json:"dest"`
	Send        string         `json:"send,omitempty"`
	Recv        string         `json:"recv,omitempty"`
	RecvDisable string         `json:"recv_disable,omitempty"`
	Reverse     bool           `json:"reverse,omitempty"`
}

// ProbeResult is the answer to a ProbeRequest.
type ProbeResult struct {
	ID        uint64 `json:"id"`
	RTTMicros int64  `json:"rtt_us"`
	Protocol  string `json:"protocol,omitempty"`
	Error     string `json:"error,omitempty"`
	// Up is a monitor probe's verdict (Error says why not).
	Up bool `json:"up,omitempty"`
}

// maxProbes bounds the probes one stream runs at once.
const maxProbes = 64

// Link is one link as the publishing ltmd reports it.
type Link struct {
	Name            string       `json:"name"`
	RouterAddresses []netip.Addr `json:"router_addresses,omitempty"`
	InBps           int64        `json:"in_bps"`
	OutBps          int64        `json:"out_bps"`
}

// Keepalive is how often a publisher sends its state again when nothing
// changed, so a subscriber tells a quiet peer from a hung one; Stale is
// how long a subscriber waits for a report before it takes the stream
// for broken.
var (
	Keepalive = 2 * time.Second
	Stale     = 3*Keepalive + time.Second
)

// Publisher serves an ltmd's reports to the subscribers it trusts.
type Publisher struct {
	id    *Identity
	trust *Trust
	log   *slog.Logger
	ln    net.Listener

	mu     sync.Mutex
	last   Report
	prober func(ProbeRequest) ProbeResult
	subs   map[chan Report]bool
	closed bool
	wg     sync.WaitGroup
	// pol is the TLS its next handshakes allow; conns are its open
	// streams, so that a stricter policy ends those it no longer allows.
	pol   *TLSPolicy
	conns map[*tls.Conn]net.Conn
}

// Listen starts a publisher on addr ("127.0.0.1:4353"; port 0 picks one).
func Listen(addr string, id *Identity, trust *Trust, log *slog.Logger) (*Publisher, error) {
	if log == nil {
		log = slog.Default()
	}
	p := &Publisher{id: id, trust: trust, log: log, subs: map[chan Report]bool{}, conns: map[*tls.Conn]net.Conn{}}
	p.last = Report{Device: id.Name, Time: time.Now()}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is where the publisher listens.
func (p *Publisher) Addr() net.Addr { return p.ln.Addr() }

// Publish sends the virtual servers' state to every subscriber.
func (p *Publisher) Publish(vss []VirtualServer) { p.PublishLinks(vss, nil) }

// PublishLinks sends the virtual servers' and the links' state.
func (p *Publisher) PublishLinks(vss []VirtualServer, links []Link) {
	p.PublishReport(Report{VirtualServers: vss, Links: links})
}

// PublishReport sends a whole report; Device, Seq and Time are filled in.
func (p *Publisher) PublishReport(r Report) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.Device, r.Seq, r.Time = p.id.Name, p.last.Seq+1, time.Now()
	r.VirtualServers = append([]VirtualServer(nil), r.VirtualServers...)
	r.Links = append([]Link(nil), r.Links...)
	r.Sources = append([]netip.Addr(nil), r.Sources...)
	p.last = r
	for ch := range p.subs {
		select {
		case <-ch: // a slow subscriber gets the newest state only
		default:
		}
		ch <- p.last
	}
}

// Close stops listening and ends every subscription.
func (p *Publisher) Close() error {
	p.mu.Lock()
	p.closed = true
	for ch := range p.subs {
		close(ch)
		delete(p.subs, ch)
	}
	p.mu.Unlock()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Publisher) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			p.serve(c)
		}()
	}
}

func (p *Publisher) serve(raw net.Conn) {
	defer raw.Close()
	p.mu.Lock()
	pol := p.pol
	p.mu.Unlock()
	c := tls.Server(raw, p.trust.tlsConfig(p.id, p.log, raw.RemoteAddr().String(), pol))
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if err := c.Handshake(); err != nil {
		p.refusedTLS(raw, err)
		return
	}
	c.SetDeadline(time.Time{})
	ch := make(chan Report, 1)
	p.mu.Lock()
	if p.closed || !p.pol.allows(c.ConnectionState()) {
		p.mu.Unlock()
		return // closed, or the policy changed during the handshake
	}
	ch <- p.last
	p.subs[ch] = true
	p.conns[c] = raw
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.subs[ch] {
			delete(p.subs, ch)
		}
		delete(p.conns, c)
		p.mu.Unlock()
	}()
	// A subscriber sends probe requests; its reads end when it goes away.
	gone := make(chan struct{})
	results := make(chan ProbeResult, maxProbes)
	go p.readRequests(c, results, gone)
	enc := json.NewEncoder(c)
	keep := time.NewTicker(Keepalive)
	defer keep.Stop()
	for {
		var m message
		select {
		case x, ok := <-ch:
			if !ok {
				return
			}
			m.Report = &x
		case <-keep.C:
			p.mu.Lock()
			r := p.last
			p.mu.Unlock()
			m.Report = &r
		case res := <-results:
			m.Probe = &res
		case <-gone:
			return
		}
		if !p.trust.stillTrusted(c, p.log, raw.RemoteAddr().String()) {
			return
		}
		c.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if err := enc.Encode(m); err != nil {
			return
		}
	}
}

// readRequests runs the subscriber's probe requests (at most maxProbes at
// once; a request beyond gets an error at once) until it goes away.
func (p *Publisher) readRequests(c *tls.Conn, results chan ProbeResult, gone chan struct{}) {
	defer close(gone)
	dec := json.NewDecoder(bufio.NewReader(c))
	sem := make(chan struct{}, maxProbes)
	for {
		var req ProbeRequest
		if err := dec.Decode(&req); err != nil {
			return
		}
		p.mu.Lock()
		pr := p.prober
		p.mu.Unlock()
		select {
		case sem <- struct{}{}:
		default:
			results <- ProbeResult{ID: req.ID, Error: "too many probes in flight"}
			continue
		}
		go func() {
			defer func() { <-sem }()
			res := ProbeResult{ID: req.ID, Error: "this device does not probe"}
			if pr != nil {
				res = pr(req)
				res.ID = req.ID
			}
			select {
			case results <- res:
			case <-gone:
			}
		}()
	}
}

// refusedTLS logs a handshake that failed for its protocol version or
// cipher suite (an untrusted certificate was logged by the verification),
// once a minute per peer, so a channel kept down by iquery-cipher-list or
// iquery-minimum-tls-version says why.
func (p *Publisher) refusedTLS(raw net.Conn, err error) {
	if msg := err.Error(); strings.Contains(msg, "cipher") || strings.Contains(msg, "version") {
		p.trust.refused(p.log, raw.RemoteAddr().String(), err)
	}
}

// SetTLS sets the protocol versions and cipher suites the publisher's
// handshakes allow (nil: TLS 1.3 only); the open streams the new policy
// does not allow are ended, and their subscribers dial again under it.
func (p *Publisher) SetTLS(pol *TLSPolicy) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.pol.Equal(pol) {
		return
	}
	p.pol = pol
	for c, raw := range p.conns {
		if !pol.allows(c.ConnectionState()) {
			raw.Close()
		}
	}
}

// SetProber makes the publisher answer its subscribers' RTT probe
// requests with fn (nil: it refuses them).
func (p *Publisher) SetProber(fn func(ProbeRequest) ProbeResult) {
	p.mu.Lock()
	p.prober = fn
	p.mu.Unlock()
}

// Events is what a Subscriber tells its user.
type Events struct {
	// Report is a peer's newest state.
	Report func(peer string, r Report)
	// Down is called when a peer's stream breaks or cannot be opened
	// (once per outage); its virtual servers are then unknown.
	Down func(peer string, err error)
}

// Subscriber keeps streams open to publishers.
type Subscriber struct {
	id     *Identity
	trust  *Trust
	log    *slog.Logger
	ev     Events
	retry  time.Duration
	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	peers map[string]*peer
}

// peer is one followed publisher.
type peer struct {
	cancel context.CancelFunc
	state  PeerState
	// conn is the open stream (nil between streams); wmu serialises
	// probe requests on it; pending are the requests waiting for results.
	conn    *tls.Conn
	wmu     sync.Mutex
	nextID  uint64
	pending map[uint64]chan ProbeResult
	// pol is the TLS its next handshake allows (FollowTLS).
	pol *TLSPolicy
}

// PeerState is what a subscriber knows of one publisher, for shows.
type PeerState struct {
	Addr string // the name it is followed by (FollowAddrs's key)
	// Addrs are the addresses it is reached at, tried in order; Via is
	// the one of the open stream, or the last tried while none is open.
	Addrs      []string
	Via        string
	Device     string // from its last report
	Connected  bool
	LastReport time.Time
	LastError  string
	// TLS is the open stream's protocol version and cipher suite
	// as BIG-IP names them (TLSv1.2 ECDHE-ECDSA-AES128-GCM-SHA256), ""
	// while none is open.
	TLS string
}

// NewSubscriber returns a subscriber that dials again retry after a
// stream breaks (0 means one second).
func NewSubscriber(id *Identity, trust *Trust, ev Events, retry time.Duration, log *slog.Logger) *Subscriber {
	if log == nil {
		log = slog.Default()
	}
	if retry <= 0 {
		retry = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Subscriber{id: id, trust: trust, log: log, ev: ev, retry: retry, ctx: ctx, cancel: cancel, peers: map[string]*peer{}}
}

// Follow keeps a stream open to the publisher at addr until Unfollow or
// Close; following an address twice is following it once.
func (s *Subscriber) Follow(addr string) { s.FollowAddrs(addr, []string{addr}) }

// FollowAddrs keeps a stream open to the publisher named key, reached at
// any of addrs, as BIG-IP's gtmd reaches a server at any of its
// addresses: each round tries the addresses in order until one streams,
// so a dead first address does not keep the peer away. Events name the
// peer by key; a report's Via says which address it came over. Following
// a key twice is following it once (with its first addresses).
func (s *Subscriber) FollowAddrs(key string, addrs []string) { s.follow(key, addrs, nil, false) }

// FollowTLS is FollowAddrs with the TLS the handshakes with that peer
// allow (nil: TLS 1.3 only), a gtm server's iquery-minimum-tls-version
// and iquery-cipher-list. For a peer already followed it sets the policy
// of the next handshake, and ends the open stream if the new policy does
// not allow its version or suite (the peer is then dialled again).
func (s *Subscriber) FollowTLS(key string, addrs []string, pol *TLSPolicy) {
	s.follow(key, addrs, pol, true)
}

func (s *Subscriber) follow(key string, addrs []string, pol *TLSPolicy, setPol bool) {
	if len(addrs) == 0 {
		return
	}
	addrs = append([]string(nil), addrs...)
	s.mu.Lock()
	if p := s.peers[key]; p != nil || s.ctx.Err() != nil {
		if p != nil && setPol && !p.pol.Equal(pol) {
			p.pol = pol
			if p.conn != nil && !pol.allows(p.conn.ConnectionState()) {
				p.conn.NetConn().Close() // not tls's Close: no close_notify under s.mu
			}
		}
		s.mu.Unlock()
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.peers[key] = &peer{cancel: cancel, state: PeerState{Addr: key, Addrs: addrs}, pol: pol}
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		first := true // the first failure is reported, then one per outage
		for ctx.Err() == nil {
			// One round: the addresses in order, until one streams.
			var connected bool
			var err error
			var errs []string
			for _, addr := range addrs {
				s.note(key, func(st *PeerState) { st.Via = addr })
				connected, err = s.stream(ctx, key, addr)
				if connected || ctx.Err() != nil {
					break
				}
				if err != nil && len(addrs) > 1 {
					errs = append(errs, err.Error())
				}
			}
			if ctx.Err() != nil {
				return
			}
			if !connected && len(errs) > 1 {
				err = errors.New(strings.Join(errs, "; "))
			}
			s.note(key, func(st *PeerState) {
				st.Connected = false
				if err != nil {
					st.LastError = err.Error()
				}
			})
			if (first || connected) && s.ev.Down != nil {
				s.ev.Down(key, err)
			}
			first = false
			select {
			case <-ctx.Done():
				return
			case <-time.After(s.retry):
			}
		}
	}()
}

// Unfollow closes the stream to addr; no event is reported for it after.
func (s *Subscriber) Unfollow(addr string) {
	s.mu.Lock()
	p := s.peers[addr]
	delete(s.peers, addr)
	s.mu.Unlock()
	if p != nil {
		p.cancel()
	}
}

// Peers lists the publishers followed, by address.
func (s *Subscriber) Peers() []PeerState {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]PeerState, 0, len(s.peers))
	for _, p := range s.peers {
		out = append(out, p.state)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Addr < out[j].Addr })
	return out
}

func (s *Subscriber) note(addr string, f func(*PeerState)) {
	s.mu.Lock()
	if p := s.peers[addr]; p != nil {
		f(&p.state)
	}
	s.mu.Unlock()
}

// stream reads one connection's reports from the peer key at addr until
// it breaks, or until no report came for Stale; connected says whether it
// got any.
func (s *Subscriber) stream(ctx context.Context, key, addr string) (connected bool, err error) {
	var pol *TLSPolicy
	s.mu.Lock()
	if p := s.peers[key]; p != nil {
		pol = p.pol
	}
	s.mu.Unlock()
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 5 * time.Second}, Config: s.trust.tlsConfig(s.id, s.log, addr, pol)}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return false, err
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	tc, _ := c.(*tls.Conn)
	s.mu.Lock()
	if p := s.peers[key]; p != nil {
		if !p.pol.allows(tc.ConnectionState()) {
			s.mu.Unlock()
			return false, errors.New("the TLS policy changed during the handshake")
		}
		p.conn = tc
		p.state.TLS = tlsWords(tc.ConnectionState())
	}
	s.mu.Unlock()
	defer s.dropConn(key)
	dec := json.NewDecoder(bufio.NewReader(c))
	for {
		var m message
		c.SetReadDeadline(time.Now().Add(Stale))
		if err := dec.Decode(&m); err != nil {
			return connected, err
		}
		if m.Probe != nil {
			s.deliver(key, *m.Probe)
			continue
		}
		if m.Report == nil {
			continue
		}
		r := *m.Report
		r.Via = addr
		if tc != nil && !s.trust.stillTrusted(tc, s.log, addr) {
			return connected, errors.New("the peer's certificate is no longer trusted")
		}
		connected = true
		s.note(key, func(st *PeerState) {
			st.Connected, st.Via, st.Device, st.LastReport, st.LastError = true, addr, r.Device, r.Time, ""
		})
		if ctx.Err() != nil {
			return connected, ctx.Err()
		}
		if s.ev.Report != nil {
			s.ev.Report(key, r)
		}
	}
}

// Close ends every stream and waits for them.
func (s *Subscriber) Close() {
	s.cancel()
	s.wg.Wait()
}

// dropConn forgets a peer's stream and fails the probes waiting on it.
func (s *Subscriber) dropConn(addr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peers[addr]
	if p == nil {
		return
	}
	p.conn = nil
	p.state.TLS = ""
	for id, ch := range p.pending {
		ch <- ProbeResult{ID: id, Error: "the stream to the peer broke"}
		delete(p.pending, id)
	}
}

func (s *Subscriber) deliver(addr string, r ProbeResult) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.peers[addr]; p != nil {
		if ch := p.pending[r.ID]; ch != nil {
			ch <- r
			delete(p.pending, r.ID)
		}
	}
}

// Probe asks the publisher at addr to measure an LDNS from one of its
// addresses and waits for the result (or ctx).
func (s *Subscriber) Probe(ctx context.Context, addr string, req ProbeRequest) (ProbeResult, error) {
	s.mu.Lock()
	p := s.peers[addr]
	if p == nil || p.conn == nil {
		s.mu.Unlock()
		return ProbeResult{}, errors.New("iquery: no stream to " + addr)
	}
	p.nextID++
	req.ID = p.nextID
	ch := make(chan ProbeResult, 1)
	if p.pending == nil {
		p.pending = map[uint64]chan ProbeResult{}
	}
	p.pending[req.ID] = ch
	conn := p.conn
	s.mu.Unlock()
	forget := func() {
		s.mu.Lock()
		delete(p.pending, req.ID)
		s.mu.Unlock()
	}
	b, err := json.Marshal(req)
	if err != nil {
		forget()
		return ProbeResult{}, err
	}
	p.wmu.Lock()
	conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	_, err = conn.Write(append(b, '\n'))
	p.wmu.Unlock()
	if err != nil {
		forget()
		return ProbeResult{}, err
	}
	select {
	case r := <-ch:
		if r.Error != "" {
			return r, errors.New(r.Error)
		}
		return r, nil
	case <-ctx.Done():
		forget()
		return ProbeResult{}, ctx.Err()
	}
}
