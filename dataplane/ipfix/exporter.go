package ipfix

import (
	"context"
	"crypto/tls"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// Options configure an Exporter: one `sys log-config destination ipfix`.
type Options struct {
	// Pool is the ltm pool of collectors (pool-name), and Members and
	// Pick read it as high-speed logging does: Pick is the member the
	// pool's method chooses now (nil or failing: round robin over
	// Members).
	Pool    string
	Members func(pool string) ([]netip.AddrPort, error)
	Pick    func(pool string) (netip.AddrPort, bool)
	// Version is protocol-version.
	Version Version
	// TCP: the transport-profile is a tcp profile; else UDP.
	TCP bool
	// TLS, with TCP, is the serverssl-profile's client side: each
	// collector's connection is a TLS session over TCP, so that flow
	// records cross untrusted networks unread (RFC 7011 section 11).
	// nil sends in the clear.
	TLS *tls.Config
	// TLSID names what TLS does (the server-ssl profile's settings), so
	// that the destinations sharing an exporter are told apart.
	TLSID string
	// Retransmit is template-retransmit-interval: on UDP, each
	// collector is sent every template it knows again this often (0:
	// only when first used).
	Retransmit time.Duration
	// DeleteDelay is template-delete-delay: how long a deleted template
	// is kept (and, over TCP in IPFIX, then withdrawn).
	DeleteDelay time.Duration
	// Domain is the observation domain id (NetFlow v9's source id).
	Domain uint32
	// Queue is how many records wait before new ones are dropped (0:
	// DefaultQueue).
	Queue int
	// Logger receives unreachable collectors and drop counts.
	Logger *slog.Logger
	// Now is the clock of headers and retransmissions (nil: time.Now).
	Now func() time.Time
}

// DefaultQueue is how many records an exporter queues.
const DefaultQueue = 4096

// maxUDP bounds a message sent over UDP: it must fit in one datagram
// without fragments on an Ethernet path (RFC 7011 section 10.3.3).
const maxUDP = 1400

// maxTCP bounds a message sent over TCP.
const maxTCP = 8192

// Exporter sends one destination's records: each record is queued
// without blocking the connection that made it, and a goroutine packs the
// queued records into messages, one transport session per collector, with
// the templates each collector has not been sent yet.
type Exporter struct {
	o    Options
	q    chan item
	done chan struct{}
	wg   sync.WaitGroup
	boot time.Time

	records, messages, templates, dropped, failures atomic.Uint64
	closed                                          atomic.Bool

	// Owned by run.
	sess    map[netip.AddrPort]*session
	members []netip.AddrPort
	read    time.Time
	next    int
	msg     Message
	buf     []byte
}

// session is one collector's transport session: its connection, its
// sequence number and the templates it was sent.
type session struct {
	addr  netip.AddrPort
	conn  net.Conn
	seq   uint32
	known map[*Template]bool
	// sentAt is when every known template was last sent (UDP).
	sentAt time.Time
	// down is when a failed collector is tried again.
	down time.Time
}

type item struct {
	t *Template
	b *[]byte
}

var bufs = sync.Pool{New: func() any { b := make([]byte, 0, 256); return &b }}

// NewExporter starts an exporter; Close stops it.
func NewExporter(o Options) *Exporter {
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Version == 0 {
		o.Version = IPFIX
	}
	boot := processBoot
	if o.Now != nil {
		boot = o.Now()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	x := &Exporter{o: o, q: make(chan item, o.Queue), done: make(chan struct{}), boot: boot, sess: map[netip.AddrPort]*session{}}
	x.wg.Add(1)
	go x.run()
	return x
}

// Options are the exporter's settings, for deciding whether a new
// configuration can keep it.
func (x *Exporter) Options() Options { return x.o }

// Send queues r, encoded for the exporter's version, and says whether it
// was queued (false: the queue is full, and r is dropped and counted).
func (x *Exporter) Send(r *Record) bool {
	if r == nil || r.t == nil || x.closed.Load() {
		return false
	}
	bp := bufs.Get().(*[]byte)
	if x.o.Version == NetFlowV9 || x.o.Version == NetFlowV5 {
		*bp = r.AppendV9((*bp)[:0])
	} else {
		*bp = r.AppendIPFIX((*bp)[:0])
	}
	select {
	case x.q <- item{t: r.t, b: bp}:
		return true
	default:
		bufs.Put(bp)
		x.dropped.Add(1)
		return false
	}
}

// Stats are an exporter's counters.
type Stats struct {
	Pool    string
	Version Version
	TCP     bool
	// TLS: the TCP connections are TLS sessions (serverssl-profile).
	TLS bool
	// Records were sent in Messages; Templates counts template records
	// sent (first sends and retransmissions).
	Records, Messages, Templates uint64
	// Dropped records found a full queue or no collector; Failures are
	// failed connects and writes.
	Dropped, Failures uint64
}

// Stats returns the counters.
func (x *Exporter) Stats() Stats {
	return Stats{Pool: x.o.Pool, Version: x.o.Version, TCP: x.o.TCP, TLS: x.o.TCP && x.o.TLS != nil,
		Records: x.records.Load(), Messages: x.messages.Load(), Templates: x.templates.Load(),
		Dropped: x.dropped.Load(), Failures: x.failures.Load()}
}

// ResetStats zeroes the counters (reset-stats sys ipfix destination).
func (x *Exporter) ResetStats() {
	for _, c := range []*atomic.Uint64{&x.records, &x.messages, &x.templates, &x.dropped, &x.failures} {
		c.Store(0)
	}
}

// Close stops the exporter; queued records are dropped.
func (x *Exporter) Close() {
	if x.closed.Swap(true) {
		return
	}
	close(x.done)
	x.wg.Wait()
}

// Closed reports whether Close was called: a destination holding a
// closed exporter asks for the running one again.
func (x *Exporter) Closed() bool { return x.closed.Load() }

// processBoot is the system's "boot" for sysUptime (NetFlow v5 and v9
// headers, v5 records' first and last times): when this process
// started, so that every exporter and every record count from one
// instant.
var processBoot = time.Now()

// SysUptime is t in milliseconds since processBoot, as NetFlow's
// sysUptime fields write it.
func SysUptime(t time.Time) uint32 { return uint32(t.Sub(processBoot).Milliseconds()) }

// tickEvery is how often the exporter looks at retransmissions and
// deleted templates.
const tickEvery = 250 * time.Millisecond

func (x *Exporter) run() {
	defer x.wg.Done()
	defer func() {
		for _, s := range x.sess {
			if s.conn != nil {
				s.conn.Close()
			}
		}
	}()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	batch := make([]item, 0, 64)
	for {
		select {
		case <-x.done:
			return
		case <-tick.C:
			x.maintain()
		case it := <-x.q:
			batch = append(batch[:0], it)
		drain:
			for len(batch) < cap(batch) {
				select {
				case it := <-x.q:
					batch = append(batch, it)
				default:
					break drain
				}
			}
			x.flush(batch)
			for i := range batch {
				bufs.Put(batch[i].b)
				batch[i] = item{}
			}
		}
	}
}

// refresh reads the pool's members at most every half second, and ends
// the sessions of members it no longer offers.
func (x *Exporter) refresh(now time.Time) {
	if x.members != nil && now.Sub(x.read) < 500*time.Millisecond {
		return
	}
	ms, err := x.o.Members(x.o.Pool)
	if err != nil {
		ms = nil
	}
	x.members, x.read = ms, now
	for a, s := range x.sess {
		keep := false
		for _, m := range ms {
			keep = keep || m == a
		}
		if !keep {
			if s.conn != nil {
				s.conn.Close()
			}
			delete(x.sess, a)
		}
	}
}

// pick is the collector the batch goes to: the pool method's choice,
// else the next in turn that is not down.
func (x *Exporter) pick(now time.Time, tried map[netip.AddrPort]bool) *session {
	if x.o.Pick != nil && len(tried) == 0 {
		if m, ok := x.o.Pick(x.o.Pool); ok {
			if s := x.session(m); now.After(s.down) {
				return s
			}
		}
	}
	n := len(x.members)
	for i := 0; i < n; i++ {
		m := x.members[(x.next+i)%n]
		if tried[m] {
			continue
		}
		if s := x.session(m); now.After(s.down) {
			x.next = (x.next + i + 1) % n
			return s
		}
	}
	return nil
}

func (x *Exporter) session(m netip.AddrPort) *session {
	s := x.sess[m]
	if s == nil {
		s = &session{addr: m, known: map[*Template]bool{}}
		x.sess[m] = s
	}
	return s
}

// flush sends a batch to one collector, another when that one fails.
func (x *Exporter) flush(batch []item) {
	now := x.o.Now()
	x.refresh(now)
	var tried map[netip.AddrPort]bool
	for range 4 {
		s := x.pick(now, tried)
		if s == nil {
			break
		}
		if x.sendBatch(now, s, batch) {
			x.records.Add(uint64(len(batch)))
			return
		}
		if tried == nil {
			tried = map[netip.AddrPort]bool{}
		}
		tried[s.addr] = true
	}
	x.dropped.Add(uint64(len(batch)))
}

func (x *Exporter) limit() int {
	if x.o.TCP {
		return maxTCP
	}
	return maxUDP
}

// sendBatch writes the batch to s in as many messages as it takes, each
// with the templates s does not know yet before their records.
func (x *Exporter) sendBatch(now time.Time, s *session, batch []item) bool {
	if !x.connect(s) {
		return false
	}
	x.msg.Begin(x.o.Version, x.buf)
	if !x.o.TCP && x.o.Retransmit > 0 && len(s.known) > 0 && now.Sub(s.sentAt) >= x.o.Retransmit {
		if !x.sendTemplates(now, s) {
			return false
		}
		x.msg.Begin(x.o.Version, x.buf)
	}
	for i := range batch {
		it := &batch[i]
		need := len(*it.b) + 8
		v5 := x.o.Version == NetFlowV5
		if !s.known[it.t] && !v5 {
			need += 4 + 8*len(it.t.Fields)
		}
		if x.msg.DataRecords() > 0 && (x.msg.Len()+need > x.limit() || v5 && x.msg.DataRecords() >= MaxV5Records) {
			if !x.write(now, s) {
				return false
			}
			x.msg.Begin(x.o.Version, x.buf)
		}
		if !s.known[it.t] && !v5 {
			x.msg.Template(it.t)
			x.templates.Add(1)
			if len(s.known) == 0 {
				s.sentAt = now
			}
			s.known[it.t] = true
		}
		x.msg.Data(it.t, *it.b)
	}
	return x.write(now, s)
}

// sendTemplates sends every template s knows, in messages of templates
// alone, and notes when.
func (x *Exporter) sendTemplates(now time.Time, s *session) bool {
	ts := make([]*Template, 0, len(s.known))
	for t := range s.known {
		ts = append(ts, t)
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].ID < ts[j].ID })
	x.msg.Begin(x.o.Version, x.buf)
	for _, t := range ts {
		if x.msg.Len() > x.o.Version.HeaderLen() && x.msg.Len()+4+8*len(t.Fields) > x.limit() {
			if !x.write(now, s) {
				return false
			}
			x.msg.Begin(x.o.Version, x.buf)
		}
		x.msg.Template(t)
		x.templates.Add(1)
	}
	s.sentAt = now
	return x.write(now, s)
}

// write finishes the message in hand and sends it to s, advancing its
// sequence number: by the data records (IPFIX) or by one (v9).
func (x *Exporter) write(now time.Time, s *session) bool {
	h := Header{ExportTime: uint32(now.Unix()), Sequence: s.seq, Domain: x.o.Domain,
		Uptime: uint32(now.Sub(x.boot).Milliseconds())}
	n := x.msg.DataRecords()
	b := x.msg.Finish(h)
	x.buf = b[:0]
	s.conn.SetWriteDeadline(now.Add(2 * time.Second))
	if _, err := s.conn.Write(b); err != nil {
		x.fail(s, err)
		return false
	}
	if x.o.Version == NetFlowV9 {
		s.seq++
	} else {
		s.seq += uint32(n)
	}
	x.messages.Add(1)
	return true
}

// connect opens s's connection when it has none; a new connection is a
// new transport session, which knows no templates and counts from 0.
func (x *Exporter) connect(s *session) bool {
	if s.conn != nil {
		return true
	}
	var c net.Conn
	var err error
	if x.o.TCP {
		c, err = net.DialTimeout("tcp", s.addr.String(), time.Second)
		if err == nil && x.o.TLS != nil {
			c, err = x.handshake(c)
		}
		if err == nil {
			// A collector that closes its side is noticed, so the next
			// batch reconnects instead of writing into nothing.
			go func(c net.Conn) {
				io.Copy(io.Discard, c)
				c.Close()
			}(c)
		}
	} else {
		c, err = net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(s.addr))
	}
	if err != nil {
		x.fail(s, err)
		return false
	}
	s.conn, s.seq = c, 0
	clear(s.known)
	s.sentAt = time.Time{}
	return true
}

// handshakeTimeout bounds a collector's TLS handshake: the exporter's
// goroutine waits for it, and the queue fills meanwhile.
const handshakeTimeout = 5 * time.Second

// handshake makes c, a new connection to a collector, a TLS session
// (serverssl-profile); c is closed when it fails.
func (x *Exporter) handshake(c net.Conn) (net.Conn, error) {
	tc := tls.Client(c, x.o.TLS)
	ctx, cancel := context.WithTimeout(context.Background(), handshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return tc, nil
}

func (x *Exporter) fail(s *session, err error) {
	x.failures.Add(1)
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	if s.down.IsZero() || x.o.Now().After(s.down.Add(5*time.Second)) {
		x.o.Logger.Warn("IPFIX collector unreachable", "pool", x.o.Pool, "collector", s.addr.String(), "err", err)
	}
	s.down = x.o.Now().Add(time.Second)
}

// maintain sends the UDP collectors' templates again when their interval
// is up, and forgets deleted templates after the delete delay (over TCP
// in IPFIX, withdrawing them first).
func (x *Exporter) maintain() {
	now := x.o.Now()
	for _, s := range x.sess {
		if s.conn == nil {
			continue
		}
		var gone []*Template
		for t := range s.known {
			if d := t.Deleted(); !d.IsZero() && now.Sub(d) >= x.o.DeleteDelay {
				gone = append(gone, t)
			}
		}
		if len(gone) > 0 {
			if x.o.TCP && x.o.Version == IPFIX {
				x.msg.Begin(x.o.Version, x.buf)
				for _, t := range gone {
					x.msg.Withdraw(t)
				}
				if !x.write(now, s) {
					continue
				}
			}
			for _, t := range gone {
				delete(s.known, t)
			}
		}
		if !x.o.TCP && x.o.Retransmit > 0 && len(s.known) > 0 && now.Sub(s.sentAt) >= x.o.Retransmit {
			x.sendTemplates(now, s)
		}
	}
}
