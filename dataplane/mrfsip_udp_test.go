package dataplane

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfsip"
)

// TestMRFSIPUDP: a UDP virtual with SIP message routing between real UDP
// clients and members: requests go by route (request-uri), by a rule
// (MR::message route in SIP_REQUEST) or to the pool, each client of
// several at once gets its own answers, a peer nobody listens on gets
// the virtual's 503, a route back to the virtual itself the virtual's
// 482 (loop-detection), and the router counts what it routed.
func TestMRFSIPUDP(t *testing.T) {
	t.Parallel()
	startSIPUDPMember(t, "127.147.1.1:5070", "S1")
	startSIPUDPMember(t, "127.147.1.2:5070", "S2")
	startSIPUDPMember(t, "127.147.1.4:5070", "SD")
	p, _ := newPlane(t)
	cfg := udpBasic("127.147.1.10:5060", "127.147.1.4:5070")
	for name, m := range map[string]string{"pa": "127.147.1.1:5070", "pb": "127.147.1.2:5070", "pdead": "127.147.1.3:5070", "pself": "127.147.1.10:5060"} {
		a := ap(m)
		cfg.Pools["/Common/"+name] = &Pool{Name: "/Common/" + name, LBMode: RoundRobin, Members: []Member{{Node: "/Common/" + a.Addr().String(), Addr: a}}}
	}
	peers := map[string]*mrf.Peer{}
	route := func(name, user, pool string) *mrf.Route {
		pr := &mrf.Peer{Name: "/Common/peer_" + name, Pool: "/Common/" + pool, Conns: 1}
		peers[pr.Name] = pr
		r := &mrf.Route{Name: "/Common/r_" + name, Peers: []*mrf.Peer{pr}}
		if user != "" {
			r.Keys[mrfsip.KeyRequest] = user
		}
		return r
	}
	routes := []*mrf.Route{route("a", "alice", "pa"), route("dead", "dead", "pdead"), route("self", "loop", "pself")}
	route("b", "", "pb") // a peer no route names: the rule's
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/sess", Router: "/Common/rt", UDP: true, Idle: time.Minute, DefaultPool: "/Common/pool",
		Proto:  mrfsip.New(&mrfsip.Session{InsertVia: true, MaxForwards: true, Respond: true, LoopDetect: true, UDP: true, Host: "127.147.1.10:5060", Salt: 5}),
		Routes: routes, Peers: peers, Transports: map[string]*mrf.Transport{}}
	r, _ := compileRules(t, `when SIP_REQUEST {
  if { [SIP::header X-Go] eq "b" } { MR::message route peer /Common/peer_b }
}`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)

	req := func(user, id, extra string) string {
		return strings.NewReplacer("sip:b@example.com SIP/2.0", "sip:"+user+"@example.com SIP/2.0").Replace(sipReq("OPTIONS", id, id, 1, extra))
	}
	// Several clients at once, each over its own address and port.
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for c := range 4 {
		u := dialUDP(t, fmt.Sprintf("127.147.9.%d:0", c+1), "127.147.1.10:5060")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5 {
				for _, tc := range []struct{ user, extra, member string }{{"alice", "", "S1"}, {"dave", "", "SD"}, {"erin", "X-Go: b\r\n", "S2"}} {
					id := fmt.Sprintf("c%d-%s-%d", c, tc.user, i)
					var a string
					for try := 0; try < 5 && a == ""; try++ {
						a = u.ask(req(tc.user, id, tc.extra))
					}
					head := sipHead(a)
					if got := sipField(head, "X-Member"); got != tc.member || sipField(head, "Call-ID") != id || strings.Count(head, "\r\nVia:") != 1 {
						errs <- fmt.Errorf("client %d %s: answered by %q:\n%s", c, id, got, head)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	u := dialUDP(t, "127.147.9.9:0", "127.147.1.10:5060")
	for _, tc := range []struct{ user, status string }{{"dead", "SIP/2.0 503 "}, {"loop", "SIP/2.0 482 "}} {
		if a := u.mustAsk(req(tc.user, "x-"+tc.user, "")); !strings.HasPrefix(a, tc.status) {
			t.Fatalf("%s: got %q, want %q", tc.user, a, tc.status)
		}
	}
	c := p.ProfileStats(ProfileMRFRouter, "/Common/rt", []string{"/Common/vs"}).MRF
	if c.Routed < 60 || c.Answered < 60 || c.FailAnswered < 1 || c.Local < 1 {
		t.Fatalf("routed %d answered %d failures answered %d local %d", c.Routed, c.Answered, c.FailAnswered, c.Local)
	}
}
