// Package fqdn follows the names of FQDN nodes and pool members
// (`fqdn { name … address-family ipv4|ipv6 interval N|ttl down-interval N
// autopopulate enabled|disabled }`): it queries a DNS server (miekg/dns) or
// the system resolver (a Server completes short names with the search
// domains of `sys dns search`, as a stub resolver does), reports the
// address set whenever it changes, and
// names the ephemeral nodes and members BIG-IP creates for the addresses
// (_auto_10.1.1.1, _auto_10.1.1.1:80).
//
// How the dataplane uses it:
//
//	w := fqdn.Watch(fqdn.Spec{Name: "app.example", Interval: 0 /* ttl */, DownInterval: 5 * time.Second,
//	        Autopopulate: true}, &fqdn.Server{Addrs: []string{"127.0.0.53:53"}}, func(u fqdn.Update) {
//	    // u.Added / u.Removed: create or delete the members fqdn.MemberName(a, port)
//	    // u.Status: what `show ltm node` prints for the FQDN template node
//	})
//	w.Stop()
//
// Timing and states, as BIG-IP has them: after an answer the name is asked
// again after Interval, or at the answer's TTL when Interval is 0 (`interval
// ttl`); a failed query (no server, timeout, SERVFAIL, REFUSED) is retried
// every DownInterval, the status is fqdn-down and the addresses in service
// are kept (a failing resolver does not take members away). An answer
// without addresses (NXDOMAIN, or no record of the family) empties the set
// and shows fqdn-up-no-addr. With autopopulate disabled only one address is
// used: the one in service while the answer still holds it, else the
// answer's first.
package fqdn

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Family is the address family an FQDN resolves to.
type Family int

// The families, as `address-family` names them.
const (
	IPv4 Family = iota
	IPv6
)

// ParseFamily reads an address-family value.
func ParseFamily(s string) (Family, error) {
	switch s {
	case "", "ipv4":
		return IPv4, nil
	case "ipv6":
		return IPv6, nil
	}
	return 0, fmt.Errorf("address-family %q is not valid (ipv4, ipv6)", s)
}

// String is the address-family keyword.
func (f Family) String() string {
	if f == IPv6 {
		return "ipv6"
	}
	return "ipv4"
}

// Spec is one fqdn block.
type Spec struct {
	Name   string
	Family Family
	// Interval between queries while the name resolves; 0 follows the
	// record's TTL (`interval ttl`). BIG-IP's default is 3600 s.
	Interval time.Duration
	// DownInterval between queries while resolution fails (default 5 s).
	DownInterval time.Duration
	Autopopulate bool
	// QueryTimeout bounds one query (default 5 s).
	QueryTimeout time.Duration
}

// ParseInterval reads an fqdn interval: seconds, or ttl (returned as 0).
func ParseInterval(s string) (time.Duration, error) {
	if s == "ttl" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("interval %q is not valid (ttl, or seconds from 1)", s)
	}
	return time.Duration(n) * time.Second, nil
}

// DefaultDownInterval is BIG-IP's down-interval.
const DefaultDownInterval = 5 * time.Second

// UnknownTTL is the wait used with `interval ttl` when the resolver cannot
// tell the TTL (the system resolver): BIG-IP's default interval.
const UnknownTTL = 3600 * time.Second

// minTTL keeps a zero or tiny TTL from turning into a query loop.
const minTTL = time.Second

// Status is an FQDN template node's state as `show ltm node` prints it.
type Status string

// The states.
const (
	Checking  Status = "fqdn-checking"
	UpStatus  Status = "fqdn-up"
	UpNoAddr  Status = "fqdn-up-no-addr"
	Down      Status = "fqdn-down"
	autoNamed        = "_auto_"
)

// NodeName is the ephemeral node BIG-IP creates for an address.
func NodeName(a netip.Addr) string { return autoNamed + a.Unmap().String() }

// MemberName is the ephemeral pool member for an address and port: IPv4
// joins with ':', IPv6 with '.', as BIG-IP writes members.
func MemberName(a netip.Addr, port uint16) string {
	a = a.Unmap()
	sep := ":"
	if a.Is6() {
		sep = "."
	}
	return NodeName(a) + sep + strconv.Itoa(int(port))
}

// Answer is what a resolver found: no addresses with a nil error means the
// name exists without records of the family, or does not exist.
type Answer struct {
	Addrs []netip.Addr
	// TTL is the smallest TTL of the records used; 0 when unknown.
	TTL time.Duration
}

// Resolver answers queries for a name in a family.
type Resolver interface {
	Resolve(ctx context.Context, name string, fam Family) (Answer, error)
}

// Update is a report of the watcher's state.
type Update struct {
	Name   string
	Status Status
	// Addrs is the set in service, sorted.
	Addrs          []netip.Addr
	Added, Removed []netip.Addr
	// LastError is the last failed query's reason ("" after an answer).
	LastError string
	// Next is when the name is asked again.
	Next time.Time
}

// Watcher follows one name until stopped.
type Watcher struct {
	spec     Spec
	res      Resolver
	onUpdate func(Update)

	mu      sync.Mutex
	cur     Update
	refresh chan struct{}
	stop    chan struct{}
	done    chan struct{}
}

// Watch starts following spec.Name at once. onUpdate is called from the
// watcher's goroutine after the first answer or failure and after every
// change of status or addresses; never after Stop returns.
func Watch(spec Spec, r Resolver, onUpdate func(Update)) *Watcher {
	if spec.DownInterval <= 0 {
		spec.DownInterval = DefaultDownInterval
	}
	if spec.QueryTimeout <= 0 {
		spec.QueryTimeout = 5 * time.Second
	}
	w := &Watcher{spec: spec, res: r, onUpdate: onUpdate,
		cur:     Update{Name: spec.Name, Status: Checking},
		refresh: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go w.run()
	return w
}

// Current is the latest state.
func (w *Watcher) Current() Update {
	w.mu.Lock()
	defer w.mu.Unlock()
	u := w.cur
	u.Addrs = slices.Clone(u.Addrs)
	u.Added, u.Removed = nil, nil
	return u
}

// Refresh asks the name again now.
func (w *Watcher) Refresh() {
	select {
	case w.refresh <- struct{}{}:
	default:
	}
}

// Stop ends the watch and waits for the goroutine.
func (w *Watcher) Stop() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

func (w *Watcher) run() {
	defer close(w.done)
	first := true
	for {
		ctx, cancel := context.WithTimeout(context.Background(), w.spec.QueryTimeout)
		go func() {
			select {
			case <-w.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		ans, err := w.res.Resolve(ctx, w.spec.Name, w.spec.Family)
		cancel()
		select {
		case <-w.stop:
			return
		default:
		}
		u, wait, changed := w.apply(ans, err, time.Now())
		if changed || first {
			first = false
			if w.onUpdate != nil {
				w.onUpdate(u)
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-w.stop:
			t.Stop()
			return
		case <-w.refresh:
			t.Stop()
		case <-t.C:
		}
	}
}

// apply folds one result into the state and says how long to wait.
func (w *Watcher) apply(ans Answer, err error, now time.Time) (Update, time.Duration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	old := w.cur
	next := w.cur
	next.Added, next.Removed = nil, nil
	var wait time.Duration
	if err != nil {
		next.Status, next.LastError = Down, err.Error()
		wait = w.spec.DownInterval
	} else {
		next.LastError = ""
		next.Addrs = w.choose(ans.Addrs, old.Addrs)
		next.Status = UpStatus
		if len(next.Addrs) == 0 {
			next.Status = UpNoAddr
		}
		switch {
		case w.spec.Interval > 0:
			wait = w.spec.Interval
		case ans.TTL > 0:
			wait = max(ans.TTL, minTTL)
		case len(ans.Addrs) == 0:
			wait = w.spec.DownInterval
		default:
			wait = UnknownTTL
		}
		for _, a := range next.Addrs {
			if !slices.Contains(old.Addrs, a) {
				next.Added = append(next.Added, a)
			}
		}
		for _, a := range old.Addrs {
			if !slices.Contains(next.Addrs, a) {
				next.Removed = append(next.Removed, a)
			}
		}
	}
	next.Next = now.Add(wait)
	changed := next.Status != old.Status || len(next.Added) > 0 || len(next.Removed) > 0 || next.LastError != old.LastError
	w.cur = next
	return next, wait, changed
}

// choose picks the addresses in service from an answer.
func (w *Watcher) choose(answer, inService []netip.Addr) []netip.Addr {
	var out []netip.Addr
	for _, a := range answer {
		a = a.Unmap()
		if (w.spec.Family == IPv6) != a.Is6() || slices.Contains(out, a) {
			continue
		}
		out = append(out, a)
	}
	if !w.spec.Autopopulate && len(out) > 1 {
		keep := out[0]
		for _, a := range inService {
			if slices.Contains(out, a) {
				keep = a
				break
			}
		}
		out = []netip.Addr{keep}
	}
	slices.SortFunc(out, func(a, b netip.Addr) int { return a.Compare(b) })
	return out
}

// errNoServer is a Server without addresses.
var errNoServer = errors.New("no DNS server configured")
