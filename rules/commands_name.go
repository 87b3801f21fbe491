package rules

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/rules/tcl"
)

// NAME::lookup is BIG-IP's asynchronous lookup: the command returns at
// once, the rule goes on, and NAME_RESOLVED runs when the answer is in,
// where NAME::response reads it. Here the query leaves as the command
// runs (on a goroutine of its own) and NAME_RESOLVED runs once the event
// that asked has finished, before the connection goes on: the request
// (or the accepted connection) is parked meanwhile, as a rule holding it
// with HTTP::collect would have it on BIG-IP, and NAME_RESOLVED still has
// it in hand (HTTP::header, pool, HTTP::respond work there). A rule
// with NAME::lookup is one that waits (waitHook): its connections run
// on goroutines of their own (Blocker), so the wait holds up no other
// client and no event loop.

const (
	// nameLookupWait bounds one NAME::lookup on a connection whose events
	// wait alone [M: BIG-IP's tmm.resolv.timeout is 5 s a try].
	nameLookupWait = 5 * time.Second
	// maxNameLookups bounds the lookups one connection may have waiting,
	// and the NAME_RESOLVED events one event may lead to (a
	// NAME_RESOLVED that asks again runs again), so that a rule cannot
	// loop on them.
	maxNameLookups = 16
)

// nameLookup is one NAME::lookup in flight: done closes when recs and
// err are set.
type nameLookup struct {
	done   chan struct{}
	cancel context.CancelFunc
	recs   []string
	err    error
	what   string // the query, as the log tells of it
	wait   time.Duration
}

// cmdNameLookup is `NAME::lookup ?@ADDRESS[:PORT]|@VIRTUAL|@RESOLVER?
// NAME|ADDRESS`: the A records of a name, or the PTR of an address,
// asked of the nameserver given (an address, a virtual server's address,
// or a net dns-resolver), else of the system's (the host's nameservers,
// as RESOLV::lookup). It returns at once; NAME_RESOLVED runs with the
// answer.
func cmdNameLookup(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "NAME::lookup ?@ip|@virtual? host|ip"
	a := args[1:]
	at := ""
	if len(a) == 2 && strings.HasPrefix(a[0].String(), "@") {
		at, a = a[0].String()[1:], a[1:]
	}
	if len(a) != 1 || a[0].String() == "" {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	name, qtype := a[0].String(), dns.TypeA
	if addr, err := netip.ParseAddr(name); err == nil {
		qtype = dns.TypePTR
		name, _ = dns.ReverseAddr(addr.Unmap().String())
	} else if _, ok := dns.IsDomainName(name); !ok || strings.ContainsAny(name, " \t\r\n") {
		return tcl.Empty, tcl.Errorf("NAME::lookup: %q is neither a host name nor an IP address", name)
	}
	s, _, err := sess(in, "NAME::lookup")
	if err != nil {
		return tcl.Empty, err
	}
	ask, err := s.nameAsker(at)
	if err != nil {
		return tcl.Empty, err
	}
	if len(s.names) >= maxNameLookups {
		return tcl.Empty, tcl.Errorf("NAME::lookup: %d lookups are already waiting on this connection (at most %d)", len(s.names), maxNameLookups)
	}
	wait := maxLookupWait
	if mayBlock(in) {
		wait = nameLookupWait
	}
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	l := &nameLookup{done: make(chan struct{}), cancel: cancel, what: s.logLine("NAME::lookup "+dns.TypeToString[qtype]+" "+a[0].String(), false), wait: wait}
	s.names = append(s.names, l)
	go func() {
		defer close(l.done)
		defer cancel()
		l.recs, l.err = ask(ctx, qtype, name)
	}()
	return tcl.Empty, nil
}

// nameAsker is the query function for NAME::lookup's @ word: an address
// (port 53 unless given), a virtual server's address, a net
// dns-resolver; "" for the system's nameservers.
func (s *ConnState) nameAsker(at string) (func(ctx context.Context, qtype uint16, name string) ([]string, error), error) {
	env := s.prog.env
	viaServer := func(server netip.AddrPort) (func(context.Context, uint16, string) ([]string, error), error) {
		r := env.resolver()
		if r == nil {
			return nil, tcl.Errorf("NAME::lookup: no resolver on this system")
		}
		return func(ctx context.Context, qtype uint16, name string) ([]string, error) {
			return r.Lookup(ctx, server, qtype, name)
		}, nil
	}
	if at == "" {
		return viaServer(netip.AddrPort{})
	}
	if ap, err := netip.ParseAddrPort(at); err == nil {
		return viaServer(ap)
	}
	if addr, err := netip.ParseAddr(at); err == nil {
		return viaServer(netip.AddrPortFrom(addr, 53))
	}
	full := at
	if !strings.HasPrefix(full, "/") {
		full = "/Common/" + full
	}
	if va := env.virtualAddr(); va != nil {
		if ap, ok := va(full); ok {
			return viaServer(ap)
		}
	}
	if env != nil && env.NetResolver != nil {
		if mr, ok := env.NetResolver(full); ok && mr != nil {
			return func(ctx context.Context, qtype uint16, name string) ([]string, error) {
				m, err := mr.Message(ctx, name, qtype)
				if err != nil {
					return nil, err
				}
				return answers(m, qtype), nil
			}, nil
		}
	}
	return nil, tcl.Errorf("NAME::lookup: @%s is neither a nameserver address nor a virtual server or net dns-resolver", at)
}

// raiseNameResolved runs NAME_RESOLVED once for each lookup the event
// from asked, in order, each when its answer is in: the connection waits
// meanwhile. A lookup that failed answers an empty string, logged.
func (s *ConnState) raiseNameResolved(from Event) error {
	side := from.side()
	for n := 0; len(s.names) > 0 && n < maxNameLookups && !s.ended; n++ {
		l := s.names[0]
		s.names[0] = nil
		s.names = s.names[1:]
		t := time.NewTimer(l.wait + time.Second)
		select {
		case <-l.done:
		case <-t.C:
			l.cancel()
			<-l.done
		}
		t.Stop()
		if l.err != nil {
			s.prog.env.log("local0.warning", fmt.Sprintf("%s: %v", l.what, l.err))
		}
		out := make([]tcl.Value, len(l.recs))
		for i, r := range l.recs {
			out[i] = tcl.Str(r)
		}
		s.nameResp = tcl.List(out...)
		if l.recs == nil {
			s.nameResp = tcl.Empty
		}
		if err := s.runAs(NameResolved, side); err != nil {
			s.cancelNames()
			return err
		}
	}
	s.cancelNames()
	s.event = from
	return nil
}

// runAs runs ev's enabled handlers on side, as Run does, for an event
// the rules raise themselves.
func (s *ConnState) runAs(ev Event, side Side) error {
	hs := s.prog.handlers[ev]
	if len(hs) == 0 {
		return nil
	}
	steps, timeout := s.prog.env.budget()
	s.event = ev
	for _, ph := range hs {
		h := ph.h
		if s.disabled[ph.ri].has(ev) {
			continue
		}
		s.cur, s.curIdx, s.side, s.ended = h, ph.ri, side, false
		start := time.Since(monoEpoch)
		s.in.SetBudgetAfter(steps, monoEpoch, start+timeout)
		_, err := s.in.Eval(h.body)
		d := time.Since(monoEpoch) - start
		if err != nil && !tcl.IsReturn(err) {
			h.stats.record(s.shard, d, ranFailed)
			return s.fail(h, err)
		}
		o := ranOK
		if s.ended {
			o = ranAborted
		}
		h.stats.record(s.shard, d, o)
	}
	s.cur = nil
	return nil
}

// cancelNames stops the lookups still waiting (the connection ended, or
// its event failed).
func (s *ConnState) cancelNames() {
	for _, l := range s.names {
		if l != nil {
			l.cancel()
		}
	}
	s.names = nil
}

// cmdNameResponse is NAME::response: in NAME_RESOLVED, the answer of
// the lookup that raised it, as a list (the addresses of an A lookup,
// the name of a PTR one); empty when nothing was found or no nameserver
// answered.
func cmdNameResponse(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("NAME::response")
	}
	s, _, err := sess(in, "NAME::response")
	if err != nil {
		return tcl.Empty, err
	}
	if s.nameResp == (tcl.Value{}) {
		return tcl.Empty, nil
	}
	return s.nameResp, nil
}

// cmdResolverSummarize is `RESOLVER::summarize DNS_MESSAGE`: the answer
// section of a RESOLVER::name_lookup answer as a list with one element
// per record, each the list {name ttl class type rdata} in master-file
// form [M: as F5's examples show it; EDNS's OPT is left out].
func cmdResolverSummarize(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("RESOLVER::summarize dns_message")
	}
	if args[1].String() == "" {
		return tcl.Empty, nil // name_lookup found no nameserver
	}
	m, err := dnsMsgArg("RESOLVER::summarize", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	out := make([]tcl.Value, 0, len(m.Answer))
	for _, rr := range m.Answer {
		h := rr.Header()
		rdata := strings.TrimPrefix(rr.String(), h.String())
		out = append(out, tcl.List(tcl.Str(h.Name), tcl.Int(int64(h.Ttl)), tcl.Str(dns.ClassToString[h.Class]),
			tcl.Str(dns.TypeToString[h.Rrtype]), tcl.Str(strings.TrimSpace(rdata))))
	}
	return tcl.List(out...), nil
}
