// Package logpub runs log publishers, as `HSL::open -publisher` uses
// them: a publisher names destinations, and each message sent through it
// goes to every one. A remote-high-speed-log destination sends the
// message unchanged to a pool over high-speed logging, with its
// distribution; a remote-syslog destination puts a syslog header before
// it first and sends it through its remote-high-speed-log; local-syslog
// writes it to the system's own log; splunk and arcsight destinations
// rewrite it (format.go) and give it to their forward-to destination; an
// ipfix destination takes the records of IPFIX::destination send, never
// text. A Set is made per configuration and never changed, so sending
// reads it without a lock.
package logpub

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/syslog"
)

// Sender is the high-speed logging hub remote destinations send through.
type Sender interface {
	OpenDistributed(proto, pool string, d hsl.Distribution) (string, error)
	Send(handle string, data []byte) (bool, error)
}

// Remote is a remote-high-speed-log destination: a pool, a protocol (UDP
// or TCP) and a distribution.
type Remote struct {
	Proto, Pool string
	Dist        hsl.Distribution
	// handle is the hub's, opened at the first message (the hub may
	// start after the configuration is read).
	handle atomic.Pointer[string]
}

// Destination is one of a publisher's destinations: Remote alone sends
// the message as it is, Remote with Syslog wraps it first, Local writes
// it to the local log. Other kinds of destination have none of them and
// take nothing.
type Destination struct {
	Name   string
	Remote *Remote
	Syslog *syslog.Header
	Local  bool
	// Format (splunk, arcsight) rewrites each message and gives it to
	// Forward, the forward-to destination.
	Format  Format
	Forward *Destination
	// IPFIX is an ipfix destination's exporter settings.
	IPFIX *IPFIXDest
}

// IPFIXDest is an ipfix destination: its exporter's settings, and the
// exporter, found at the first record (the exporters live across
// configurations, so a collector's session survives a commit that does
// not change its destination).
type IPFIXDest struct {
	Opts ipfix.Options
	exp  atomic.Pointer[ipfix.Exporter]
}

// Exporters gives ipfix destinations their running exporter for a set of
// settings (nil: none can run, and records are dropped).
type Exporters interface {
	Exporter(o ipfix.Options) *ipfix.Exporter
}

// Publisher is a sys log-config publisher.
type Publisher struct {
	Name  string
	Dests []*Destination
}

// HasIPFIX reports whether the publisher has an ipfix destination, which
// IPFIX::destination open asks of it.
func (p *Publisher) HasIPFIX() bool {
	for _, d := range p.Dests {
		if d.IPFIX != nil {
			return true
		}
	}
	return false
}

// Set is a configuration's publishers, by full path.
type Set struct {
	pubs map[string]*Publisher
	// Local writes a message to the system's log at facility.severity
	// (local0.info for a message without a PRI).
	Local func(facility, line string)
	// Now is the clock of syslog headers (nil: time.Now).
	Now func() time.Time
	// Hostname and Version are the system's, which the splunk and
	// arcsight formats write.
	Hostname, Version string
}

// NewSet makes a set of publishers.
func NewSet(pubs []*Publisher) *Set {
	s := &Set{pubs: make(map[string]*Publisher, len(pubs))}
	for _, p := range pubs {
		s.pubs[p.Name] = p
	}
	return s
}

// Publishers lists the set's publishers (in no order).
func (s *Set) Publishers() []*Publisher {
	if s == nil {
		return nil
	}
	out := make([]*Publisher, 0, len(s.pubs))
	for _, p := range s.pubs {
		out = append(out, p)
	}
	return out
}

// FullName is the full path of a publisher as a rule names it: bare
// names are in /Common.
func FullName(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/Common/" + name
}

// Lookup finds a publisher by full path or bare name.
func (s *Set) Lookup(name string) (*Publisher, bool) {
	if s == nil {
		return nil, false
	}
	p, ok := s.pubs[FullName(name)]
	return p, ok
}

// Send gives msg to every destination of the publisher; it reports
// whether any took it. A remote destination's message is queued, never
// waited for; hub nil (no dataplane) drops remote messages. An ipfix
// destination takes no text.
func (s *Set) Send(hub Sender, p *Publisher, msg []byte) bool {
	ok := false
	for _, d := range p.Dests {
		if s.deliver(hub, d, msg, 0) {
			ok = true
		}
	}
	return ok
}

func (s *Set) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// parsedPool holds the formatted destinations' parse state and output.
var parsedPool = sync.Pool{New: func() any { return &formatBuf{} }}

type formatBuf struct {
	p   parsed
	out []byte
}

// deliver gives msg to one destination; depth bounds forward-to chains
// (the configuration refuses loops, and this guards against them all
// the same).
func (s *Set) deliver(hub Sender, d *Destination, msg []byte, depth int) bool {
	switch {
	case d == nil || depth > 4:
		return false
	case d.Format != Unformatted:
		fb := parsedPool.Get().(*formatBuf)
		parse(msg, &fb.p)
		host := s.Hostname
		if host == "" {
			host = "openltm"
		}
		if d.Format == Splunk {
			fb.out = appendSplunk(fb.out[:0], s.now(), host, &fb.p)
		} else {
			fb.out = appendCEF(fb.out[:0], s.now(), host, s.Version, &fb.p)
		}
		// A message that ended its line keeps its line end.
		if n := len(msg); n > 0 && msg[n-1] == '\n' {
			fb.out = append(fb.out, '\n')
		}
		// The queue of a remote destination keeps the bytes it is given.
		out := append([]byte(nil), fb.out...)
		parsedPool.Put(fb)
		return s.deliver(hub, d.Forward, out, depth+1)
	case d.Local:
		if s.Local != nil {
			pri, body := syslog.SplitPRI(msg)
			s.Local(syslog.Name(pri), string(syslog.TrimEOL(body)))
			return true
		}
	case d.Remote != nil:
		if hub == nil {
			return false
		}
		h := d.Remote.handle.Load()
		if h == nil {
			v, err := hub.OpenDistributed(d.Remote.Proto, d.Remote.Pool, d.Remote.Dist)
			if err != nil {
				return false
			}
			h = &v
			d.Remote.handle.Store(h)
		}
		data := msg
		if d.Syslog != nil {
			data = d.Syslog.Append(make([]byte, 0, len(msg)+64), s.now(), msg)
		}
		sent, _ := hub.Send(*h, data)
		return sent
	}
	return false
}

// SendIPFIX gives a record to every ipfix destination of the publisher
// (IPFIX::destination send); it reports whether any queued it. Other
// destinations take no records.
func (s *Set) SendIPFIX(xs Exporters, p *Publisher, r *ipfix.Record) bool {
	ok := false
	for _, d := range p.Dests {
		x := d.IPFIX
		if x == nil || xs == nil {
			continue
		}
		e := x.exp.Load()
		if e == nil || e.Closed() {
			if e = xs.Exporter(x.Opts); e == nil {
				continue
			}
			x.exp.Store(e)
		}
		if e.Send(r) {
			ok = true
		}
	}
	return ok
}
