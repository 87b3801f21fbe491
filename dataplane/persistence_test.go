package dataplane

import (
	"io"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/persist"
)

// testClock is an injectable clock for the persistence table.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *testClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *testClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func srcAddr(timeout time.Duration) *Persistence {
	return &Persistence{Profile: "/Common/source_addr", Method: PersistSourceAddr, Timeout: timeout}
}

// askFrom connects from src, asks once, closes, and returns the answer.
func askFrom(t *testing.T, src, vs string) string {
	t.Helper()
	c := dialFrom(t, src, vs)
	defer c.c.Close()
	return c.mustAsk("hello")
}

func records(p *Plane, f persist.Filter) []persist.Record {
	var out []persist.Record
	p.PersistRecords(f, func(r *persist.Record) bool { out = append(out, *r); return true })
	return out
}

func setMember(cfg *Config, pool string, i int, fn func(*Member)) *Config {
	// Configs given to Apply must not change afterwards: copy what changes.
	c := *cfg
	c.Pools = map[string]*Pool{}
	for n, p := range cfg.Pools {
		pc := *p
		pc.Members = append([]Member(nil), p.Members...)
		c.Pools[n] = &pc
	}
	fn(&c.Pools[pool].Members[i])
	return &c
}

func other(label string) string {
	if label == "S1 Response" {
		return "S2 Response"
	}
	return "S1 Response"
}

func TestSourceAddrPersistenceBeatsRoundRobin(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.100.11:9000", "S1")
	startServer(t, "127.0.100.12:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.100.1:9000", "127.0.100.11:9000", "127.0.100.12:9000")
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(180 * time.Second)
	mustApply(t, p, cfg)

	first := askFrom(t, "127.0.100.50", "127.0.100.1:9000")
	for i := 0; i < 5; i++ {
		if got := askFrom(t, "127.0.100.50", "127.0.100.1:9000"); got != first {
			t.Fatalf("connection %d went to %q, persisted to %q", i+2, got, first)
		}
	}
	recs := records(p, persist.Filter{})
	if len(recs) != 1 {
		t.Fatalf("%d records, want 1: %+v", len(recs), recs)
	}
	r := recs[0]
	member := ap("127.0.100.11:9000")
	if first == "S2 Response" {
		member = ap("127.0.100.12:9000")
	}
	if r.Mode != persist.SourceAddress || r.String() != "127.0.100.50" || r.VirtualAddr != ap("127.0.100.1:9000") ||
		r.Member != member || r.Pool != "/Common/pool" || r.Virtual != "/Common/vs" || r.Timeout != 180*time.Second {
		t.Fatalf("record %+v", r)
	}

	// Without persistence the same client alternates.
	cfg2 := basic("127.0.100.1:9000", "127.0.100.11:9000", "127.0.100.12:9000")
	mustApply(t, p, cfg2)
	a, b := askFrom(t, "127.0.100.50", "127.0.100.1:9000"), askFrom(t, "127.0.100.50", "127.0.100.1:9000")
	if a == b {
		t.Fatalf("without persistence both connections went to %q", a)
	}
}

func TestSourceAddrMaskGroupsClients(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.100.21:9000", "S1")
	startServer(t, "127.0.100.22:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.100.2:9000", "127.0.100.21:9000", "127.0.100.22:9000")
	pers := srcAddr(time.Minute)
	pers.Mask = netip.MustParseAddr("255.255.255.0")
	cfg.Virtuals["/Common/vs"].Persist = pers
	mustApply(t, p, cfg)
	// Many clients behind one subnet (or one NAT address) all land on one
	// member: the persistence record explains the uneven pool.
	first := askFrom(t, "127.0.101.10", "127.0.100.2:9000")
	for _, src := range []string{"127.0.101.11", "127.0.101.12", "127.0.101.200"} {
		if got := askFrom(t, src, "127.0.100.2:9000"); got != first {
			t.Fatalf("client %s went to %q, the subnet persists to %q", src, got, first)
		}
	}
	recs := records(p, persist.Filter{})
	if len(recs) != 1 || recs[0].String() != "127.0.101.0" || recs[0].Client != netip.MustParseAddr("127.0.101.200") {
		t.Fatalf("records %+v", recs)
	}
	if n := len(records(p, persist.Filter{ClientAddr: netip.MustParseAddr("127.0.101.0")})); n != 1 {
		t.Fatalf("filter by masked key: %d", n)
	}
}

func TestPersistedClientAndMemberStates(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.100.31:9000", "S1")
	startServer(t, "127.0.100.32:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.100.3:9000", "127.0.100.31:9000", "127.0.100.32:9000")
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(time.Minute)
	mustApply(t, p, cfg)
	first := askFrom(t, "127.0.100.60", "127.0.100.3:9000")
	idx := 0
	if first == "S2 Response" {
		idx = 1
	}

	// Disabled: no new load-balancing picks, but the persisted client
	// still goes there; a new client does not.
	disabled := setMember(cfg, "/Common/pool", idx, func(m *Member) { m.Session = SessionUserDisabled })
	mustApply(t, p, disabled)
	for i := 0; i < 3; i++ {
		if got := askFrom(t, "127.0.100.60", "127.0.100.3:9000"); got != first {
			t.Fatalf("persisted client went to %q with its member disabled, want %q", got, first)
		}
		if got := askFrom(t, "127.0.100.61", "127.0.100.3:9000"); got != other(first) {
			t.Fatalf("a new client reached the disabled member: %q", got)
		}
	}

	// Forced offline: the persisted client is balanced again and gets a
	// new record.
	forced := setMember(cfg, "/Common/pool", idx, func(m *Member) { m.State = StateUserDown })
	mustApply(t, p, forced)
	if got := askFrom(t, "127.0.100.60", "127.0.100.3:9000"); got != other(first) {
		t.Fatalf("persisted client went to %q with its member forced offline", got)
	}
	recs := records(p, persist.Filter{ClientAddr: netip.MustParseAddr("127.0.100.60")})
	if len(recs) != 1 || (recs[0].Member.Addr() == netip.MustParseAddr("127.0.100.31")) != (other(first) == "S1 Response") {
		t.Fatalf("record not replaced: %+v", recs)
	}
	// Back up: the client stays where its new record points.
	mustApply(t, p, cfg)
	if got := askFrom(t, "127.0.100.60", "127.0.100.3:9000"); got != other(first) {
		t.Fatalf("after re-enabling, the client went to %q", got)
	}
}

func TestPersistedMemberDownIsRebalanced(t *testing.T) {
	t.Parallel()
	s1 := startServer(t, "127.0.100.41:9000", "S1")
	s2 := startServer(t, "127.0.100.42:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.100.4:9000", "127.0.100.41:9000", "127.0.100.42:9000")
	tcpMonitor(cfg)
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(time.Minute)
	mustApply(t, p, cfg)
	eventually(t, "both members up", func() bool {
		return memberStat(t, p, "/Common/pool", "/Common/127.0.100.41:9000").MonitorStatus == "up" &&
			memberStat(t, p, "/Common/pool", "/Common/127.0.100.42:9000").MonitorStatus == "up"
	})
	first := askFrom(t, "127.0.100.70", "127.0.100.4:9000")
	victim, name := s1, "/Common/127.0.100.41:9000"
	if first == "S2 Response" {
		victim, name = s2, "/Common/127.0.100.42:9000"
	}
	victim.kill()
	eventually(t, "the member marked down", func() bool {
		return memberStat(t, p, "/Common/pool", name).MonitorStatus == "down"
	})
	if got := askFrom(t, "127.0.100.70", "127.0.100.4:9000"); got != other(first) {
		t.Fatalf("persisted client went to %q with its member down", got)
	}
}

func TestMatchAcrossServices(t *testing.T) {
	t.Parallel()
	// The Tuxedo pattern: one client's WSL and WSH connections reach one
	// virtual address on two ports; the second must go to the node the
	// first went to.
	for _, port := range []string{"6789", "10100"} {
		startServer(t, "127.0.100.81:"+port, "S1")
		startServer(t, "127.0.100.82:"+port, "S2")
	}
	p, _ := newPlane(t)
	cfg := basic("127.0.100.8:6789", "127.0.100.81:6789", "127.0.100.82:6789")
	pers := srcAddr(time.Hour)
	pers.MatchAcrossServices = true
	cfg.Virtuals["/Common/vs"].Persist = pers
	withPool(cfg, "/Common/wsh", "127.0.100.81:0", "127.0.100.82:0")
	cfg.Virtuals["/Common/wsh_vs"] = &Virtual{Name: "/Common/wsh_vs", Destination: ap("127.0.100.8:10100"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/wsh", SNAT: SNAT{Type: SNATNone}, Persist: pers}
	mustApply(t, p, cfg)
	// One stray WSH connection, so that the two pools' rotations differ and
	// only persistence can keep a client's connections together.
	askFrom(t, "127.0.102.99", "127.0.100.8:10100")
	for i, src := range []string{"127.0.102.1", "127.0.102.2", "127.0.102.3", "127.0.102.4"} {
		wsl := askFrom(t, src, "127.0.100.8:6789")
		// Round robin on the WSH pool would alternate; persistence keeps
		// every client's WSH on its WSL server.
		for j := 0; j < 2; j++ {
			if wsh := askFrom(t, src, "127.0.100.8:10100"); wsh != wsl {
				t.Fatalf("client %d: WSL on %q, WSH on %q", i, wsl, wsh)
			}
		}
	}
	// Each virtual keeps its own records (the WSH ones refresh the node
	// choice for later lookups).
	if n := len(records(p, persist.Filter{Virtual: "/Common/wsh_vs"})); n != 5 {
		t.Fatalf("%d WSH records, want 5", n)
	}
}

func TestOverrideConnectionLimit(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.100.91:9000", "S1")
	startServer(t, "127.0.100.92:9000", "S2")
	for _, override := range []bool{false, true} {
		p, _ := newPlane(t)
		cfg := basic("127.0.100.9:9000", "127.0.100.91:9000", "127.0.100.92:9000")
		for i := range cfg.Pools["/Common/pool"].Members {
			cfg.Pools["/Common/pool"].Members[i].ConnectionLimit = 1
		}
		pers := srcAddr(time.Minute)
		pers.OverrideConnectionLimit = override
		cfg.Virtuals["/Common/vs"].Persist = pers
		mustApply(t, p, cfg)
		held := dialFrom(t, "127.0.100.99", "127.0.100.9:9000")
		first := held.mustAsk("hold")
		second := askFrom(t, "127.0.100.99", "127.0.100.9:9000")
		switch {
		case override && second != first:
			t.Fatalf("override-connection-limit: second connection went to %q, want %q", second, first)
		case !override && second == first:
			t.Fatalf("without override the member's limit of 1 was exceeded")
		}
		held.c.Close()
		p.Close()
	}
}

func TestFallbackAndUniversalByRule(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.103.11:9000", "S1")
	startServer(t, "127.0.103.12:9000", "S2")
	p, _ := newPlane(t)
	cfg := basic("127.0.103.1:9000", "127.0.103.11:9000", "127.0.103.12:9000")
	// Cookie persistence has no key without HTTP: the fallback applies.
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/cookie", Method: PersistCookie, Timeout: 180 * time.Second}
	cfg.Virtuals["/Common/vs"].FallbackPersist = srcAddr(time.Minute)
	// A universal virtual: the rule's key (the first word of the data)
	// persists, whatever the client's address.
	withPool(cfg, "/Common/upool", "127.0.103.11:9000", "127.0.103.12:9000")
	r, lg := compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    set k [getfield [TCP::payload] " " 1]
    if { $k eq "none" } { persist none } else { persist uie $k 600 }
    TCP::release
}`)
	cfg.Virtuals["/Common/uvs"] = &Virtual{Name: "/Common/uvs", Destination: ap("127.0.103.2:9000"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/upool", SNAT: SNAT{Type: SNATNone}, Rules: r,
		Persist: &Persistence{Profile: "/Common/universal", Method: PersistUniversal, Timeout: 180 * time.Second}}
	mustApply(t, p, cfg)

	first := askFrom(t, "127.0.103.50", "127.0.103.1:9000")
	for i := 0; i < 3; i++ {
		if got := askFrom(t, "127.0.103.50", "127.0.103.1:9000"); got != first {
			t.Fatalf("fallback persistence: %q, want %q", got, first)
		}
	}
	ask := func(src, msg string) string {
		c := dialFrom(t, src, "127.0.103.2:9000")
		defer c.c.Close()
		return c.mustAsk(msg)
	}
	a := ask("127.0.103.60", "alice hello")
	for _, src := range []string{"127.0.103.61", "127.0.103.62", "127.0.103.63"} {
		if got := ask(src, "alice again"); got != a {
			t.Fatalf("key alice from %s went to %q, want %q (log %s)", src, got, a, lg)
		}
	}
	recs := records(p, persist.Filter{Mode: persist.Universal})
	if len(recs) != 1 || recs[0].String() != "alice" || recs[0].Timeout != 600*time.Second || recs[0].Virtual != "/Common/uvs" {
		t.Fatalf("records %+v", recs)
	}
	// persist none: no record, plain load balancing.
	x, y := ask("127.0.103.64", "none 1"), ask("127.0.103.64", "none 2")
	if x == y {
		t.Fatalf("persist none: both connections on %q", x)
	}
	if n := len(records(p, persist.Filter{})); n != 2 {
		t.Fatalf("%d records after persist none, want 2", n)
	}
}

func TestRulePersistAddLookupDelete(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.103.21:9000", "S1")
	p, _ := newPlane(t)
	cfg := basic("127.0.103.3:9000", "127.0.103.21:9000")
	r, lg := compileRules(t, `when SERVER_CONNECTED {
    persist add uie [IP::client_addr] 30
    set found [persist lookup uie [IP::client_addr]]
    log local0. "found $found node [persist lookup uie [IP::client_addr] node]"
    persist delete uie [IP::client_addr]
    log local0. "after delete: '[persist lookup uie [IP::client_addr]]'"
    persist add uie keep-[IP::client_addr]
}`)
	cfg.Virtuals["/Common/vs"].Rules = r
	mustApply(t, p, cfg)
	askFrom(t, "127.0.103.70", "127.0.103.3:9000")
	eventually(t, "the rule's log", func() bool { return len(lg.Lines()) >= 2 })
	lines := lg.Lines()
	want := []string{
		"local0.info Rule /Common/r1 <SERVER_CONNECTED>: found /Common/pool 127.0.103.21 9000 node 127.0.103.21",
		"local0.info Rule /Common/r1 <SERVER_CONNECTED>: after delete: ''",
	}
	for i, w := range want {
		if lines[i] != w {
			t.Fatalf("log %d = %q, want %q", i, lines[i], w)
		}
	}
	recs := records(p, persist.Filter{Key: "keep-127.0.103.70"})
	if len(recs) != 1 || recs[0].Timeout != DefaultPersistTimeout {
		t.Fatalf("records %+v", recs)
	}
}

func TestPersistTimeoutWithClock(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.104.11:9000", "S1")
	startServer(t, "127.0.104.12:9000", "S2")
	p, _ := newPlane(t)
	clk := &testClock{t: time.Unix(2_000_000, 0)}
	p.persist.Now = clk.now
	cfg := basic("127.0.104.1:9000", "127.0.104.11:9000", "127.0.104.12:9000")
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(180 * time.Second)
	mustApply(t, p, cfg)
	first := askFrom(t, "127.0.104.50", "127.0.104.1:9000")
	clk.add(179 * time.Second)
	if got := askFrom(t, "127.0.104.50", "127.0.104.1:9000"); got != first {
		t.Fatalf("record gone before its timeout: %q", got)
	}
	// A long connection: the record is refreshed when it ends, so it lives
	// its timeout after the last connection, not after the first.
	held := dialFrom(t, "127.0.104.50", "127.0.104.1:9000")
	held.mustAsk("hold")
	clk.add(170 * time.Second)
	held.c.Close()
	eventually(t, "the held flow to end", func() bool { return len(flowsOf(p, "/Common/vs")) == 0 })
	clk.add(170 * time.Second)
	if got := askFrom(t, "127.0.104.50", "127.0.104.1:9000"); got != first {
		t.Fatalf("record expired though its last connection ended 170 s ago: %q", got)
	}
	clk.add(181 * time.Second)
	if n := len(records(p, persist.Filter{})); n != 0 {
		t.Fatalf("%d records after the timeout", n)
	}
	// Expired: balanced afresh (round robin moves on), a new record made.
	askFrom(t, "127.0.104.50", "127.0.104.1:9000")
	if n := len(records(p, persist.Filter{})); n != 1 {
		t.Fatalf("%d records, want a new one", n)
	}
}

func TestPlanePersistAPI(t *testing.T) {
	t.Parallel()
	p, _ := newPlane(t)
	cfg := basic("127.0.104.2:9000", "127.0.104.21:9000", "127.0.104.22:9000")
	pers := &Persistence{Profile: "/Common/u", Method: PersistUniversal, Timeout: 300 * time.Second}
	cfg.Virtuals["/Common/vs"].Persist = pers
	mustApply(t, p, cfg)
	k := PersistKey{Virtual: "/Common/vs", Pool: "/Common/pool", Mode: persist.Universal, Key: "txn-7", Client: netip.MustParseAddr("127.0.104.99")}
	if _, _, ok := p.PersistLookup(k); ok {
		t.Fatal("found a record in an empty table")
	}
	if err := p.PersistSave(k, "", ap("127.0.104.22:9000")); err != nil {
		t.Fatal(err)
	}
	pool, m, ok := p.PersistLookup(k)
	if !ok || pool != "/Common/pool" || m != ap("127.0.104.22:9000") {
		t.Fatalf("lookup: %s %s %v", pool, m, ok)
	}
	if r := records(p, persist.Filter{Key: "txn-7"}); len(r) != 1 || r[0].Timeout != 300*time.Second {
		t.Fatalf("records %+v", r)
	}
	// Disabled still serves the record; forced offline does not.
	mustApply(t, p, setMember(cfg, "/Common/pool", 1, func(m *Member) { m.Session = SessionUserDisabled }))
	if _, _, ok := p.PersistLookup(k); !ok {
		t.Fatal("a disabled member lost its persisted clients")
	}
	mustApply(t, p, setMember(cfg, "/Common/pool", 1, func(m *Member) { m.State = StateUserDown }))
	if _, _, ok := p.PersistLookup(k); ok {
		t.Fatal("a forced-offline member kept its persisted clients")
	}
	mustApply(t, p, cfg)
	p.PersistDelete(k)
	if _, _, ok := p.PersistLookup(k); ok {
		t.Fatal("deleted record still found")
	}
	if err := p.PersistSave(PersistKey{Virtual: "/Common/nope", Pool: "/Common/pool", Mode: persist.Universal, Key: "x"}, "", ap("127.0.104.21:9000")); err == nil {
		t.Fatal("saved a record for a missing virtual")
	}
	if n := p.DeletePersistRecords(persist.Filter{}); n != 0 {
		t.Fatalf("deleted %d", n)
	}
}

// BenchmarkConnectionPersisted is BenchmarkConnectionPerRequest through a
// virtual with source-address persistence: each connection looks its
// record up and refreshes it.
func BenchmarkConnectionPersisted(b *testing.B) {
	echoBackend(b, "127.0.105.2:9000")
	p := New(Options{})
	b.Cleanup(p.Close)
	cfg := basic("127.0.105.1:8000", "127.0.105.2:9000")
	cfg.Virtuals["/Common/vs"].Persist = srcAddr(time.Minute)
	if err := p.Apply(nil, cfg); err != nil {
		b.Fatal(err)
	}
	msg := make([]byte, 64)
	buf := make([]byte, 64)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c, err := net.Dial("tcp", "127.0.105.1:8000")
		if err != nil {
			b.Fatal(err)
		}
		c.Write(msg)
		if _, err := io.ReadFull(c, buf); err != nil {
			b.Fatal(err)
		}
		c.(*net.TCPConn).SetLinger(0)
		c.Close()
	}
}
