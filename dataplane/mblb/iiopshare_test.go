package mblb

import (
	"fmt"
	"io"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// One-connect IIOP tests listen on 127.246.2.0/24, ports 24620-24649.

// seenLog gathers the lines an iioptest member tells.
type seenLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *seenLog) add(line string) {
	l.mu.Lock()
	l.lines = append(l.lines, line)
	l.mu.Unlock()
}

func (l *seenLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.lines)
}

func (l *seenLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.lines
	l.lines = nil
	return out
}

func startSharedIIOP(t *testing.T, member, virtual string, oc OneConnect, opt IIOPOptions) (*iioptest.Server, *seenLog, *testVS) {
	t.Helper()
	log := &seenLog{}
	m, err := iioptest.ListenSeen(member, "m1", log.add)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m.Close)
	p := oneMember(m.Addr(), "m1")
	cfg := iiopConfig(p, opt)
	cfg.OneConnect = &oc
	return m, log, startVS(t, virtual, cfg)
}

// readReplies reads n messages from c as "id=body" (LocateReply:
// "id=here"), sorted.
func readReplies(t *testing.T, c net.Conn, n int) []string {
	t.Helper()
	got := readIIOP(t, c, n)
	sort.Strings(got)
	return got
}

// memberIDs are the request ids the member saw, from its lines.
func memberIDs(lines []string, kind string) []uint32 {
	var ids []uint32
	for _, l := range lines {
		var id uint32
		if i := strings.Index(l, ": "+kind+" id "); i >= 0 {
			fmt.Sscanf(l[i+len(kind)+6:], "%d", &id)
			ids = append(ids, id)
		}
	}
	return ids
}

// TestIIOPOneConnectSharesRewritesIDs: two clients using the same
// request ids share one member connection (max-size 1); the member sees
// each request under an id of its own, and each reply reaches its own
// client with the client's id, in GIOP 1.0 to 1.2, both byte orders,
// Requests and LocateRequests; a CancelRequest reaches the member with
// the id its request had there.
func TestIIOPOneConnectSharesRewritesIDs(t *testing.T) {
	_, log, vs := startSharedIIOP(t, "127.246.2.1:24621", "127.246.2.10:24630", OneConnect{MaxSize: 1}, IIOPOptions{})
	for minor := uint8(0); minor <= 2; minor++ {
		for _, little := range []bool{false, true} {
			a, b := dialIIOP(t, vs), dialIIOP(t, vs)
			var ra, rb []byte
			ra = iiop.AppendRequest(ra, minor, little, 1, true, []byte("k"), "delay:200", nil)
			ra = iiop.AppendRequest(ra, minor, little, 2, true, []byte("k"), "say:a2", nil)
			ra = iiop.AppendLocateRequest(ra, minor, little, 3, []byte("k"))
			rb = iiop.AppendRequest(rb, minor, little, 1, true, []byte("k"), "say:b1", nil)
			rb = iiop.AppendRequest(rb, minor, little, 2, true, []byte("k"), "delay:100", nil)
			rb = iiop.AppendLocateRequest(rb, minor, little, 3, []byte("k"))
			if _, err := a.Write(ra); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Write(rb); err != nil {
				t.Fatal(err)
			}
			ga, gb := readReplies(t, a, 3), readReplies(t, b, 3)
			if fmt.Sprint(ga) != "[1=m1 2=m1/a2 3=here]" || fmt.Sprint(gb) != "[1=m1/b1 2=m1 3=here]" {
				t.Fatalf("1.%d little=%v: a got %v, b got %v", minor, little, ga, gb)
			}
			lines := log.take()
			ids := append(memberIDs(lines, "Request"), memberIDs(lines, "LocateRequest")...)
			distinct := map[uint32]bool{}
			for _, id := range ids {
				distinct[id] = true
			}
			if len(ids) != 6 || len(distinct) != 6 {
				t.Fatalf("1.%d little=%v: the member saw ids %v (%v): want six distinct", minor, little, ids, lines)
			}
			// A cancelled request's CancelRequest carries its id there.
			if _, err := a.Write(iiop.AppendRequest(nil, minor, little, 9, true, []byte("k"), "noreply", nil)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the request to reach the member", func() bool { return log.count() > 0 })
			if _, err := a.Write(iiop.AppendCancelRequest(nil, minor, little, 9)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the CancelRequest", func() bool { return log.count() == 2 })
			lines = log.take()
			if req, cancel := memberIDs(lines, "Request"), memberIDs(lines, "CancelRequest"); len(req) != 1 || len(cancel) != 1 || cancel[0] != req[0] || req[0] == 9 {
				t.Fatalf("1.%d little=%v: %v", minor, little, lines)
			}
			a.Close()
			b.Close()
		}
	}
	// A client that leaves (a reset) with a request unanswered gives its
	// reservation back: the connection is idle again.
	c := dialIIOP(t, vs)
	if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 1, true, []byte("k"), "noreply", nil)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request to reach the member", func() bool { return log.count() > 0 })
	c.(*net.TCPConn).SetLinger(0) // a reset: a close would be a half-close, waited on
	c.Close()
	waitFor(t, "the shared connection idle", func() bool {
		st, _ := vs.e.OneConnectStats()
		return st.CurrentIdle == 1
	})
	st, _ := vs.e.OneConnectStats()
	if st.New != 1 {
		t.Fatalf("%d member connections opened, want 1 shared: %+v", st.New, st)
	}
}

// TestIIOPOneConnectFragments: a fragmented request on a shared
// connection reaches the member whole, its 1.2 Fragment under the
// request's id there (the member answers MessageError otherwise), a 1.1
// one with nothing between its fragments; its reply comes back under
// the client's id.
func TestIIOPOneConnectFragments(t *testing.T) {
	m, _, vs := startSharedIIOP(t, "127.246.2.2:24622", "127.246.2.11:24631", OneConnect{MaxSize: 1}, IIOPOptions{})
	for _, minor := range []uint8{1, 2} {
		for _, little := range []bool{false, true} {
			other := dialIIOP(t, vs)
			// another client's request first, so that ids differ
			if got := iiopExchange(t, other, iiop.AppendRequest(nil, minor, little, 1000, true, []byte("k"), "echo", nil), 1); got[0] != "1000=m1" {
				t.Fatalf("%v", got)
			}
			c := dialIIOP(t, vs)
			whole := iiop.AppendRequest(nil, minor, little, 1000, true, []byte("frag-key"), "say:whole", []byte("a body in two parts"))
			first, rest := iiop.Split(whole, 40)
			reqs := append(first, iiop.AppendFragment(nil, minor, little, 1000, false, rest)...)
			if _, err := c.Write(reqs); err != nil {
				t.Fatal(err)
			}
			if got := readReplies(t, c, 1); got[0] != "1000=m1/whole" {
				t.Fatalf("1.%d little=%v: %v", minor, little, got)
			}
			c.Close()
			other.Close()
		}
	}
	if n := m.Keys()["frag-key"]; n != 4 {
		t.Fatalf("the member got %d whole fragmented requests, want 4", n)
	}
}

// TestIIOPOneConnectCloseConnection: a member's CloseConnection on a
// shared connection sends each client's requests awaiting replies there
// again on a new connection, and each reply still reaches its client.
func TestIIOPOneConnectCloseConnection(t *testing.T) {
	_, _, vs := startSharedIIOP(t, "127.246.2.3:24623", "127.246.2.12:24632", OneConnect{MaxSize: 1}, IIOPOptions{})
	a, b := dialIIOP(t, vs), dialIIOP(t, vs)
	if _, err := a.Write(iiop.AppendRequest(nil, 2, true, 1, true, []byte("k"), "delay:300", nil)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // a's request first on the connection
	if _, err := b.Write(iiop.AppendRequest(nil, 2, true, 1, true, []byte("k"), "closeonce:m1", nil)); err != nil {
		t.Fatal(err)
	}
	if ga, gb := readReplies(t, a, 1), readReplies(t, b, 1); fmt.Sprint(ga, gb) != "[1=m1] [1=m1]" {
		t.Fatalf("a %v b %v", ga, gb)
	}
	if n := vs.e.Stats().Retries; n != 2 {
		t.Fatalf("retries %d, want 2", n)
	}
	if st, _ := vs.e.OneConnectStats(); st.New != 2 {
		t.Fatalf("connections opened %d, want 2", st.New)
	}
}

// TestIIOPOneConnectAllocs: a request and its reply through a shared
// member connection (lent, id rewritten each way, returned) allocate
// nothing once the connection is open.
func TestIIOPOneConnectAllocs(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	req := iiop.AppendRequest(nil, 2, false, 1, true, []byte("key"), "op", []byte("0123456789abcdef"))
	reply := iiop.AppendReply(nil, 2, false, 1, 0, []byte("0123456789abcdef"))
	p := iiopEcho(t, "127.246.2.4:24624", len(req), reply, true)
	cfg := iiopConfig(p, IIOPOptions{Timeout: time.Minute})
	cfg.OneConnect = &OneConnect{}
	vs := startVS(t, "127.246.2.13:24633", cfg)
	c := dialIIOP(t, vs)
	in := make([]byte, len(reply))
	round := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, in); err != nil {
			t.Fatal(err)
		}
		if m, err := iiop.Parse(in); err != nil || m.RequestID != 1 {
			t.Fatalf("reply %+v %v", m, err)
		}
	}
	round()
	n := testing.AllocsPerRun(200, round)
	t.Logf("%v allocations per request", n)
	if n >= 1 {
		t.Fatalf("%v allocations per request", n)
	}
	if st, _ := vs.e.OneConnectStats(); st.New != 1 || st.TotalReuses < 200 {
		t.Fatalf("pool %+v: want one connection reused", st)
	}
}
