// Package lsn is BIG-IP's large-scale NAT (CGNAT, `ltm lsn-pool`): the
// translation address and port the server side of a subscriber's
// connection is made from, chosen by the pool's mode.
//
//   - napt: any free address and port of the pool's members; persistence
//     address keeps a subscriber on one translation address, and
//     address-port keeps its address and port on one translation
//     address and port, for the persistence timeout after its last
//     connection ends.
//   - deterministic: the subscriber's address (counted through the
//     source prefixes of the virtual servers that use the pool) gives
//     one translation address and one range of ports, the same every
//     time (see deterministic.go); when that range is in use, backup
//     members translate as napt.
//   - pba: a subscriber gets a block of block-size ports on one address,
//     and its connections take ports from its blocks until the block's
//     lifetime or idle timeout ends it; client-block-limit bounds its
//     blocks.
//
// A translation that finds no free port fails; the data path refuses
// the connection and the pool counts it. With inbound-connections
// automatic, each translation address and port in use listens (TCP and
// UDP): a connection or datagram arriving there is sent to the
// subscriber it maps to; with hairpin-mode, a subscriber's connection to
// it goes there inside. A pool with a pcp profile runs a PCP server
// (pcp.go) whose MAP and PEER mappings hold translations for their
// lifetime. A rule's entries (entries.go: LSN::inbound-entry,
// LSN::persistence-entry, XLAT::listen, XLAT::src_endpoint_reservation)
// hold translations and persistence records the same way.
// Starts and ends of translations and port blocks go to the pool's log
// publisher.
//
// A virtual without an lsn pool holds a nil *Pool and pays a nil check.
package lsn

import (
	"github.com/openltm/openltm/dataplane/flows"

	"errors"
	"reflect"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// LogSender hands a line to the log publisher of that name in the
// running configuration; false when it could not.
type LogSender func(publisher string, line []byte) bool

// Set is the lsn pools of the running configuration, by full path.
type Set struct {
	mu    sync.Mutex
	pools map[string]*Pool
	send  atomic.Pointer[LogSender]
	stop  chan struct{}
	done  chan struct{}
	// Now is the clock (tests may set it before Apply); nil: time.Now.
	Now func() time.Time
	// Table, when set (before Apply), lists the inbound connections and
	// UDP peers the pools relay to their subscribers (inbound.go,
	// inbound_udp.go), so that show sys connection shows them and
	// delete sys connection ends them.
	Table *flows.Table
}

// Apply makes the set cfg's pools. A pool whose settings did not change
// keeps its translations, persistence records, blocks and counters; a
// changed one keeps its counters and translations in use (they end as
// their connections do) and translates new connections by the new
// settings.
func (s *Set) Apply(cfg map[string]*config.LSNPool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := make(map[string]*Pool, len(cfg))
	// The pools that go close first, so that a new pool may take their
	// PCP server's address and port.
	for name, p := range s.pools {
		if cfg[name] == nil {
			p.closeAll()
		}
	}
	for name, pc := range cfg {
		p := s.pools[name]
		if p == nil {
			p = newPool(s, pc)
		} else if !reflect.DeepEqual(p.Cfg(), pc) {
			p.reconfigure(pc)
		}
		next[name] = p
	}
	s.pools = next
	if len(next) > 0 && s.stop == nil {
		s.stop, s.done = make(chan struct{}), make(chan struct{})
		go s.janitor(s.stop, s.done)
	} else if len(next) == 0 && s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop, s.done = nil, nil
	}
}

// Close stops the pools (their inbound listeners and the janitor).
func (s *Set) Close() { s.Apply(nil) }

// SetLogSender is where the pools' log lines go.
func (s *Set) SetLogSender(f LogSender) { s.send.Store(&f) }

// Pool is the running pool of that full path; nil for none.
func (s *Set) Pool(name string) *Pool {
	if s == nil || name == "" {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pools[name]
}

// Lookup is Pool for a name a rule gives: a full path, or a bare name
// in /Common.
func (s *Set) Lookup(name string) *Pool {
	if p := s.Pool(name); p != nil {
		return p
	}
	if len(name) > 0 && name[0] != '/' {
		return s.Pool("/Common/" + name)
	}
	return nil
}

// Pools is every running pool, by name.
func (s *Set) Pools() []*Pool {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*Pool, 0, len(s.pools))
	for _, p := range s.pools {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (s *Set) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// janitor ends what timed out: persistence records and port blocks.
func (s *Set) janitor(stop, done chan struct{}) {
	defer close(done)
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			for _, p := range s.Pools() {
				p.Sweep()
			}
		}
	}
}

// Errors a translation gives.
var (
	// ErrExhausted: no free translation port (or port block) for the
	// subscriber.
	ErrExhausted = errors.New("lsn: no translation port free")
	// ErrClientLimit: the subscriber is at client-connection-limit.
	ErrClientLimit = errors.New("lsn: client connection limit")
	// ErrNoSubscriber: a deterministic pool's virtual servers do not
	// count the client among their subscribers, and there are no backup
	// members.
	ErrNoSubscriber = errors.New("lsn: client outside the deterministic subscribers")
	// ErrFamily: the pool has no translation address of the server's
	// address family.
	ErrFamily = errors.New("lsn: no translation address of the server's family")
)
