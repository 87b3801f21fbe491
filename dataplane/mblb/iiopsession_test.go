package mblb

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// IIOP tests listen on 127.243.1.0/24, ports 24300-24399.

func startIIOPMembers(t testing.TB, addrs ...string) ([]*iioptest.Server, *testPool) {
	t.Helper()
	p := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	var out []*iioptest.Server
	for i, a := range addrs {
		s, err := iioptest.Listen(a, fmt.Sprintf("m%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s.Close)
		out = append(out, s)
		p.members = append(p.members, Member{ID: MemberID(i + 1), Addr: netip.MustParseAddrPort(s.Addr()), Pool: "/Common/iiop_pool", Name: s.Name})
	}
	return out, p
}

func iiopConfig(p *testPool, opt IIOPOptions) Config {
	cfg := baseConfig(p, nil)
	cfg.Request = Framing{Mode: IIOP, IIOP: opt}
	return cfg
}

// iiopExchange sends reqs in one write and reads want messages,
// returning "id=member" in the order they came.
func iiopExchange(t *testing.T, c net.Conn, reqs []byte, want int) []string {
	t.Helper()
	if _, err := c.Write(reqs); err != nil {
		t.Fatal(err)
	}
	return readIIOP(t, c, want)
}

// readIIOP reads n replies from c as "id=body" (LocateReply: "id=here")
// in the order they came; any other message fails the test.
func readIIOP(t *testing.T, c net.Conn, n int) []string {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for range n {
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			t.Fatalf("after %v: %v", got, err)
		}
		m, err := iiop.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case iiop.Reply:
			if repo, _, done, ok := iiop.SystemException(b); ok {
				got = append(got, fmt.Sprintf("%d=%s", m.RequestID, sysExName(repo, done)))
				break
			}
			got = append(got, fmt.Sprintf("%d=%s", m.RequestID, iiop.ReplyBody(b)))
		case iiop.LocateReply:
			got = append(got, fmt.Sprintf("%d=here", m.RequestID))
		default:
			t.Fatalf("got %v", m.Type)
		}
	}
	return got
}

// sysExName is how readIIOP shows a SYSTEM_EXCEPTION reply:
// COMM_FAILURE/MAYBE for IDL:omg.org/CORBA/COMM_FAILURE:1.0,
// COMPLETED_MAYBE.
func sysExName(repo string, completed uint32) string {
	name := strings.TrimSuffix(strings.TrimPrefix(repo, "IDL:omg.org/CORBA/"), ":1.0")
	switch completed {
	case iiop.CompletedYes:
		return name + "/YES"
	case iiop.CompletedNo:
		return name + "/NO"
	case iiop.CompletedMaybe:
		return name + "/MAYBE"
	}
	return fmt.Sprintf("%s/%d", name, completed)
}

func dialIIOP(t *testing.T, vs *testVS) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs.addr(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestIIOPRequestsAlternateRepliesOutOfOrder: four pipelined requests on
// one client connection alternate between two members; the first one's
// member answers it last, and each reply still comes back with its own
// request id, in every GIOP version and byte order.
func TestIIOPRequestsAlternateRepliesOutOfOrder(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.243.1.1:24301", "127.243.1.2:24302")
	vs := startVS(t, "127.243.1.10:24310", iiopConfig(pool, IIOPOptions{}))
	for minor := uint8(0); minor <= 2; minor++ {
		for _, little := range []bool{false, true} {
			c := dialIIOP(t, vs)
			var reqs []byte
			reqs = iiop.AppendRequest(reqs, minor, little, 1, true, []byte("k"), "delay:300", nil)
			reqs = iiop.AppendRequest(reqs, minor, little, 2, true, []byte("k"), "echo", nil)
			reqs = iiop.AppendRequest(reqs, minor, little, 3, true, []byte("k"), "echo", nil)
			reqs = iiop.AppendLocateRequest(reqs, minor, little, 4, []byte("k"))
			got := iiopExchange(t, c, reqs, 4)
			if got[3] != "1=m1" {
				t.Fatalf("1.%d little=%v: the slow reply should come last: %v", minor, little, got)
			}
			sort.Strings(got)
			if fmt.Sprint(got) != "[1=m1 2=m2 3=m1 4=here]" {
				t.Fatalf("1.%d little=%v: %v", minor, little, got)
			}
			c.Close()
			pool.mu.Lock()
			pool.next = 0 // each round starts at m1
			pool.mu.Unlock()
		}
	}
	if st := vs.e.Stats(); st.Messages != 24 || st.Responses != 24 {
		t.Fatalf("stats %+v", st)
	}
}

// TestIIOPPersistObjectKey: with persist-object-key, every request for
// one object key goes to the member of the first, from any client.
func TestIIOPPersistObjectKey(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.243.1.3:24303", "127.243.1.4:24304")
	vs := startVS(t, "127.243.1.11:24311", iiopConfig(pool, IIOPOptions{PersistObjectKey: true}))
	for round := 0; round < 2; round++ {
		c := dialIIOP(t, vs)
		var reqs []byte
		for i := uint32(0); i < 6; i++ {
			key := []byte(fmt.Sprintf("obj-%d", i%3))
			reqs = iiop.AppendRequest(reqs, 2, false, i, true, key, "echo", nil)
		}
		iiopExchange(t, c, reqs, 6)
	}
	for _, m := range members {
		for k, n := range m.Keys() {
			if n != 4 {
				t.Fatalf("%s got %d requests for %s: a key was split between members", m.Name, n, k)
			}
		}
	}
	if len(members[0].Keys())+len(members[1].Keys()) != 3 {
		t.Fatalf("keys %v %v", members[0].Keys(), members[1].Keys())
	}
	// Without it the same requests alternate.
	vs2 := startVS(t, "127.243.1.12:24312", iiopConfig(pool, IIOPOptions{}))
	c := dialIIOP(t, vs2)
	var reqs []byte
	for i := uint32(0); i < 4; i++ {
		reqs = iiop.AppendRequest(reqs, 2, false, i, true, []byte("same"), "echo", nil)
	}
	got := iiopExchange(t, c, reqs, 4)
	sort.Strings(got)
	if fmt.Sprint(got) != "[0=m1 1=m2 2=m1 3=m2]" && fmt.Sprint(got) != "[0=m2 1=m1 2=m2 3=m1]" {
		t.Fatalf("without persistence: %v", got)
	}
}

// TestIIOPPersistRequestID: with persist-request-id, a request id seen
// before goes to its member again (a LocateRequest, then the Request).
func TestIIOPPersistRequestID(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.243.1.5:24305", "127.243.1.6:24306")
	vs := startVS(t, "127.243.1.13:24313", iiopConfig(pool, IIOPOptions{PersistRequestID: true}))
	c := dialIIOP(t, vs)
	var got []string
	for i := uint32(0); i < 3; i++ {
		got = append(got, iiopExchange(t, c, iiop.AppendLocateRequest(nil, 2, false, 10+i, []byte("k")), 1)...)
		got = append(got, iiopExchange(t, c, iiop.AppendRequest(nil, 2, false, 10+i, true, []byte("k"), "echo", nil), 1)...)
	}
	want := "[10=here 10=m1 11=here 11=m2 12=here 12=m1]"
	if fmt.Sprint(got) != want {
		t.Fatalf("got %v, want %v", got, want)
	}
}

// TestIIOPTimeout: a request unanswered within the timeout resets the
// client with abort-on-timeout, and is only forgotten without it.
func TestIIOPTimeout(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.243.1.7:24307")
	abort := startVS(t, "127.243.1.14:24314", iiopConfig(pool, IIOPOptions{Timeout: 100 * time.Millisecond, AbortOnTimeout: true}))
	c := dialIIOP(t, abort)
	if _, err := c.Write(iiop.AppendRequest(nil, 1, false, 1, true, []byte("k"), "noreply", nil)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := iioptest.ReadMessage(c); !isReset(err) {
		t.Fatalf("abort-on-timeout: read %v, want the connection reset", err)
	}
	if n := abort.e.Stats().IIOPTimeouts; n != 1 {
		t.Fatalf("timeouts %d", n)
	}
	forget := startVS(t, "127.243.1.15:24315", iiopConfig(pool, IIOPOptions{Timeout: 100 * time.Millisecond}))
	c = dialIIOP(t, forget)
	if _, err := c.Write(iiop.AppendRequest(nil, 1, false, 1, true, []byte("k"), "noreply", nil)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the request to time out", func() bool { return forget.e.Stats().IIOPTimeouts == 1 })
	if got := iiopExchange(t, c, iiop.AppendRequest(nil, 1, false, 2, true, []byte("k"), "echo", nil), 1); got[0] != "2=m1" {
		t.Fatalf("after a forgotten request: %v", got)
	}
}

// TestIIOPFragments: a fragmented request's Fragment follows it to its
// member, in 1.1 (next on the connection) and 1.2 (by request id,
// interleaved with another request).
func TestIIOPFragments(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.243.1.8:24308", "127.243.1.9:24309")
	vs := startVS(t, "127.243.1.16:24316", iiopConfig(pool, IIOPOptions{PersistObjectKey: true}))
	for _, minor := range []uint8{1, 2} {
		c := dialIIOP(t, vs)
		whole := iiop.AppendRequest(nil, minor, false, 7, true, []byte("frag-key"), "echo", []byte("a body in two parts"))
		first, rest := iiop.Split(whole, 40)
		var reqs []byte
		reqs = append(reqs, first...)
		if minor == 2 { // another request between the fragments
			reqs = iiop.AppendRequest(reqs, 2, false, 8, true, []byte("other"), "echo", nil)
		}
		reqs = iiop.AppendFragment(reqs, minor, false, 7, false, rest)
		n := 1
		if minor == 2 {
			n = 2
		}
		got := iiopExchange(t, c, reqs, n)
		sort.Strings(got)
		if got[0] != "7=m1" && got[0] != "7=m2" {
			t.Fatalf("1.%d: %v", minor, got)
		}
	}
	if k := members[0].Keys()["frag-key"] + members[1].Keys()["frag-key"]; k != 2 {
		t.Fatalf("the fragmented requests reached the members %d times whole", k)
	}
	// A Fragment of nothing is malformed.
	c := dialIIOP(t, vs)
	c.Write(iiop.AppendFragment(nil, 2, false, 99, false, []byte("x")))
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := iioptest.ReadMessage(c); !isReset(err) {
		t.Fatalf("stray Fragment: %v, want the connection closed", err)
	}
}

// TestIIOPHalfClose: a client that sends its requests and shuts its
// side down still gets every reply, then the close; a request whose
// member's connection ends unanswered (without CloseConnection) is
// answered with COMM_FAILURE, COMPLETED_MAYBE, so the client is not
// kept waiting for it.
func TestIIOPHalfClose(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.243.1.24:24324", "127.243.1.25:24325")
	vs := startVS(t, "127.243.1.26:24326", iiopConfig(pool, IIOPOptions{}))
	c := dialIIOP(t, vs)
	var reqs []byte
	reqs = iiop.AppendRequest(reqs, 2, false, 1, true, []byte("k"), "delay:200", nil)
	reqs = iiop.AppendRequest(reqs, 2, false, 2, true, []byte("k"), "close", nil)
	reqs = iiop.AppendRequest(reqs, 2, false, 3, true, []byte("k"), "get", nil)
	if _, err := c.Write(reqs); err != nil {
		t.Fatal(err)
	}
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var got []string
	for {
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("after %v: %v, want the virtual's close", got, err)
			}
			break
		}
		m, _ := iiop.Parse(b)
		if repo, _, done, ok := iiop.SystemException(b); ok {
			got = append(got, fmt.Sprintf("%d=%s", m.RequestID, sysExName(repo, done)))
			continue
		}
		got = append(got, fmt.Sprintf("%d=%s", m.RequestID, iiop.ReplyBody(b)))
	}
	sort.Strings(got)
	if fmt.Sprint(got) != "[1=m1 2=COMM_FAILURE/MAYBE 3=m1]" {
		t.Fatalf("replies %v", got)
	}
}

// TestIIOPMalformed: a client whose stream is not GIOP is reset.
func TestIIOPMalformed(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.243.1.17:24317")
	vs := startVS(t, "127.243.1.18:24318", iiopConfig(pool, IIOPOptions{}))
	for _, b := range [][]byte{
		[]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		{'G', 'I', 'O', 'P', 1, 9, 0, 0, 0, 0, 0, 0},
		iiop.AppendReply(nil, 2, false, 1, 0, nil), // bidirectional GIOP
	} {
		c := dialIIOP(t, vs)
		c.Write(b)
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := iioptest.ReadMessage(c)
		if !isReset(err) && !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("%q: %v, want the connection closed", b, err)
		}
	}
}

// oneMember is a pool of the one member at addr.
func oneMember(addr, name string) *testPool {
	return &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{},
		members: []Member{{ID: 1, Addr: netip.MustParseAddrPort(addr), Pool: "/Common/iiop_pool", Name: name}}}
}

// iiopEcho starts an allocation-free member at addr for the allocation
// tests and the benchmark, and returns its pool: it answers each
// fixed-size GIOP 1.2 request with reply, under the request's id when
// sameID (one-connect rewrites ids: the reply must carry the one the
// member saw), else as it is.
func iiopEcho(t testing.TB, addr string, reqSize int, reply []byte, sameID bool) *testPool {
	serveEach(t, addr, func(c net.Conn) {
		defer c.Close()
		buf := make([]byte, reqSize)
		out := append([]byte(nil), reply...)
		for {
			if _, err := io.ReadFull(c, buf); err != nil {
				return
			}
			if sameID {
				binary.BigEndian.PutUint32(out[iiop.HeaderSize:], binary.BigEndian.Uint32(buf[iiop.HeaderSize:]))
			}
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	})
	return oneMember(addr, "echo")
}

// BenchmarkIIOPRequest is one synchronous client's request and reply
// through an IIOP virtual (the proxy's allocations per message included).
func BenchmarkIIOPRequest(b *testing.B) {
	req := iiop.AppendRequest(nil, 2, false, 1, true, []byte("key"), "op", []byte("0123456789abcdef"))
	reply := iiop.AppendReply(nil, 2, false, 1, 0, []byte("0123456789abcdef"))
	p := iiopEcho(b, "127.243.1.20:24320", len(req), reply, false)
	vs := startVS(b, "127.243.1.21:24321", iiopConfig(p, IIOPOptions{Timeout: time.Minute}))
	c, err := net.Dial("tcp", vs.addr())
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	in := make([]byte, len(reply))
	round := func() {
		if _, err := c.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(c, in); err != nil {
			b.Fatal(err)
		}
	}
	round()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		round()
	}
}

// TestIIOPRequestAllocs: a request and its reply through the virtual
// allocate nothing once the member's connection is open (the client,
// the member and the proxy counted together, with a timeout set so that
// the pending table is used).
func TestIIOPRequestAllocs(t *testing.T) {
	if raceOn {
		t.Skip("the race detector allocates")
	}
	req := iiop.AppendRequest(nil, 2, false, 1, true, []byte("key"), "op", []byte("0123456789abcdef"))
	reply := iiop.AppendReply(nil, 2, false, 1, 0, []byte("0123456789abcdef"))
	p := iiopEcho(t, "127.243.1.22:24322", len(req), reply, false)
	vs := startVS(t, "127.243.1.23:24323", iiopConfig(p, IIOPOptions{Timeout: time.Minute, PersistObjectKey: true}))
	c := dialIIOP(t, vs)
	in := make([]byte, len(reply))
	round := func() {
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(c, in); err != nil {
			t.Fatal(err)
		}
	}
	round()
	n := testing.AllocsPerRun(200, round)
	t.Logf("%v allocations per request", n)
	if n >= 1 {
		t.Fatalf("%v allocations per request", n)
	}
}

// TestIIOPMemberCloseConnectionResends: a member's CloseConnection with
// requests awaiting replies on its connection sends each of them again,
// once, to another member (no persistence), in every GIOP version and
// byte order; a request expecting no reply is not sent again; each
// re-send counts as a retry.
func TestIIOPMemberCloseConnectionResends(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.246.1.1:24601", "127.246.1.2:24602")
	vs := startVS(t, "127.246.1.10:24610", iiopConfig(pool, IIOPOptions{}))
	round := 0
	for minor := uint8(0); minor <= 2; minor++ {
		for _, little := range []bool{false, true} {
			round++
			pool.mu.Lock()
			pool.next = 0 // each round starts at m1
			pool.mu.Unlock()
			c := dialIIOP(t, vs)
			key := func(i int) []byte { return []byte(fmt.Sprintf("r%d-k%d", round, i)) }
			var reqs []byte
			reqs = iiop.AppendRequest(reqs, minor, little, 1, false, key(1), "echo", nil)     // m1, one-way
			reqs = iiop.AppendRequest(reqs, minor, little, 2, true, key(2), "echo", nil)      // m2
			reqs = iiop.AppendRequest(reqs, minor, little, 3, true, key(3), "delay:300", nil) // m1, unanswered
			reqs = iiop.AppendRequest(reqs, minor, little, 4, true, key(4), "echo", nil)      // m2
			reqs = iiop.AppendRequest(reqs, minor, little, 5, true, key(5), fmt.Sprintf("closeonce:m1:%d", round), nil)
			got := iiopExchange(t, c, reqs, 4)
			sort.Strings(got)
			if fmt.Sprint(got) != "[2=m2 3=m2 4=m2 5=m2]" {
				t.Fatalf("1.%d little=%v: %v", minor, little, got)
			}
			k2 := members[1].Keys()
			if k2[string(key(1))] != 0 || k2[string(key(3))] != 1 || k2[string(key(5))] != 1 {
				t.Fatalf("1.%d little=%v: m2 got %v: the one-way request sent again, or an unanswered one not", minor, little, k2)
			}
			c.Close()
		}
	}
	if n := vs.e.Stats().Retries; n != 12 {
		t.Fatalf("retries %d, want 12", n)
	}
}

// TestIIOPMemberCloseConnectionPersisted: with persistence tying the
// requests to the member that sent CloseConnection, they go to it
// again over a new connection.
func TestIIOPMemberCloseConnectionPersisted(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.246.1.3:24603", "127.246.1.4:24604")
	vs := startVS(t, "127.246.1.11:24611", iiopConfig(pool, IIOPOptions{PersistObjectKey: true}))
	c := dialIIOP(t, vs)
	var reqs []byte
	reqs = iiop.AppendRequest(reqs, 2, true, 1, true, []byte("A"), "delay:200", nil)
	reqs = iiop.AppendRequest(reqs, 2, true, 2, true, []byte("A"), "closeonce:m1", nil)
	got := iiopExchange(t, c, reqs, 2)
	sort.Strings(got)
	if fmt.Sprint(got) != "[1=m1 2=m1]" {
		t.Fatalf("got %v", got)
	}
	if n := members[0].Keys()["A"]; n != 4 {
		t.Fatalf("m1 served A %d times, want 4 (twice each)", n)
	}
	if n := members[1].Requests.Load(); n != 0 {
		t.Fatalf("m2 served %d", n)
	}
	if n := vs.e.Stats().Retries; n != 2 {
		t.Fatalf("retries %d, want 2", n)
	}
}
