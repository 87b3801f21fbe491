package daemon

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/hsl"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/logpub"
)

// hslSwitch is the rules' HSL sender, set once a dataplane is attached:
// rules (the GSLB's DNS rules among them) may run before that, and read
// it without a lock.
// pubs are the running configuration's log publishers (HSL::open
// -publisher), swapped at each commit.
// elements, templates and ipfix are what the IPFIX:: commands reach
// (hook_ipfix.go): the running configuration's information elements,
// the templates rules made, and the ipfix destinations' exporters.
type hslSwitch struct {
	hub  atomic.Pointer[hsl.Hub]
	pubs atomic.Pointer[logpub.Set]

	elements  atomic.Pointer[ipfix.Elements]
	tmplOnce  sync.Once
	templates *ipfix.Templates
	ipfix     atomic.Pointer[ipfixHub]
	// netflow is the netflow profiles' counters (hook_netflow.go).
	netflow netflowStats
}

// pubHandle starts the handles of publishers; the hub's start "hsl:".
const pubHandle = "pub:"

var errNoHSL = errors.New("HSL::open: high-speed logging needs the dataplane, which is not running")

// Open implements rules.HSL.
func (s *hslSwitch) Open(proto, pool string) (string, error) {
	h := s.hub.Load()
	if h == nil {
		return "", errNoHSL
	}
	return h.Open(proto, pool)
}

// OpenPublisher implements rules.HSLPublishers: the publisher must be
// in the running configuration.
func (s *hslSwitch) OpenPublisher(name string) (string, error) {
	p, ok := s.pubs.Load().Lookup(name)
	if !ok {
		return "", fmt.Errorf("HSL::open: no such log publisher: %s (a sys log-config publisher)", name)
	}
	return pubHandle + p.Name, nil
}

// Send implements rules.HSL. A publisher's handle sends to the
// publisher of that name in the running configuration (nothing, when a
// commit removed it).
func (s *hslSwitch) Send(handle string, data []byte) (bool, error) {
	if strings.HasPrefix(handle, pubHandle) {
		return s.sendPublisher(handle[len(pubHandle):], data), nil
	}
	h := s.hub.Load()
	if h == nil {
		return false, errNoHSL
	}
	return h.Send(handle, data)
}

func (s *hslSwitch) sendPublisher(name string, data []byte) bool {
	set := s.pubs.Load()
	p, ok := set.Lookup(name)
	if !ok {
		return false
	}
	var hub logpub.Sender
	if h := s.hub.Load(); h != nil {
		hub = h
	}
	return set.Send(hub, p, data)
}

// attachHSL gives rules' HSL::open and HSL::send a sender that balances
// over the plane's live pool members; Close stops it.
func (e *Engine) attachHSL(p *dataplane.Plane) {
	h := hsl.New(hsl.Options{Members: p.PoolAvailable, Pick: p.PoolPick, Logger: e.log})
	e.hsl = h
	e.rules.rt.hsl.hub.Store(h)
	x := &ipfixHub{members: p.PoolAvailable, pick: p.PoolPick, log: e.log, exps: map[string]*ipfix.Exporter{}}
	e.rules.rt.hsl.ipfix.Store(x)
	x.retain(e.rules.rt.hsl.pubs.Load())
}

// HSLStats is the high-speed logging counters (messages sent and dropped
// per pool), empty before a dataplane is attached.
func (e *Engine) HSLStats() []hsl.Stats {
	if e.hsl == nil {
		return nil
	}
	return e.hsl.Stats()
}
