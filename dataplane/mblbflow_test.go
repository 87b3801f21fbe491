package dataplane

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/mblb"
)

// seedRule is seed 000's mblb-basic rule: one read is one transaction.
const seedRule = `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA { TCP::release; TCP::notify request; TCP::collect }
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA { TCP::release; TCP::notify response; TCP::collect }
`

// lengthRule finds 4-byte big-endian length-prefixed messages on both
// sides, several per event, for transactions above one segment.
const lengthRule = `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    while { [TCP::payload length] >= 4 } {
        binary scan [TCP::payload 4] I len
        set need [expr {$len + 4}]
        if { [TCP::payload length] < $need } { TCP::collect $need; return }
        TCP::release $need
        TCP::notify request
    }
    TCP::collect
}
when SERVER_CONNECTED { TCP::collect }
when SERVER_DATA {
    while { [TCP::payload length] >= 4 } {
        binary scan [TCP::payload 4] I len
        set need [expr {$len + 4}]
        if { [TCP::payload length] < $need } { TCP::collect $need; return }
        TCP::release $need
        TCP::notify response
    }
    TCP::collect
}
`

// lenServer answers each length-prefixed message with a length-prefixed
// "<label>:<message>", after delay; it counts the connections it accepted.
type lenServer struct {
	ln    net.Listener
	label string
	delay time.Duration
	mu    sync.Mutex
	conns map[net.Conn]bool
	total int
	msgs  int
}

func startLenServer(t *testing.T, addr, label string, delay time.Duration) *lenServer {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s := &lenServer{ln: ln, label: label, delay: delay, conns: map[net.Conn]bool{}}
	t.Cleanup(s.kill)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s.mu.Lock()
			s.conns[c] = true
			s.total++
			s.mu.Unlock()
			go s.handle(c)
		}
	}()
	return s
}

func (s *lenServer) handle(c net.Conn) {
	defer c.Close()
	r := bufio.NewReaderSize(c, 64<<10)
	for {
		var hdr [4]byte
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(hdr[:]))
		if _, err := io.ReadFull(r, body); err != nil {
			return
		}
		s.mu.Lock()
		s.msgs++
		s.mu.Unlock()
		if s.delay > 0 {
			time.Sleep(s.delay)
		}
		out := frameMsg(append([]byte(s.label+":"), body...))
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func (s *lenServer) kill() {
	s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
	s.mu.Unlock()
}

func (s *lenServer) count() (conns, msgs int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total, s.msgs
}

func frameMsg(b []byte) []byte {
	out := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(out, uint32(len(b)))
	copy(out[4:], b)
	return out
}

func readMsg(r io.Reader) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(hdr[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

// mblbConfig is seed 000's setup on loopback: virtual vs with SNAT
// automap over two members of one address.
func mblbConfig(vs string, m *MBLB, members ...string) *Config {
	cfg := basic(vs, members...)
	v := cfg.Virtuals["/Common/vs"]
	v.SNAT = SNAT{Type: SNATAutomap}
	v.MBLB = m
	return cfg
}

// countLines counts records whose client side is (or is not) any6.any.
func countFlows(p *Plane) (client, server int) {
	p.table.Walk(flows.Filter{Virtual: "/Common/vs"}, func(r *flows.Record) bool {
		if r.CSClient.IsValid() {
			client++
		} else {
			server++
		}
		return true
	})
	return
}

func TestMBLBSeedRuleSixServerFlows(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.90.11:9000", "S1")
	startServer(t, "127.0.90.11:9001", "S2")
	cfg := mblbConfig("127.0.90.1:9000", &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, "127.0.90.11:9000", "127.0.90.11:9001")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, seedRule)
	mustApply(t, p, cfg)

	// Seed §2.1: a client that connects and sends nothing has only a
	// client-side flow.
	c1 := dialVS(t, "127.0.90.1:9000")
	eventually(t, "the client flow", func() bool { c, s := countFlows(p); return c == 1 && s == 0 })
	for _, r := range flowsOf(p, "/Common/vs") {
		if r.SSServer.IsValid() || r.SSClient.IsValid() {
			t.Fatalf("silent client has a server side: %+v", r)
		}
	}
	// §2.2, §2.4: three clients, each message balanced: six server flows.
	clients := []*client{c1, dialVS(t, "127.0.90.1:9000"), dialVS(t, "127.0.90.1:9000")}
	seen := map[string]int{}
	for round := 0; round < 4; round++ {
		for _, c := range clients {
			seen[c.mustAsk("hello")]++
		}
	}
	if seen["S1 Response"] != 6 || seen["S2 Response"] != 6 {
		t.Fatalf("round robin per message: %v", seen)
	}
	c, s := countFlows(p)
	if c != 3 || s != 6 {
		t.Fatalf("flows: %d client, %d server; want 3 and 6", c, s)
	}
	m1 := memberStat(t, p, "/Common/pool", "/Common/127.0.90.11:9000")
	m2 := memberStat(t, p, "/Common/pool", "/Common/127.0.90.11:9001")
	if m1.TotRequests != 6 || m2.TotRequests != 6 || m1.ServerSide.CurConns != 3 {
		t.Fatalf("member counters: %+v / %+v", m1, m2)
	}
	if m1.ServerSide.BitsOut == 0 || m1.ServerSide.BitsIn == 0 {
		t.Fatalf("member bytes not counted: %+v", m1.ServerSide)
	}
	// The server flows carry SNAT automap's address (the virtual's, with
	// no self IP) and their member.
	for _, r := range flowsOf(p, "/Common/vs") {
		if !r.CSClient.IsValid() && (r.SSClient.Addr().String() != "127.0.90.1" || r.Member == "") {
			t.Fatalf("server flow: %+v", r)
		}
	}
	// A client that leaves takes its server flows with it.
	clients[0].c.Close()
	eventually(t, "the client's flows to go", func() bool { c, s := countFlows(p); return c == 2 && s == 4 })
}

func TestMBLBPipelinedOrderAndSizes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		rule  bool
		size  int
		count int
	}{
		{"length framing 64 B", false, 64, 200},
		{"length rule 64 B", true, 64, 200},
		{"length framing 64 KiB", false, 64 << 10, 20},
		{"length rule 64 KiB", true, 64 << 10, 20},
		{"length framing 1 MiB", false, 1<<20 - 16, 4},
		{"length rule 1 MiB", true, 1<<20 - 16, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			// The slow member answers late: ordering is the proxy's job.
			startLenServer(t, "127.0.90.21:9000", "S1", 2*time.Millisecond)
			startLenServer(t, "127.0.90.21:9001", "S2", 0)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}}
			if tc.rule {
				m.Request = mblb.Framing{Mode: mblb.Rule}
			}
			cfg := mblbConfig("127.0.90.2:9000", m, "127.0.90.21:9000", "127.0.90.21:9001")
			if tc.rule {
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, lengthRule)
			}
			mustApply(t, p, cfg)
			c, err := net.Dial("tcp", "127.0.90.2:9000")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			done := make(chan error, 1)
			go func() {
				w := bufio.NewWriter(c)
				for i := 0; i < tc.count; i++ {
					body := bytes.Repeat([]byte{byte('a' + i%26)}, tc.size)
					copy(body, fmt.Sprintf("%06d", i))
					if _, err := w.Write(frameMsg(body)); err != nil {
						done <- err
						return
					}
				}
				done <- w.Flush()
			}()
			r := bufio.NewReader(c)
			by := map[string]int{}
			for i := 0; i < tc.count; i++ {
				b, err := readMsg(r)
				if err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				label, body, _ := bytes.Cut(b, []byte(":"))
				if want := fmt.Sprintf("%06d", i); len(body) != tc.size || string(body[:6]) != want {
					t.Fatalf("answer %d is for %q (%d bytes)", i, body[:min(6, len(body))], len(body))
				}
				by[string(label)]++
			}
			if err := <-done; err != nil {
				t.Fatal(err)
			}
			if by["S1"] == 0 || by["S2"] == 0 {
				t.Fatalf("not balanced per message: %v", by)
			}
		})
	}
}

func TestMBLBDisableAndForcedOffline(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.90.31:9000", "S1")
	startServer(t, "127.0.90.31:9001", "S2")
	cfg := mblbConfig("127.0.90.3:9000", &MBLB{}, "127.0.90.31:9000", "127.0.90.31:9001")
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.90.3:9000")
	ask := func(n int) map[string]int {
		seen := map[string]int{}
		for i := 0; i < n; i++ {
			seen[c.mustAsk("hello")]++
		}
		return seen
	}
	if seen := ask(4); seen["S1 Response"] != 2 {
		t.Fatalf("both enabled: %v", seen)
	}
	for _, st := range []struct {
		session AdminSession
		state   AdminState
	}{{SessionUserDisabled, ""}, {"", StateUserDown}} {
		cfg2 := mblbConfig("127.0.90.3:9000", &MBLB{}, "127.0.90.31:9000", "127.0.90.31:9001")
		cfg2.Pools["/Common/pool"].Members[1].Session = st.session
		cfg2.Pools["/Common/pool"].Members[1].State = st.state
		mustApply(t, p, cfg2)
		if seen := ask(6); seen["S1 Response"] != 6 {
			t.Fatalf("S2 %s%s still gets messages: %v", st.session, st.state, seen)
		}
		mustApply(t, p, cfg)
		if seen := ask(4); seen["S2 Response"] != 2 {
			t.Fatalf("S2 enabled again: %v", seen)
		}
	}
}

func TestMBLBMemberDiesClientSurvives(t *testing.T) {
	for _, oc := range []bool{false, true} {
		t.Run(fmt.Sprintf("oneconnect=%v", oc), func(t *testing.T) {
			p, lg := newPlane(t)
			s1 := startLenServer(t, "127.0.90.41:9000", "S1", 0)
			s2 := startLenServer(t, "127.0.90.41:9001", "S2", 50*time.Millisecond)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}}
			if oc {
				m.OneConnect = &OneConnect{Profile: "/Common/oneconnect", MaxSize: 2}
			}
			mustApply(t, p, mblbConfig("127.0.90.4:9000", m, "127.0.90.41:9000", "127.0.90.41:9001"))
			c, err := net.Dial("tcp", "127.0.90.4:9000")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(10 * time.Second))
			const n = 20
			for i := 0; i < n; i++ {
				c.Write(frameMsg([]byte(fmt.Sprintf("%03d", i))))
			}
			// S2 dies holding its requests: it has read one and answers
			// each after 50 ms (a fixed sleep raced the dispatch on a
			// loaded machine).
			eventually(t, "S2 to hold a request", func() bool { _, m := s2.count(); return m > 0 })
			s2.kill()
			r := bufio.NewReader(c)
			for i := 0; i < n; i++ {
				b, err := readMsg(r)
				if err != nil {
					t.Fatalf("answer %d: %v\n%s", i, err, lg)
				}
				if !strings.HasSuffix(string(b), fmt.Sprintf(":%03d", i)) {
					t.Fatalf("answer %d: %q", i, b)
				}
			}
			_, msgs := s1.count()
			if msgs < n/2 {
				t.Fatalf("S1 answered %d; the dead member's requests were not re-sent", msgs)
			}
			// More messages all go to S1, without a client reset.
			for i := 0; i < 4; i++ {
				c.Write(frameMsg([]byte("after")))
				if b, err := readMsg(r); err != nil || string(b) != "S1:after" {
					t.Fatalf("after the failure: %q %v", b, err)
				}
			}
			st, _ := p.MBLBStats("/Common/vs")
			if st.Retries == 0 || st.Resets != 0 {
				t.Fatalf("engine stats: %+v", st)
			}
		})
	}
}

func TestMBLBNoMemberResetsClient(t *testing.T) {
	p, _ := newPlane(t)
	mustApply(t, p, mblbConfig("127.0.90.5:9000", &MBLB{}, "127.0.90.51:9000"))
	c := dialVS(t, "127.0.90.5:9000")
	if _, err := c.ask("hello"); err == nil {
		t.Fatal("a message with no member alive was answered")
	}
	eventually(t, "the flow to go", func() bool { a, b := countFlows(p); return a+b == 0 })
}

func TestMBLBOneConnectSharesServerConnections(t *testing.T) {
	p, _ := newPlane(t)
	s1 := startLenServer(t, "127.0.90.61:9000", "S1", 0)
	s2 := startLenServer(t, "127.0.90.61:9001", "S2", 0)
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}},
		OneConnect: &OneConnect{Profile: "/Common/oc", MaxSize: 1}}
	mustApply(t, p, mblbConfig("127.0.90.6:9000", m, "127.0.90.61:9000", "127.0.90.61:9001"))
	var cs []net.Conn
	for i := 0; i < 3; i++ {
		c, err := net.Dial("tcp", "127.0.90.6:9000")
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		cs = append(cs, c)
	}
	for round := 0; round < 4; round++ {
		for i, c := range cs {
			want := fmt.Sprintf("c%d-%d", i, round)
			c.Write(frameMsg([]byte(want)))
			b, err := readMsg(c)
			if err != nil || !strings.HasSuffix(string(b), ":"+want) {
				t.Fatalf("client %d: %q %v", i, b, err)
			}
		}
	}
	c1, _ := s1.count()
	c2, _ := s2.count()
	if c1 != 1 || c2 != 1 {
		t.Fatalf("server connections: %d and %d, want 1 and 1", c1, c2)
	}
	c, s := countFlows(p)
	if c != 3 || s != 2 {
		t.Fatalf("flows: %d client, %d server; want 3 and 2", c, s)
	}
	st, ok := p.OneConnectStats("/Common/oc")
	if !ok || st.New != 2 || st.TotalReuses != 10 {
		t.Fatalf("one-connect stats: %+v %v", st, ok)
	}
}

func TestMBLBDirectedPerMessage(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.90.71:9000", "S1")
	startServer(t, "127.0.90.71:9001", "S2")
	startServer(t, "127.0.90.72:9000", "N1")
	rule := `
when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "to-s2" } {
        pool pool member 127.0.90.71:9001
    } elseif { [TCP::payload] starts_with "to-node" } {
        node 127.0.90.72 9000
    } else {
        pool pool
    }
    TCP::release
    TCP::notify request
    TCP::collect
}
`
	cfg := mblbConfig("127.0.90.7:9000", &MBLB{Request: mblb.Framing{Mode: mblb.Rule}}, "127.0.90.71:9000", "127.0.90.71:9001")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, rule)
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.90.7:9000")
	for i := 0; i < 3; i++ {
		if got := c.mustAsk("to-s2 please"); got != "S2 Response" {
			t.Fatalf("directed to S2: %q", got)
		}
		if got := c.mustAsk("to-node please"); got != "N1 Response" {
			t.Fatalf("directed to the node: %q", got)
		}
	}
	seen := map[string]int{}
	for i := 0; i < 4; i++ {
		seen[c.mustAsk("anything")]++
	}
	if seen["S1 Response"] != 2 || seen["S2 Response"] != 2 {
		t.Fatalf("balanced again: %v", seen)
	}
}

func TestMBLBIdleTimeoutClosesBoth(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.90.81:9000", "S1")
	startServer(t, "127.0.90.81:9001", "S2")
	cfg := mblbConfig("127.0.90.8:9000", &MBLB{}, "127.0.90.81:9000", "127.0.90.81:9001")
	cfg.Virtuals["/Common/vs"].IdleTimeout = 300 * time.Millisecond
	mustApply(t, p, cfg)
	c := dialVS(t, "127.0.90.8:9000")
	c.mustAsk("a")
	c.mustAsk("b")
	if a, b := countFlows(p); a != 1 || b != 2 {
		t.Fatalf("flows %d/%d", a, b)
	}
	eventually(t, "idle flows to go", func() bool { a, b := countFlows(p); return a+b == 0 })
	if _, err := c.ask("again"); err == nil {
		t.Fatal("the idle client was not reset")
	}
	// A new connection gets new server connections (seed §2.3).
	c2 := dialVS(t, "127.0.90.8:9000")
	c2.mustAsk("x")
	if a, b := countFlows(p); a != 1 || b != 1 {
		t.Fatalf("flows after reconnect %d/%d", a, b)
	}
}

func TestMBLBOneConnectExclusiveConcurrentClients(t *testing.T) {
	p, lg := newPlane(t)
	startServer(t, "127.0.90.91:9000", "S1")
	startServer(t, "127.0.90.91:9001", "S2")
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Rule}, OneConnect: &OneConnect{Profile: "/Common/oc", MaxSize: 1}}
	cfg := mblbConfig("127.0.90.9:9000", m, "127.0.90.91:9000", "127.0.90.91:9001")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, seedRule)
	mustApply(t, p, cfg)
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for k := 0; k < 3; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialVS(t, "127.0.90.9:9000")
			for i := 0; i < 200; i++ {
				if _, err := c.ask("hello"); err != nil {
					errs <- fmt.Errorf("message %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("%v\n%s", err, lg)
	}
}

// IP::idle_timeout gives one client's session a timeout of its own on a
// message-balanced virtual: longer than the profile's (the client
// outlives a silence the profile would have ended) or, on a virtual
// without one, a timeout at all.
func TestMBLBRuleIdleTimeout(t *testing.T) {
	p, _ := newPlane(t)
	startServer(t, "127.0.90.101:9000", "S1")
	cfg := mblbConfig("127.0.90.10:9000", &MBLB{}, "127.0.90.101:9000")
	cfg.Virtuals["/Common/vs"].IdleTimeout = 300 * time.Millisecond
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED {
		log local0. "before [IP::idle_timeout]"
		IP::idle_timeout 30
		log local0. "after [IP::idle_timeout]"
	}`)
	cfg2 := mblbConfig("127.0.90.11:9000", &MBLB{}, "127.0.90.101:9000")
	cfg.Virtuals["/Common/vs2"] = cfg2.Virtuals["/Common/vs"]
	cfg.Virtuals["/Common/vs2"].Name = "/Common/vs2"
	cfg.Virtuals["/Common/vs2"].IdleTimeout = 0
	cfg.Virtuals["/Common/vs2"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { IP::idle_timeout 1 }`)
	mustApply(t, p, cfg)

	c := dialVS(t, "127.0.90.10:9000")
	c.mustAsk("a")
	time.Sleep(time.Second) // more than three times the profile's timeout
	c.mustAsk("b")
	if got := strings.Join(lg.Lines(), "\n"); !strings.Contains(got, "before 1") || !strings.Contains(got, "after 30") {
		t.Errorf("log:\n%s", got)
	}

	c2 := dialVS(t, "127.0.90.11:9000")
	for range 8 { // talking every 200 ms: never idle for the rule's second
		c2.mustAsk("x")
		time.Sleep(200 * time.Millisecond)
	}
	eventually(t, "the rule's timeout to end the client", func() bool {
		n := 0
		p.table.Walk(flows.Filter{Virtual: "/Common/vs2"}, func(*flows.Record) bool { n++; return true })
		return n == 0
	})
	if _, err := c2.ask("y"); err == nil {
		t.Fatal("the idle client was not reset")
	}
}
