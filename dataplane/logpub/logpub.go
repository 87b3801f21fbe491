// Package logpub runs log publishers, as `HSL::open -publisher` uses
// them: a publisher names destinations, and each message sent through it
// goes to every one. A remote-high-speed-log destination sends the
// message unchanged to a pool over high-speed logging, with its
// distribution; a remote-syslog destination puts a syslog header before
// it first and sends it through its remote-high-speed-log; local-syslog
// writes it to the system's own log. A Set is made per configuration and
// never changed, so sending reads it without a lock.
package logpub

import (
	"strings"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/hsl"
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
}

// Publisher is a sys log-config publisher.
type Publisher struct {
	Name  string
	Dests []*Destination
}

// Set is a configuration's publishers, by full path.
type Set struct {
	pubs map[string]*Publisher
	// Local writes a message to the system's log at facility.severity
	// (local0.info for a message without a PRI).
	Local func(facility, line string)
	// Now is the clock of syslog headers (nil: time.Now).
	Now func() time.Time
}

// NewSet makes a set of publishers.
func NewSet(pubs []*Publisher) *Set {
	s := &Set{pubs: make(map[string]*Publisher, len(pubs))}
	for _, p := range pubs {
		s.pubs[p.Name] = p
	}
	return s
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
// waited for; hub nil (no dataplane) drops remote messages.
func (s *Set) Send(hub Sender, p *Publisher, msg []byte) bool {
	ok := false
	for _, d := range p.Dests {
		switch {
		case d.Local:
			if s.Local != nil {
				pri, body := syslog.SplitPRI(msg)
				s.Local(syslog.Name(pri), string(syslog.TrimEOL(body)))
				ok = true
			}
		case d.Remote != nil:
			if hub == nil {
				continue
			}
			h := d.Remote.handle.Load()
			if h == nil {
				v, err := hub.OpenDistributed(d.Remote.Proto, d.Remote.Pool, d.Remote.Dist)
				if err != nil {
					continue
				}
				h = &v
				d.Remote.handle.Store(h)
			}
			data := msg
			if d.Syslog != nil {
				now := time.Now
				if s.Now != nil {
					now = s.Now
				}
				data = d.Syslog.Append(make([]byte, 0, len(msg)+64), now(), msg)
			}
			if sent, _ := hub.Send(*h, data); sent {
				ok = true
			}
		}
	}
	return ok
}
