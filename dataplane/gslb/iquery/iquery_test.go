package iquery

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"
)

type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func identity(t *testing.T, name string) *Identity {
	t.Helper()
	id, err := NewIdentity(name)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func trusting(t *testing.T, ids ...*Identity) *Trust {
	t.Helper()
	tr := NewTrust()
	for _, id := range ids {
		if name, err := tr.Add(id.CertPEM()); err != nil || name != id.Name {
			t.Fatalf("Add: %q %v", name, err)
		}
	}
	return tr
}

// event is one thing a subscriber saw.
type event struct {
	peer   string
	down   bool
	report Report
}

func subscriber(t *testing.T, id *Identity, tr *Trust, log *slog.Logger) (*Subscriber, chan event) {
	ch := make(chan event, 100)
	s := NewSubscriber(id, tr, Events{
		Report: func(peer string, r Report) { ch <- event{peer: peer, report: r} },
		Down:   func(peer string, err error) { ch <- event{peer: peer, down: true} },
	}, 50*time.Millisecond, log)
	t.Cleanup(s.Close)
	return s, ch
}

// next waits (boundedly) for the next event of peer matching want,
// dropping that peer's events before it.
func next(t *testing.T, ch chan event, peer string, want func(event) bool) event {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case e := <-ch:
			if e.peer != peer {
				ch <- e // another peer's: kept, in its order
				time.Sleep(time.Millisecond)
				continue
			}
			if want(e) {
				return e
			}
		case <-deadline:
			t.Fatalf("no expected event from %s", peer)
		}
	}
}

// One GSLB ltmd and two datacenter ltmd on loopback: the GSLB gets each
// datacenter's virtual servers and their changes; a datacenter that goes
// away is reported down and comes back when it returns.
func TestStreamFromTwoDatacenters(t *testing.T) {
	gtm, dc1, dc2 := identity(t, "gtm"), identity(t, "dc1"), identity(t, "dc2")
	var logs logBuf
	log := slog.New(slog.NewTextHandler(&logs, nil))
	p1, err := Listen("127.0.90.1:0", dc1, trusting(t, gtm), log)
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	p2, err := Listen("127.0.90.2:0", dc2, trusting(t, gtm), log)
	if err != nil {
		t.Fatal(err)
	}
	vs := VirtualServer{Name: "vs1", Destination: netip.MustParseAddrPort("127.0.91.1:80"), Available: true, Connections: 3}
	p1.Publish([]VirtualServer{vs})
	p2.Publish([]VirtualServer{{Name: "vs2", Destination: netip.MustParseAddrPort("127.0.91.2:80"), Available: true}})

	sub, ch := subscriber(t, gtm, trusting(t, dc1, dc2), log)
	a1, a2 := p1.Addr().String(), p2.Addr().String()
	sub.Follow(a1)
	sub.Follow(a2)
	e := next(t, ch, a1, func(e event) bool { return !e.down })
	if e.report.Device != "dc1" || len(e.report.VirtualServers) != 1 || e.report.VirtualServers[0] != vs {
		t.Errorf("dc1: %+v", e.report)
	}
	next(t, ch, a2, func(e event) bool { return !e.down && e.report.Device == "dc2" })

	// A change streams.
	vs.Available, vs.BitsIn = false, 8000
	p1.Publish([]VirtualServer{vs})
	next(t, ch, a1, func(e event) bool {
		return !e.down && len(e.report.VirtualServers) == 1 && !e.report.VirtualServers[0].Available && e.report.VirtualServers[0].BitsIn == 8000
	})

	// dc2 goes away: reported down; back on its address: reports again.
	p2.Close()
	next(t, ch, a2, func(e event) bool { return e.down })
	p2, err = Listen(a2, dc2, trusting(t, gtm), log)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	next(t, ch, a2, func(e event) bool { return !e.down && e.report.Device == "dc2" })
	if strings.Contains(logs.String(), "refused") {
		t.Errorf("trusted peers refused: %s", logs.String())
	}
}

// A certificate that is not trusted is refused and logged, both ways: a
// subscriber a datacenter does not trust gets nothing, and a publisher
// the GSLB does not trust is not listened to.
func TestUntrustedRefused(t *testing.T) {
	gtm, dc1, rogue := identity(t, "gtm"), identity(t, "dc1"), identity(t, "rogue")
	var dcLogs, gtmLogs logBuf
	p1, err := Listen("127.0.90.3:0", dc1, trusting(t, gtm), slog.New(slog.NewTextHandler(&dcLogs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer p1.Close()
	p1.Publish([]VirtualServer{{Name: "vs1", Available: true}})
	a1 := p1.Addr().String()

	// The rogue trusts dc1, but dc1 does not trust the rogue.
	rs, rch := subscriber(t, rogue, trusting(t, dc1), slog.New(slog.NewTextHandler(&gtmLogs, nil)))
	rs.Follow(a1)
	next(t, rch, a1, func(e event) bool { return e.down })
	select {
	case e := <-rch:
		if !e.down {
			t.Fatalf("untrusted subscriber got a report: %+v", e.report)
		}
	case <-time.After(200 * time.Millisecond):
	}
	if l := dcLogs.String(); !strings.Contains(l, "refused a peer") || !strings.Contains(l, `certificate of \"rogue\"`) {
		t.Errorf("dc1's log: %s", l)
	}

	// A rogue publisher: the GSLB does not trust it.
	rp, err := Listen("127.0.90.4:0", rogue, trusting(t, gtm), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer rp.Close()
	var logs logBuf
	gs, gch := subscriber(t, gtm, trusting(t, dc1), slog.New(slog.NewTextHandler(&logs, nil)))
	gs.Follow(rp.Addr().String())
	next(t, gch, rp.Addr().String(), func(e event) bool { return e.down })
	if l := logs.String(); !strings.Contains(l, "refused a peer") || !strings.Contains(l, `certificate of \"rogue\"`) {
		t.Errorf("gtm's log: %s", l)
	}
}

// A peer followed at two addresses whose first is dead is reached at the
// second, without a down event; its reports and state say which address
// they came over. When the live address goes too, one down event names
// both failures; when it returns, the peer reports again.
func TestFollowAddrsFailover(t *testing.T) {
	gtm, dc := identity(t, "gtm"), identity(t, "dc")
	dead, err := Listen("127.0.90.5:0", dc, trusting(t, gtm), nil)
	if err != nil {
		t.Fatal(err)
	}
	deadAddr := dead.Addr().String()
	dead.Close() // nothing listens there now: connections are refused
	p, err := Listen("127.0.90.6:0", dc, trusting(t, gtm), nil)
	if err != nil {
		t.Fatal(err)
	}
	live := p.Addr().String()
	p.Publish([]VirtualServer{{Name: "vs1", Available: true}})

	sub, ch := subscriber(t, gtm, trusting(t, dc), nil)
	sub.FollowAddrs("dc", []string{deadAddr, live})
	e := next(t, ch, "dc", func(event) bool { return true })
	if e.down || e.report.Device != "dc" || e.report.Via != live {
		t.Fatalf("first event: %+v, want a report via %s", e, live)
	}
	ps := sub.Peers()
	if len(ps) != 1 || !ps[0].Connected || ps[0].Via != live || ps[0].Addr != "dc" || len(ps[0].Addrs) != 2 {
		t.Errorf("Peers: %+v", ps)
	}

	p.Close()
	next(t, ch, "dc", func(e event) bool { return e.down })
	deadline := time.Now().Add(10 * time.Second)
	for {
		ps = sub.Peers()
		if len(ps) == 1 && !ps[0].Connected && strings.Contains(ps[0].LastError, deadAddr) && strings.Contains(ps[0].LastError, live) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Peers while both are down: %+v", ps)
		}
		time.Sleep(20 * time.Millisecond)
	}
	p, err = Listen(live, dc, trusting(t, gtm), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	next(t, ch, "dc", func(e event) bool { return !e.down && e.report.Via == live })
}
