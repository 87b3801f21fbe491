package icap

import (
	"bufio"
	"bytes"
	"context"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Client keeps what is worth keeping between exchanges with ICAP
// servers: idle connections (a handshake per message costs more than
// the scan of a small one) and each service's OPTIONS answer (its
// preview size, the extensions it ignores). Safe for concurrent use.
type Client struct {
	// MaxIdle bounds the idle connections kept per server (0: 8); more
	// are closed.
	MaxIdle int
	// IdleTimeout closes a connection idle that long (0: 30 s), before a
	// server's own idle timeout closes it under a new exchange.
	IdleTimeout time.Duration

	mu   sync.Mutex
	idle map[netip.AddrPort][]*conn
	opts map[optKey]*Options
}

// sharedClient serves every Service without a Client of its own.
var sharedClient = &Client{}

// conn is one connection to an ICAP server.
type conn struct {
	c    net.Conn
	r    *bufio.Reader
	used time.Time // when it went idle
}

type optKey struct {
	addr netip.AddrPort
	uri  string
}

// Options is what a service said of itself in its answer to OPTIONS
// (RFC 3507 4.10).
type Options struct {
	// Preview is the body bytes the server wants first (-1: it said
	// nothing, the profile decides).
	Preview int
	// ISTag is the service's version tag.
	ISTag string
	// Ignore, Complete and PreviewExt are Transfer-Ignore,
	// Transfer-Complete and Transfer-Preview: file extensions (lower
	// case, "*" for all others) never sent, sent whole without preview,
	// and sent with a preview.
	Ignore, Complete, PreviewExt []string
	expires                      time.Time
	failed                       bool // the answer was not usable: the profile decides
}

type transfer uint8

const (
	transferPreview transfer = iota
	transferIgnore
	transferComplete
)

// transfer is what the service wants done with a message whose URI
// ends in extension ext: an extension listed wins over a "*".
func (o *Options) transfer(ext string) transfer {
	in := func(l []string, v string) bool {
		for _, e := range l {
			if e == v {
				return true
			}
		}
		return false
	}
	if ext != "" {
		switch {
		case in(o.Ignore, ext):
			return transferIgnore
		case in(o.Complete, ext):
			return transferComplete
		case in(o.PreviewExt, ext):
			return transferPreview
		}
	}
	switch {
	case in(o.Ignore, "*"):
		return transferIgnore
	case in(o.Complete, "*"):
		return transferComplete
	}
	return transferPreview
}

// Options-TTL bounds: a server that gives none is asked again after
// defaultOptionsTTL, and one whose OPTIONS fails (an error status, not
// ICAP) after failedOptionsTTL, its profile's settings serving meanwhile
// [M].
const (
	defaultOptionsTTL = time.Hour
	failedOptionsTTL  = time.Minute
)

func (c *Client) maxIdle() int {
	if c.MaxIdle > 0 {
		return c.MaxIdle
	}
	return 8
}

func (c *Client) idleTimeout() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return 30 * time.Second
}

// get returns an idle connection to addr (reused true) or a new one.
func (c *Client) get(ctx context.Context, addr netip.AddrPort, connectTimeout time.Duration) (*conn, bool, error) {
	now := time.Now()
	c.mu.Lock()
	l := c.idle[addr]
	for len(l) > 0 {
		pc := l[len(l)-1]
		l = l[:len(l)-1]
		if now.Sub(pc.used) < c.idleTimeout() {
			c.idle[addr] = l
			c.mu.Unlock()
			return pc, true, nil
		}
		pc.c.Close()
	}
	if c.idle != nil {
		delete(c.idle, addr)
	}
	c.mu.Unlock()
	d := net.Dialer{Timeout: connectTimeout}
	nc, err := d.DialContext(ctx, "tcp", addr.String())
	if err != nil {
		return nil, false, err
	}
	return &conn{c: nc, r: bufio.NewReader(nc)}, false, nil
}

// put keeps pc for the next exchange with addr, or closes it when
// MaxIdle are kept already. Connections idle too long go then.
func (c *Client) put(addr netip.AddrPort, pc *conn) {
	now := time.Now()
	pc.used = now
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.idle == nil {
		c.idle = map[netip.AddrPort][]*conn{}
	}
	l := c.idle[addr]
	for len(l) > 0 && now.Sub(l[0].used) >= c.idleTimeout() {
		l[0].c.Close()
		l = l[1:]
	}
	if len(l) >= c.maxIdle() || pc.r.Buffered() > 0 {
		pc.c.Close()
		c.idle[addr] = l
		return
	}
	c.idle[addr] = append(l, pc)
}

// CloseIdle closes the idle connections (a configuration that no longer
// names a server, tests).
func (c *Client) CloseIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for a, l := range c.idle {
		for _, pc := range l {
			pc.c.Close()
		}
		delete(c.idle, a)
	}
}

// Idle is how many connections to addr are kept idle now.
func (c *Client) Idle(addr netip.AddrPort) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.idle[addr])
}

// run runs f with pc's deadline following ctx; a connection whose
// exchange ctx ended is never kept.
func (pc *conn) run(ctx context.Context, f func() (Result, bool, bool, error)) (Result, bool, bool, error) {
	if dl, ok := ctx.Deadline(); ok {
		pc.c.SetDeadline(dl)
	} else {
		pc.c.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { pc.c.SetDeadline(time.Unix(1, 0)) })
	r, keep, answered, err := f()
	if !stop() {
		keep = false
	}
	if keep {
		pc.c.SetDeadline(time.Time{})
	}
	return r, keep, answered, err
}

// options returns the service's OPTIONS answer, asking for it when not
// known or expired; nil when the server does not answer OPTIONS well
// (another status, not ICAP, or the connection closed: the profile's
// settings serve). A connect that fails or an answer that does not come
// in time is an error of the exchange.
func (c *Client) options(ctx context.Context, s *Service, addr netip.AddrPort, uri string) (*Options, error) {
	k := optKey{addr, uri}
	now := time.Now()
	c.mu.Lock()
	o, ok := c.opts[k]
	c.mu.Unlock()
	if ok && now.Before(o.expires) {
		if o.failed {
			return nil, nil
		}
		return o, nil
	}
	for try := 0; ; try++ {
		pc, reused, err := c.get(ctx, addr, s.ConnectTimeout)
		if err != nil {
			return nil, err
		}
		var o *Options
		_, keep, answered, err := pc.run(ctx, func() (Result, bool, bool, error) {
			var keep, answered bool
			var err error
			o, keep, answered, err = s.askOptions(pc, uri)
			return Result{}, keep, answered, err
		})
		if keep && err == nil {
			c.put(addr, pc)
		} else {
			pc.c.Close()
		}
		if err != nil && reused && !answered && try == 0 && ctx.Err() == nil && stale(err) {
			continue
		}
		if err != nil && !answered && !stale(err) {
			return nil, err // no answer in time: the service is down
		}
		if err != nil || o == nil {
			o = &Options{Preview: -1, failed: true, expires: now.Add(failedOptionsTTL)}
		}
		c.mu.Lock()
		if c.opts == nil {
			c.opts = map[optKey]*Options{}
		}
		c.opts[k] = o
		c.mu.Unlock()
		if o.failed {
			return nil, nil
		}
		return o, nil
	}
}

// forget drops a service's OPTIONS answer, to be asked again.
func (c *Client) forget(addr netip.AddrPort, uri string) {
	c.mu.Lock()
	delete(c.opts, optKey{addr, uri})
	c.mu.Unlock()
}

// askOptions sends OPTIONS on pc and reads the answer: nil Options (and
// no error) when the server answers with another status than 200.
func (s *Service) askOptions(pc *conn, uri string) (*Options, bool, bool, error) {
	var b bytes.Buffer
	b.WriteString("OPTIONS " + uri + " ICAP/1.0\r\n")
	s.writeCommon(&b, uri)
	b.WriteString("Encapsulated: null-body=0\r\n\r\n")
	if _, err := pc.c.Write(b.Bytes()); err != nil {
		return nil, false, false, err
	}
	status, hdr, err := readHead(pc.r, nil)
	if err != nil {
		return nil, false, false, err
	}
	keep := !strings.EqualFold(hdr["connection"], "close")
	if parts, err := parseEncapsulated(hdr["encapsulated"]); err == nil && len(parts) > 0 && parts[len(parts)-1].name == "opt-body" {
		if _, _, err := ReadChunked(pc.r, 1<<20); err != nil { // not used, read to stay in step
			return nil, false, true, err
		} else if parts[len(parts)-1].off != 0 {
			keep = false // an encapsulated head before it: out of step
		}
	}
	if status != 200 {
		return nil, keep, true, nil
	}
	o := &Options{Preview: -1, ISTag: hdr["istag"]}
	if v, ok := hdr["preview"]; ok {
		if n, err := strconv.Atoi(v); err == nil && n >= 0 {
			o.Preview = n
		}
	}
	o.Ignore, o.Complete, o.PreviewExt = extList(hdr["transfer-ignore"]), extList(hdr["transfer-complete"]), extList(hdr["transfer-preview"])
	ttl := defaultOptionsTTL
	if v, ok := hdr["options-ttl"]; ok {
		if n, err := strconv.ParseUint(v, 10, 31); err == nil {
			ttl = time.Duration(n) * time.Second
		}
	}
	o.expires = time.Now().Add(ttl)
	return o, keep, true, nil
}

// extList reads "html, txt, *" in lower case.
func extList(v string) []string {
	var out []string
	for _, f := range strings.Split(v, ",") {
		if f = strings.ToLower(strings.TrimSpace(f)); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// extension is the file extension of a request head's URI path (lower
// case, "" when none): what Transfer-Ignore and its kind are matched
// against.
func extension(reqHead []byte) string {
	line, _, _ := bytes.Cut(reqHead, []byte("\r\n"))
	f := bytes.Fields(line)
	if len(f) < 2 {
		return ""
	}
	p := f[1]
	if i := bytes.IndexAny(p, "?#"); i >= 0 {
		p = p[:i]
	}
	if i := bytes.Index(p, []byte("://")); i >= 0 { // absolute form
		p = p[i+3:]
		if j := bytes.IndexByte(p, '/'); j >= 0 {
			p = p[j:]
		} else {
			return ""
		}
	}
	if i := bytes.LastIndexByte(p, '/'); i >= 0 {
		p = p[i+1:]
	}
	i := bytes.LastIndexByte(p, '.')
	if i < 0 || i == len(p)-1 {
		return ""
	}
	return strings.ToLower(string(p[i+1:]))
}
