package dataplane

import (
	"bufio"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfsip"
	"github.com/openltm/openltm/rules"
)

// transportProg is a transport-config's rules as the daemon hands them
// to the dataplane: what gives their program.
type transportProg struct{ p *rules.Program }

func (h transportProg) Program() *rules.Program { return h.p }

// transportRules compiles bodies as a transport-config's rules, their
// log lines in the returned log.
func transportRules(t *testing.T, bodies ...string) (transportProg, *ruleLog) {
	t.Helper()
	lg := &ruleLog{}
	var rs []*rules.Rule
	for i, b := range bodies {
		r, err := rules.Compile("/Common/tc_rule"+string(rune('a'+i)), b)
		if err != nil {
			t.Fatalf("compile: %v", err)
		}
		rs = append(rs, r)
	}
	prog := rules.NewProgram(&rules.Env{Log: lg.log}, rs...)
	if err := prog.Init(); err != nil {
		t.Fatal(err)
	}
	lg.showOnFailure(t)
	return transportProg{prog}, lg
}

// startLabelLines is a member answering each line with its label and the
// line.
func startLabelLines(t *testing.T, addr, label string) {
	serveConns(t, addr, func(c net.Conn) {
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			if _, err := c.Write([]byte(label + " " + sc.Text() + "\n")); err != nil {
				return
			}
		}
	})
}

// waitRuleLog waits (bounded) for a log line holding want.
func waitRuleLog(t *testing.T, lg *ruleLog, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range lg.Lines() {
			if strings.Contains(l, want) {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no log line with %q in %q", want, lg.Lines())
}

// TestMRFTransportRulesGeneric: a generic router's peer whose
// transport-config has rules: the peer connection runs CLIENT_ACCEPTED
// as it opens (IP::remote_addr the member), MR_EGRESS and
// GENERICMESSAGE_EGRESS over each request leaving on it (a rule edit
// reaches the member; MR::message drop keeps one from it), the
// protocol's ingress event and MR_INGRESS over each answer before the
// client's virtual gets it, with variables kept per connection, and
// CLIENT_CLOSED as the connection goes with the virtual.
func TestMRFTransportRulesGeneric(t *testing.T) {
	t.Parallel()
	startLabelLines(t, "127.162.1.1:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.162.1.10:9000")
	withPool(cfg, "/Common/pa", "127.162.1.1:9000")
	prog, lg := transportRules(t, `when CLIENT_ACCEPTED {
  set n 0
  log local0. "accepted [IP::remote_addr]:[TCP::remote_port]"
}
when MR_EGRESS {
  incr n
  if { [GENERICMESSAGE::message text] eq "hide" } {
    MR::message drop hidden
    return
  }
  GENERICMESSAGE::message text "[GENERICMESSAGE::message text]|[MR::transport]|$n"
}
when GENERICMESSAGE_INGRESS {
  GENERICMESSAGE::message text "[GENERICMESSAGE::message text]|back"
}
when MR_INGRESS {
  log local0. "answer [GENERICMESSAGE::message text]"
}
when CLIENT_CLOSED {
  log local0. "closed after $n"
}`)
	tc := &mrf.Transport{Name: "/Common/tc", Rules: prog, RulesKey: "a"}
	peer := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Transport: tc.Name, TC: tc}
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/lines", Router: "/Common/rt", Term: []byte("\n"), MaxRetries: 1, DefaultPool: "/Common/pool",
		Routes: []*mrf.Route{{Name: "/Common/r", Peers: []*mrf.Peer{peer}}}, Peers: map[string]*mrf.Peer{peer.Name: peer},
		Transports: map[string]*mrf.Transport{tc.Name: tc}}
	mustApply(t, p, cfg)

	c, err := net.DialTimeout("tcp", "127.162.1.10:9000", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(c)
	ask := func(msg string) string {
		t.Helper()
		if _, err := c.Write([]byte(msg + "\n")); err != nil {
			t.Fatal(err)
		}
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", msg, err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	if got, want := ask("hello"), "S1 hello|config /Common/tc|1|back"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	waitRuleLog(t, lg, "accepted 127.162.1.1:9000")
	// The dropped request is not answered; the next one is, its number
	// counted on the connection's own session.
	c.Write([]byte("hide\n"))
	if got, want := ask("again"), "S1 again|config /Common/tc|3|back"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	waitRuleLog(t, lg, "answer S1 again|config /Common/tc|3|back")
	if c := p.ProfileStats(ProfileMRFRouter, "/Common/rt", []string{"/Common/vs"}).MRF; c.Dropped < 1 || c.Answered != 2 {
		t.Fatalf("dropped %d answered %d", c.Dropped, c.Answered)
	}
	// The virtual gone, its router's peer connection goes: CLIENT_CLOSED.
	delete(cfg.Virtuals, "/Common/vs")
	mustApply(t, p, cfg)
	waitRuleLog(t, lg, "closed after 3")
}

// TestMRFTransportRulesSIP: a SIP router's UDP peer flows made by a
// transport-config with rules: SIP_REQUEST_SEND edits the request as it
// leaves toward the member, SIP_RESPONSE and MR_INGRESS there read and
// edit the member's response before the client gets it, and `reject`
// in CLIENT_ACCEPTED closes the connection, the request failing (the
// virtual's 503).
func TestMRFTransportRulesSIP(t *testing.T) {
	t.Parallel()
	m1 := startSIPUDPMember(t, "127.162.2.1:5070", "S1")
	startSIPUDPMember(t, "127.162.2.2:5070", "S2")
	p, _ := newPlane(t)
	cfg := udpBasic("127.162.2.10:5060", "127.162.2.2:5070")
	withPool(cfg, "/Common/pa", "127.162.2.1:5070")
	withPool(cfg, "/Common/pb", "127.162.2.2:5070")
	prog, lg := transportRules(t, `when CLIENT_ACCEPTED {
  if { [IP::remote_addr] eq "127.162.2.2" } { reject }
}
when SIP_REQUEST_SEND {
  SIP::header insert X-TC "[MR::transport] [SIP::method]"
}
when SIP_RESPONSE {
  SIP::header insert X-Back "[SIP::response code] from [SIP::header X-Member]"
}
when MR_INGRESS {
  log local0. "mr ingress [SIP::header X-Back]"
}`)
	tc := &mrf.Transport{Name: "/Common/tc", UDP: true, Rules: prog, RulesKey: "a"}
	pa := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Transport: tc.Name, TC: tc}
	pb := &mrf.Peer{Name: "/Common/peer_b", Pool: "/Common/pb", Conns: 1, Transport: tc.Name, TC: tc}
	ra := &mrf.Route{Name: "/Common/r_a", Peers: []*mrf.Peer{pa}}
	ra.Keys[mrfsip.KeyRequest] = "alice"
	rb := &mrf.Route{Name: "/Common/r_b", Peers: []*mrf.Peer{pb}}
	rb.Keys[mrfsip.KeyRequest] = "bob"
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/sess", Router: "/Common/rt", UDP: true, Idle: time.Minute, DefaultPool: "/Common/pool",
		Proto:  mrfsip.New(&mrfsip.Session{InsertVia: true, MaxForwards: true, Respond: true, UDP: true, Host: "127.162.2.10:5060", Salt: 7}),
		Routes: []*mrf.Route{ra, rb}, Peers: map[string]*mrf.Peer{pa.Name: pa, pb.Name: pb}, Transports: map[string]*mrf.Transport{tc.Name: tc}}
	mustApply(t, p, cfg)

	req := func(user, id string) string {
		return strings.NewReplacer("sip:b@example.com SIP/2.0", "sip:"+user+"@example.com SIP/2.0").Replace(sipReq("OPTIONS", id, id, 1, ""))
	}
	u := dialUDP(t, "127.162.9.1:0", "127.162.2.10:5060")
	head := sipHead(u.mustAsk(req("alice", "call-a")))
	if got := sipField(head, "X-Back"); got != "200 from S1" || sipField(head, "X-Member") != "S1" {
		t.Fatalf("response to the client:\n%s", head)
	}
	waitRuleLog(t, lg, "mr ingress 200 from S1")
	var seen string
	for _, s := range m1.seen() {
		if s.callID == "call-a" {
			seen = s.head
		}
	}
	if got := sipField(seen, "X-TC"); got != "config /Common/tc OPTIONS" {
		t.Fatalf("request at the member:\n%s", seen)
	}
	// peer_b's flow is rejected as it opens: the request fails.
	if a := u.mustAsk(req("bob", "call-b")); !strings.HasPrefix(a, "SIP/2.0 503 ") {
		t.Fatalf("bob: got %q", a)
	}
}

// TestMRFMessageClone: MR::message clone in a virtual's MR_INGRESS sends
// the message and its clones each on its way (the client gets an answer
// for each, the clones running MR_INGRESS themselves); a message sent
// with existing_connections_only to a peer with no open connection
// fails (MR_FAILED); MR::message snat sets the source of the peer
// connection a message opens.
func TestMRFMessageClone(t *testing.T) {
	t.Parallel()
	startLabelLines(t, "127.162.4.1:9000", "S1")
	var srcs = make(chan string, 8)
	serveConns(t, "127.162.4.2:9000", func(c net.Conn) {
		srcs <- c.RemoteAddr().(*net.TCPAddr).IP.String()
		sc := bufio.NewScanner(c)
		for sc.Scan() {
			c.Write([]byte("S2 " + sc.Text() + "\n"))
		}
	})
	p, _ := newPlane(t)
	cfg := basic("127.162.4.10:9000")
	withPool(cfg, "/Common/pa", "127.162.4.1:9000")
	withPool(cfg, "/Common/pb", "127.162.4.2:9000")
	pa := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1}
	pb := &mrf.Peer{Name: "/Common/peer_b", Pool: "/Common/pb", Conns: 1}
	r, lg := compileRules(t, `when MR_INGRESS {
  set t [GENERICMESSAGE::message text]
  if { [MR::message clone_id] ne "" } {
    GENERICMESSAGE::message text "$t clone [MR::message clone_id] of [MR::message clone_count]"
  } elseif { $t eq "twice" } {
    MR::message clone again
  } elseif { $t eq "existing" } {
    MR::message existing_connections_only 1
    MR::message route peer /Common/peer_b
  } elseif { $t eq "from" } {
    MR::message snat address 127.162.4.77
    MR::message route peer /Common/peer_b
  }
}
when MR_FAILED {
  log local0. "failed [GENERICMESSAGE::message text] [MR::message status]"
  GENERICMESSAGE::message text "failed"
  MR::return
}`)
	lg.showOnFailure(t)
	setVirtualRules(cfg, "/Common/vs", r)
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/lines", Router: "/Common/rt", Term: []byte("\n"), MaxRetries: 1, DefaultPool: "/Common/pool",
		Routes: []*mrf.Route{{Name: "/Common/r", Peers: []*mrf.Peer{pa}}}, Peers: map[string]*mrf.Peer{pa.Name: pa, pb.Name: pb},
		Transports: map[string]*mrf.Transport{}}
	mustApply(t, p, cfg)

	c, err := net.DialTimeout("tcp", "127.162.4.10:9000", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	rd := bufio.NewReader(c)
	read := func() string {
		t.Helper()
		line, err := rd.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSuffix(line, "\n")
	}
	c.Write([]byte("twice\n"))
	got := []string{read(), read()}
	sort.Strings(got) // the clone may leave before the original
	if got[0] != "S1 twice" || got[1] != "S1 twice clone again of 2" {
		t.Fatalf("answers %q", got)
	}
	c.Write([]byte("existing\n"))
	if got := read(); got != "failed" {
		t.Fatalf("existing_connections_only: %q", got)
	}
	c.Write([]byte("from\n"))
	if got := read(); got != "S2 from" {
		t.Fatalf("snat: %q", got)
	}
	if src := <-srcs; src != "127.162.4.77" {
		t.Fatalf("peer_b's connection came from %s", src)
	}
}
