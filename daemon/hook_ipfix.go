package daemon

import (
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"strings"
	"sync"

	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/logpub"
)

// ipfixHub runs the ipfix destinations' exporters, one per distinct set of
// settings, across commits: a commit that keeps a destination as it was
// keeps its collectors' sessions (their sequence numbers and the templates
// they know).
type ipfixHub struct {
	members func(pool string) ([]netip.AddrPort, error)
	pick    func(pool string) (netip.AddrPort, bool)
	log     *slog.Logger

	mu     sync.Mutex
	closed bool
	exps   map[string]*ipfix.Exporter
}

func ipfixKey(o ipfix.Options) string {
	return fmt.Sprintf("%s|%s|%t|%d|%d|%d|%s", o.Pool, o.Version, o.TCP, o.Retransmit, o.DeleteDelay, o.Domain, o.TLSID)
}

// Exporter implements logpub.Exporters.
func (h *ipfixHub) Exporter(o ipfix.Options) *ipfix.Exporter {
	k := ipfixKey(o)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil
	}
	if x := h.exps[k]; x != nil {
		return x
	}
	o.Members, o.Pick, o.Logger = h.members, h.pick, h.log
	x := ipfix.NewExporter(o)
	h.exps[k] = x
	return x
}

// retain stops the exporters no destination of set uses any more.
func (h *ipfixHub) retain(set *logpub.Set) {
	keep := map[string]bool{}
	for _, p := range set.Publishers() {
		for _, d := range p.Dests {
			if d.IPFIX != nil {
				// The netflow profiles send through the destination's
				// pool and transport in their own version
				// (hook_netflow.go).
				o := d.IPFIX.Opts
				for _, v := range []ipfix.Version{ipfix.IPFIX, ipfix.NetFlowV9, ipfix.NetFlowV5} {
					o.Version = v
					keep[ipfixKey(o)] = true
				}
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, x := range h.exps {
		if !keep[k] {
			x.Close()
			delete(h.exps, k)
		}
	}
}

func (h *ipfixHub) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for k, x := range h.exps {
		x.Close()
		delete(h.exps, k)
	}
}

// stats are the running exporters' counters, by pool.
func (h *ipfixHub) stats() []ipfix.Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]ipfix.Stats, 0, len(h.exps))
	for _, x := range h.exps {
		out = append(out, x.Stats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pool < out[j].Pool })
	return out
}

// ipfixSwitch is the rules' IPFIX: the running configuration's elements
// and publishers (from hslSwitch, swapped at each commit), the system's
// templates and the exporters, once a dataplane is attached.
type ipfixSwitch struct{ s *hslSwitch }

// ipfixDestPrefix starts IPFIX::destination open's handles.
const ipfixDestPrefix = "ipfix_dest:"

// Elements implements rules.IPFIX.
func (x ipfixSwitch) Elements() *ipfix.Elements {
	if e := x.s.elements.Load(); e != nil {
		return e
	}
	return ipfix.IANA()
}

// Templates implements rules.IPFIX.
func (x ipfixSwitch) Templates() *ipfix.Templates {
	x.s.tmplOnce.Do(func() { x.s.templates = ipfix.NewTemplates() })
	return x.s.templates
}

// OpenDestination implements rules.IPFIX: the publisher must be in the
// running configuration and have an ipfix destination. F5's example
// writes /common/...; a partition is matched without regard to case
// when no publisher has the exact name [M].
func (x ipfixSwitch) OpenDestination(name string) (string, error) {
	set := x.s.pubs.Load()
	p, ok := set.Lookup(name)
	if !ok && strings.HasPrefix(strings.ToLower(name), "/common/") {
		p, ok = set.Lookup("/Common/" + name[len("/common/"):])
	}
	if !ok {
		return "", fmt.Errorf("IPFIX::destination open: no such log publisher: %s (a sys log-config publisher)", name)
	}
	if !p.HasIPFIX() {
		return "", fmt.Errorf("IPFIX::destination open: log publisher %s has no ipfix destination (sys log-config destination ipfix)", p.Name)
	}
	return ipfixDestPrefix + p.Name, nil
}

// Send implements rules.IPFIX: the record goes to the ipfix destinations
// of the publisher of that name in the running configuration (nowhere,
// when a commit removed it).
func (x ipfixSwitch) Send(handle string, r *ipfix.Record) (bool, error) {
	name, ok := strings.CutPrefix(handle, ipfixDestPrefix)
	if !ok {
		return false, fmt.Errorf("IPFIX::destination send: invalid destination %q (use the value IPFIX::destination open returned)", handle)
	}
	set := x.s.pubs.Load()
	p, ok := set.Lookup(name)
	if !ok {
		return false, nil
	}
	var xs logpub.Exporters
	if h := x.s.ipfix.Load(); h != nil {
		xs = h
	}
	return set.SendIPFIX(xs, p, r), nil
}

// closeIPFIX stops the exporters.
func (s *hslSwitch) closeIPFIX() {
	if h := s.ipfix.Load(); h != nil {
		h.close()
	}
}

// IPFIXStats is the ipfix destinations' exporters' counters, empty
// before a dataplane is attached.
func (e *Engine) IPFIXStats() []ipfix.Stats {
	if h := e.rules.rt.hsl.ipfix.Load(); h != nil {
		return h.stats()
	}
	return nil
}
