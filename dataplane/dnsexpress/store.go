// Package dnsexpress is BIG-IP's DNS Express: zones (ltm dns zone)
// transferred from their primary (ltm dns nameserver) by AXFR, then
// IXFR, kept current on the SOA's refresh, retry and expire timers and
// on the primary's NOTIFY, and answered authoritatively by gtm listeners
// and dns-profile virtuals before anything else but a wide IP. README.md
// says what is [M].
package dnsexpress

import (
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnszone"
)

// ZoneConfig is one ltm dns zone as the store acts on it.
type ZoneConfig struct {
	Name         string         // the zone's apex, fqdn, lower case
	Server       netip.AddrPort // the dns-express-server's address and port
	Key          *Key           // signs transfers and verifies NOTIFYs; nil for none
	Enabled      bool           // dns-express-enabled
	NotifyAction string         // consume, bypass or repeat
	AllowNotify  []netip.Addr   // beside Server's address
	VerifyNotify bool           // dns-express-notify-tsig-verify
	// TransferClients are the secondaries a listener with process-xfr
	// yes transfers the copy to (xfrout.go).
	TransferClients []Client
	// ResponsePolicy is response-policy yes: the zone is a response
	// policy zone (RPZ) the DNS caches consult (PolicyZone), not one
	// answered to clients.
	ResponsePolicy bool
}

// Options are a store's settings.
type Options struct {
	Logger *slog.Logger
	// Dir keeps each zone's last copy, so that a restarted daemon answers
	// at once and asks for the changes since; "" keeps nothing.
	Dir string
	// Source is the address transfers come from; the zero Addr lets the
	// host choose.
	Source netip.Addr
}

// Store is the DNS Express database: the zones, their transfers and
// their counters. It lives across commits; Apply changes its zones.
type Store struct {
	opts Options
	idx  atomic.Pointer[index] // nil while no zone is enabled

	mu    sync.Mutex
	zones map[string]*Zone
}

// index is the enabled zones, longest name first: all of them (zones,
// for their NOTIFYs), those answered to clients (answer) and the
// response policy zones by name (policy).
type index struct {
	zones, answer []*Zone
	policy        map[string]*Zone
}

// New makes an empty store.
func New(opts Options) *Store {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Store{opts: opts, zones: map[string]*Zone{}}
}

// Zone is one DNS Express zone: its copy and how it got it.
type Zone struct {
	s    *Store
	name string
	cfg  atomic.Pointer[ZoneConfig]
	data atomic.Pointer[dnszone.Zone] // nil until the first transfer, and once expired
	kick chan struct{}
	stop chan struct{}
	done chan struct{}

	notifies atomic.Uint64
	mu       sync.Mutex
	st       ZoneStats
}

// ZoneStats is what `show ltm dns zone` prints of a zone.
type ZoneStats struct {
	Name           string
	Serial         uint32
	Records        int
	Loaded         bool      // a copy answers
	LastResult     string    // "axfr", "ixfr", "current" or the error
	LastTransfer   time.Time // of LastResult; zero before the first try
	LastSuccess    time.Time
	Transfers      uint64 // AXFR and IXFR that changed the copy
	Failures       uint64
	Notifies       uint64 // accepted NOTIFYs
	NotifyRejected uint64
	// TransfersOut are the AXFR and IXFR answered to transfer-clients,
	// TransfersOutRefused those refused (REFUSED, NOTAUTH).
	TransfersOut        uint64
	TransfersOutRefused uint64
	// NotifiesSent are the NOTIFYs transfer-clients answered.
	NotifiesSent uint64
}

// Apply makes cfgs the store's zones: a zone that stays keeps its copy
// (and a changed server or key is asked at once), a new one starts its
// transfer, one no longer there stops and is forgotten; a transfer it
// was in does not hold the commit up, and its result is dropped.
func (s *Store) Apply(cfgs []ZoneConfig) { s.apply(cfgs) }

// apply is Apply; it returns the zones it stopped.
func (s *Store) apply(cfgs []ZoneConfig) (stopped []*Zone) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := map[string]*Zone{}
	for i := range cfgs {
		c := cfgs[i]
		z := s.zones[c.Name]
		if z == nil {
			z = &Zone{s: s, name: c.Name, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
			z.st.Name = c.Name
			z.cfg.Store(&c)
			z.load()
			go z.run()
		} else if old := z.cfg.Load(); !sameConfig(old, &c) {
			z.cfg.Store(&c)
			if old.Server != c.Server || !sameKey(old.Key, c.Key) || !old.Enabled {
				z.poke()
			}
		}
		keep[c.Name] = z
	}
	for name, z := range s.zones {
		if keep[name] == nil {
			close(z.stop)
			stopped = append(stopped, z)
		}
	}
	s.zones = keep
	s.reindex()
	return stopped
}

// reindex publishes the enabled zones; s.mu is held.
func (s *Store) reindex() {
	var zs []*Zone
	for _, z := range s.zones {
		if z.cfg.Load().Enabled {
			zs = append(zs, z)
		}
	}
	if len(zs) == 0 {
		s.idx.Store(nil)
		return
	}
	sort.Slice(zs, func(i, j int) bool {
		if len(zs[i].name) != len(zs[j].name) {
			return len(zs[i].name) > len(zs[j].name)
		}
		return zs[i].name < zs[j].name
	})
	ix := &index{zones: zs}
	for _, z := range zs {
		if z.cfg.Load().ResponsePolicy {
			if ix.policy == nil {
				ix.policy = map[string]*Zone{}
			}
			ix.policy[z.name] = z
			continue
		}
		ix.answer = append(ix.answer, z)
	}
	s.idx.Store(ix)
}

// PolicyZone is the copy of the enabled response policy zone (ltm dns
// zone with response-policy yes) of that name (lower case, fully
// qualified), for the caches' response-policy-zones; nil while it has
// none. It takes no lock.
func (s *Store) PolicyZone(name string) *dnszone.Zone {
	ix := s.idx.Load()
	if ix == nil {
		return nil
	}
	if z := ix.policy[name]; z != nil {
		return z.data.Load()
	}
	return nil
}

// Close stops every zone and waits for the transfers in progress to end
// (each within its timeout).
func (s *Store) Close() {
	for _, z := range s.apply(nil) {
		<-z.done
	}
}

func sameKey(a, b *Key) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

func sameConfig(a, b *ZoneConfig) bool {
	return a.Name == b.Name && a.Server == b.Server && sameKey(a.Key, b.Key) && a.Enabled == b.Enabled && a.ResponsePolicy == b.ResponsePolicy &&
		a.NotifyAction == b.NotifyAction && slices.Equal(a.AllowNotify, b.AllowNotify) && a.VerifyNotify == b.VerifyNotify &&
		slices.EqualFunc(a.TransferClients, b.TransferClients, func(x, y Client) bool { return x.Addr == y.Addr && x.Port == y.Port && sameKey(x.Key, y.Key) })
}

// Answer is the authoritative reply to r, whose one question's name is
// qname lower cased, from the zone holding the name; nil when no zone
// with a copy holds it. It takes no lock, and allocates nothing for a
// name outside the zones.
func (s *Store) Answer(r *dns.Msg, qname string) *dns.Msg {
	ix := s.idx.Load()
	if ix == nil {
		return nil
	}
	for _, z := range ix.answer {
		if !dns.IsSubDomain(z.name, qname) {
			continue
		}
		d := z.data.Load()
		if d == nil {
			return nil // the zone has no copy: the next step answers [M]
		}
		m := new(dns.Msg)
		m.SetReply(r)
		d.Answer(m, qname, r.Question[0].Name, r.Question[0].Qtype)
		return m
	}
	return nil
}

// Active reports whether any zone is enabled: a caller's cheap test
// before it looks at a NOTIFY.
func (s *Store) Active() bool { return s.idx.Load() != nil }

// Stats are the zones' counters, by name, those named (all when none).
func (s *Store) Stats(names ...string) []ZoneStats {
	s.mu.Lock()
	zs := make([]*Zone, 0, len(s.zones))
	for name, z := range s.zones {
		if len(names) == 0 || slices.Contains(names, name) {
			zs = append(zs, z)
		}
	}
	s.mu.Unlock()
	out := make([]ZoneStats, 0, len(zs))
	for _, z := range zs {
		out = append(out, z.Stats())
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Zone is the zone of that name, nil when the store has none.
func (s *Store) Zone(name string) *Zone {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.zones[strings.ToLower(dns.Fqdn(name))]
}

// Stats are the zone's counters and its copy's serial and size.
func (z *Zone) Stats() ZoneStats {
	z.mu.Lock()
	st := z.st
	z.mu.Unlock()
	if d := z.data.Load(); d != nil {
		st.Loaded, st.Serial, st.Records = true, d.SOA().Serial, d.Count()
	}
	st.Notifies = z.notifies.Load()
	return st
}

// Refresh asks the primary now, as a NOTIFY does.
func (z *Zone) Refresh() { z.poke() }

func (z *Zone) poke() {
	select {
	case z.kick <- struct{}{}:
	default:
	}
}

// minWait bounds how often a zone asks its primary, whatever its SOA
// says [M].
var minWait = time.Second

// run keeps the zone current: a transfer at once, then again after the
// SOA's refresh (retry after a failure), at once on a NOTIFY; a copy
// that could not be refreshed for the SOA's expire stops answering.
func (z *Zone) run() {
	defer close(z.done)
	for {
		wait := z.refresh()
		t := time.NewTimer(wait)
		select {
		case <-z.stop:
			t.Stop()
			return
		case <-z.kick:
			t.Stop()
		case <-t.C:
		}
	}
}

// refresh is one try; it returns how long to wait for the next.
func (z *Zone) refresh() time.Duration {
	cfg := z.cfg.Load()
	if !cfg.Enabled || !cfg.Server.IsValid() {
		return time.Hour // until Apply or a NOTIFY pokes it
	}
	have := z.data.Load()
	d, how, err := transfer(cfg.Name, cfg.Server, z.s.opts.Source, cfg.Key, have)
	if err != nil && have != nil {
		// A primary that cannot give the changes may give the zone.
		d, how, err = transfer(cfg.Name, cfg.Server, z.s.opts.Source, cfg.Key, nil)
	}
	select {
	case <-z.stop:
		return time.Hour // deleted meanwhile: nothing to keep
	default:
	}
	now := time.Now()
	z.mu.Lock()
	z.st.LastTransfer = now
	if err != nil {
		z.st.LastResult = err.Error()
		z.st.Failures++
	} else {
		z.st.LastResult, z.st.LastSuccess = how, now
		if how != "current" {
			z.st.Transfers++
		}
	}
	last := z.st.LastSuccess
	z.mu.Unlock()
	if err != nil {
		z.s.opts.Logger.Warn("DNS Express zone transfer failed", "zone", cfg.Name, "server", cfg.Server.String(), "err", err)
		if have == nil {
			return minWait * 5
		}
		if time.Since(last) > seconds(have.SOA().Expire) {
			z.data.Store(nil) // expired: no longer authoritative
			z.s.opts.Logger.Warn("DNS Express zone expired", "zone", cfg.Name)
		}
		return max(seconds(have.SOA().Retry), minWait)
	}
	if d != have {
		z.data.Store(d)
		z.save(d)
		z.notifyClients(cfg, d.SOA())
		z.s.opts.Logger.Info("DNS Express zone transferred", "zone", cfg.Name, "how", how, "serial", d.SOA().Serial, "records", d.Count())
	}
	return max(seconds(d.SOA().Refresh), minWait)
}

func seconds(n uint32) time.Duration { return time.Duration(n) * time.Second }

// file is where the zone's copy is kept, "" for nowhere.
func (z *Zone) file() string {
	if z.s.opts.Dir == "" {
		return ""
	}
	return filepath.Join(z.s.opts.Dir, strings.TrimSuffix(z.name, ".")+".zone")
}

// save writes the copy in master-file form, replacing the last one whole.
func (z *Zone) save(d *dnszone.Zone) {
	f := z.file()
	if f == "" {
		return
	}
	var b strings.Builder
	for _, rr := range d.Records() {
		b.WriteString(rr.String())
		b.WriteByte('\n')
	}
	if err := os.MkdirAll(z.s.opts.Dir, 0o700); err == nil {
		tmp := f + ".tmp"
		if err = os.WriteFile(tmp, []byte(b.String()), 0o600); err == nil {
			err = os.Rename(tmp, f)
		}
		if err == nil {
			return
		}
	}
	z.s.opts.Logger.Warn("DNS Express zone could not be saved", "zone", z.name, "file", f)
}

// load reads the copy a previous run saved, as fresh as the file is: the
// first refresh then asks for the changes since, and while the primary
// does not answer the copy serves until its SOA's expire has passed
// since it was saved.
func (z *Zone) load() {
	f := z.file()
	if f == "" {
		return
	}
	fi, err := os.Stat(f)
	if err != nil {
		return
	}
	b, err := os.ReadFile(f)
	if err != nil {
		return
	}
	zp := dns.NewZoneParser(strings.NewReader(string(b)), z.name, "")
	var rrs []dns.RR
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rrs = append(rrs, rr)
	}
	if zp.Err() != nil {
		return
	}
	if d := dnszone.Build(z.name, rrs); d.SOA() != nil && time.Since(fi.ModTime()) < seconds(d.SOA().Expire) {
		z.data.Store(d)
		z.st.LastSuccess = fi.ModTime()
	}
}
