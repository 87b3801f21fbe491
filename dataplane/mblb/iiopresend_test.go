package mblb

import (
	"bytes"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Fragmented IIOP re-send tests listen on 127.251.2.0/24, ports
// 25120-25139; TestIIOPResendNoMember on 127.246.200.0/24, ports
// 25460-25479.

// fragmented is a Request of GIOP 1.minor (1.1 or 1.2) in two
// messages: its first fragment and one Fragment.
func fragmented(minor uint8, little bool, id uint32, key, op string) []byte {
	whole := iiop.AppendRequest(nil, minor, little, id, true, []byte(key), op, []byte("a body in two parts"))
	first, rest := iiop.Split(whole, 40)
	return append(first, iiop.AppendFragment(nil, minor, little, id, false, rest)...)
}

// TestIIOPMemberCloseConnectionResendsFragments: fragmented requests
// awaiting their replies when their member sends CloseConnection are
// sent again, whole, to the other member, in GIOP 1.1 and 1.2, both
// byte orders.
func TestIIOPMemberCloseConnectionResendsFragments(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.251.2.1:25121", "127.251.2.2:25122")
	vs := startVS(t, "127.251.2.10:25130", iiopConfig(pool, IIOPOptions{}))
	round := 0
	for _, minor := range []uint8{1, 2} {
		for _, little := range []bool{false, true} {
			round++
			pool.mu.Lock()
			pool.next = 0 // each round starts at m1
			pool.mu.Unlock()
			c := dialIIOP(t, vs)
			key := func(i int) string { return fmt.Sprintf("r%d-k%d", round, i) }
			var reqs []byte
			reqs = append(reqs, fragmented(minor, little, 1, key(1), "delay:300")...)                           // m1, unanswered
			reqs = iiop.AppendRequest(reqs, minor, little, 2, true, []byte(key(2)), "echo", nil)                // m2
			reqs = append(reqs, fragmented(minor, little, 3, key(3), fmt.Sprintf("closeonce:m1:%d", round))...) // m1
			got := iiopExchange(t, c, reqs, 3)
			sort.Strings(got)
			if fmt.Sprint(got) != "[1=m2 2=m2 3=m2]" {
				t.Fatalf("1.%d little=%v: %v", minor, little, got)
			}
			if k2 := members[1].Keys(); k2[key(1)] != 1 || k2[key(3)] != 1 {
				t.Fatalf("1.%d little=%v: m2 got %v: the fragmented requests not sent again whole", minor, little, k2)
			}
			c.Close()
		}
	}
	if n := vs.e.Stats().Retries; n != 8 {
		t.Fatalf("retries %d, want 8", n)
	}
}

// TestIIOPOneConnectCloseConnectionFragments: on a shared connection
// two clients' fragmented requests awaiting replies when the member
// sends CloseConnection are sent again, whole and under ids of the new
// connection, and each reply reaches its client.
func TestIIOPOneConnectCloseConnectionFragments(t *testing.T) {
	m, _, vs := startSharedIIOP(t, "127.251.2.3:25123", "127.251.2.11:25131", OneConnect{MaxSize: 1}, IIOPOptions{})
	for i, minor := range []uint8{1, 2} {
		a, b := dialIIOP(t, vs), dialIIOP(t, vs)
		if _, err := a.Write(fragmented(minor, true, 7, "fa", "delay:300")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond) // a's request first on the connection
		if _, err := b.Write(fragmented(minor, true, 7, "fb", fmt.Sprintf("closeonce:m1:%d", i))); err != nil {
			t.Fatal(err)
		}
		if ga, gb := readReplies(t, a, 1), readReplies(t, b, 1); fmt.Sprint(ga, gb) != "[7=m1] [7=m1]" {
			t.Fatalf("1.%d: a %v b %v", minor, ga, gb)
		}
		a.Close()
		b.Close()
	}
	if k := m.Keys(); k["fa"] != 4 || k["fb"] != 4 {
		t.Fatalf("the member served %v, want each request twice a round", k)
	}
	if n := vs.e.Stats().Retries; n != 4 {
		t.Fatalf("retries %d, want 4", n)
	}
}

// TestIIOPResendFragmentsBound: a fragmented request whose messages
// pass MaxMessageSize in all is not kept, so a member's CloseConnection
// does not send it again but answers it with COMM_FAILURE; a whole
// request unanswered there still is sent again.
func TestIIOPResendFragmentsBound(t *testing.T) {
	members, pool := startIIOPMembers(t, "127.251.2.4:25124", "127.251.2.5:25125")
	cfg := iiopConfig(pool, IIOPOptions{})
	cfg.MaxMessageSize = 600
	vs := startVS(t, "127.251.2.12:25132", cfg)
	whole := iiop.AppendRequest(nil, 2, false, 3, true, []byte("big"), "closeonce:m1", make([]byte, 1000))
	first, rest := iiop.Split(whole, 40)
	reqs := iiop.AppendRequest(nil, 2, false, 1, true, []byte("small"), "delay:300", nil) // m1, unanswered
	reqs = iiop.AppendRequest(reqs, 2, false, 2, true, []byte("k"), "echo", nil)          // m2
	reqs = append(reqs, first...)                                                         // m1
	for len(rest) > 0 {
		part := rest[:min(400, len(rest))]
		rest = rest[len(part):]
		reqs = iiop.AppendFragment(reqs, 2, false, 3, len(rest) > 0, part)
	}
	c := dialIIOP(t, vs)
	got := iiopExchange(t, c, reqs, 3)
	sort.Strings(got)
	if fmt.Sprint(got) != "[1=m2 2=m2 3=COMM_FAILURE/NO]" {
		t.Fatalf("got %q, want [1=m2 2=m2] and request 3's COMM_FAILURE", got)
	}
	if n := members[0].Keys()["big"]; n != 1 {
		t.Fatalf("m1 served the fragmented request %d times, want 1", n)
	}
	if n := members[1].Keys()["big"]; n != 0 {
		t.Fatalf("m2 served the fragmented request over the bound %d times", n)
	}
	if n := vs.e.Stats().Retries; n != 1 {
		t.Fatalf("retries %d, want 1", n)
	}
}

// TestIIOPKeepFragmentAppends: a fragmented request's Fragments are
// appended to its kept bytes (the buffer replaced only when full, at
// least doubling), whole and in order, its last one ending partial;
// past MaxMessageSize in all it is no longer kept.
func TestIIOPKeepFragmentAppends(t *testing.T) {
	for _, tc := range []struct {
		name         string
		first, frag  int // sizes
		frags, limit int
		kept         bool
		maxMoves     int // times the kept bytes moved to a new buffer, at most
	}{
		{"small fragments", 100, 100, 200, 1 << 20, true, 8},
		{"one fragment", 100, 50, 1, 1 << 20, true, 1},
		{"past the limit", 1000, 1000, 10, 5000, false, 0},
		{"to the limit exactly", 1000, 1000, 4, 5000, true, 3},
		{"beyond the pooled classes", 1 << 20, 1 << 20, 7, 9 << 20, true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := &iiopSession{s: &ClientConn{e: &Engine{cfg: Config{MaxMessageSize: tc.limit}}}, pending: map[uint32]iiopPending{}}
			sc := &serverConn{}
			want := bytes.Repeat([]byte{'f'}, tc.first)
			k := getMsg(tc.first)
			copy(k.b, want)
			is.pending[7] = iiopPending{sc: sc, kept: k, partial: true}
			moves, last := 0, k
			for i := 0; i < tc.frags; i++ {
				b := bytes.Repeat([]byte{byte('a' + i%26)}, tc.frag)
				want = append(want, b...)
				is.keepFragment(7, sc, b, i == tc.frags-1)
				if p := is.pending[7]; p.kept != nil && p.kept != last {
					moves, last = moves+1, p.kept
				}
			}
			p := is.pending[7]
			if !tc.kept {
				if p.kept != nil || p.partial {
					t.Fatalf("kept %v partial %v past the limit", p.kept != nil, p.partial)
				}
				return
			}
			if p.kept == nil || p.partial {
				t.Fatalf("kept %v partial %v after the last fragment", p.kept != nil, p.partial)
			}
			if !bytes.Equal(p.kept.b, want) {
				t.Fatalf("kept %d bytes, want %d (or they differ)", len(p.kept.b), len(want))
			}
			if moves > tc.maxMoves {
				t.Fatalf("kept bytes moved %d times, want at most %d (copied whole per fragment?)", moves, tc.maxMoves)
			}
			p.drop()
		})
	}
}

// closeOnFirst is a member that answers the first message of each
// connection with CloseConnection and closes it: a fragmented request's
// first fragment is all it sees of it.
func closeOnFirst(t *testing.T, addr string) {
	serveEach(t, addr, func(c net.Conn) {
		defer c.Close()
		b, err := iioptest.ReadMessage(c)
		if err != nil {
			return
		}
		h, _ := iiop.ParseHeader(b)
		c.Write(iiop.AppendHeaderOnly(nil, h.Minor, b[6]&iiop.FlagLittleEndian != 0, iiop.CloseConnection))
	})
}

// TestIIOPResendIncompleteFragments: a fragmented request whose member
// sends CloseConnection after its first fragment, before the rest came
// from the client, is kept and sent again whole to the other member
// once its last fragment is here (a retry), on the client's own
// connections and on shared ones, GIOP 1.1 and 1.2, both byte orders;
// past MaxMessageSize it is not, and the client goes on.
func TestIIOPResendIncompleteFragments(t *testing.T) {
	closeOnFirst(t, "127.254.3.1:25401")
	m2, err := iioptest.Listen("127.254.3.2:25402", "m2")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m2.Close)
	for vi, oneConnect := range []bool{false, true} {
		pool := oneMember("127.254.3.1:25401", "m1")
		pool.members = append(pool.members, Member{ID: 2, Addr: netip.MustParseAddrPort(m2.Addr()), Pool: "/Common/iiop_pool", Name: "m2"})
		logs := &seenLog{}
		cfg := iiopConfig(pool, IIOPOptions{})
		cfg.Events.Log = logs.add
		if oneConnect {
			cfg.OneConnect = &OneConnect{}
		}
		vs := startVS(t, fmt.Sprintf("127.254.3.%d:%d", 10+vi, 25410+vi), cfg)
		incomplete := func() int {
			n := 0
			for _, l := range logs.take() {
				if strings.Contains(l, "incomplete at m1's CloseConnection, kept") {
					n++
				}
			}
			return n
		}
		round := 0
		for _, minor := range []uint8{1, 2} {
			for _, little := range []bool{false, true} {
				round++
				name := fmt.Sprintf("oneconnect=%v 1.%d little=%v", oneConnect, minor, little)
				pool.mu.Lock()
				pool.next = 0 // the first fragment to m1
				pool.mu.Unlock()
				key := fmt.Sprintf("v%d-r%d", vi, round)
				whole := iiop.AppendRequest(nil, minor, little, 5, true, []byte(key), "echo", []byte("a body in three parts"))
				first, rest := iiop.Split(whole, 40)
				c := dialIIOP(t, vs)
				if _, err := c.Write(first); err != nil {
					t.Fatal(err)
				}
				waitFor(t, name+": m1's CloseConnection with the request incomplete", func() bool { return incomplete() == 1 })
				var more []byte
				more = iiop.AppendFragment(more, minor, little, 5, true, rest[:8])
				more = iiop.AppendFragment(more, minor, little, 5, false, rest[8:])
				if got := iiopExchange(t, c, more, 1); fmt.Sprint(got) != "[5=m2]" {
					t.Fatalf("%s: got %v, want [5=m2]", name, got)
				}
				if n := m2.Keys()[key]; n != 1 {
					t.Fatalf("%s: m2 served the request %d times, want 1", name, n)
				}
				c.Close()
			}
		}
		if st := vs.e.Stats(); st.Retries != uint64(round) || st.Resets != 0 {
			t.Fatalf("oneconnect=%v: retries %d (want %d), resets %d", oneConnect, st.Retries, round, st.Resets)
		}
	}

	// Past MaxMessageSize the incomplete request is not kept: not sent
	// again but answered with a COMM_FAILURE system exception, the
	// client not reset, its next request answered.
	pool := oneMember("127.254.3.1:25401", "m1")
	pool.members = append(pool.members, Member{ID: 2, Addr: netip.MustParseAddrPort(m2.Addr()), Pool: "/Common/iiop_pool", Name: "m2"})
	logs := &seenLog{}
	cfg := iiopConfig(pool, IIOPOptions{})
	cfg.Events.Log = logs.add
	cfg.MaxMessageSize = 600
	vs := startVS(t, "127.254.3.12:25412", cfg)
	whole := iiop.AppendRequest(nil, 2, false, 3, true, []byte("big"), "echo", make([]byte, 1000))
	first, rest := iiop.Split(whole, 40)
	c := dialIIOP(t, vs)
	if _, err := c.Write(first); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "m1's CloseConnection with the big request incomplete", func() bool {
		for _, l := range logs.take() {
			if strings.Contains(l, "request id 3 incomplete at m1's CloseConnection, kept") {
				return true
			}
		}
		return false
	})
	var more []byte
	for len(rest) > 0 {
		part := rest[:min(400, len(rest))]
		rest = rest[len(part):]
		more = iiop.AppendFragment(more, 2, false, 3, len(rest) > 0, part)
	}
	more = iiop.AppendRequest(more, 2, false, 4, true, []byte("after"), "echo", nil) // to m2
	// The big one is answered with COMM_FAILURE (not completed) once
	// its last fragment is in; the next goes on.
	if got := iiopExchange(t, c, more, 2); fmt.Sprint(got) != "[3=COMM_FAILURE/NO 4=m2]" {
		t.Fatalf("got %q, want request 3's COMM_FAILURE and [4=m2]", got)
	}
	if n := m2.Keys()["big"]; n != 0 {
		t.Fatalf("m2 served the request past the bound %d times", n)
	}
	if st := vs.e.Stats(); st.Retries != 0 || st.Resets != 0 {
		t.Fatalf("retries %d resets %d, want 0 and 0", st.Retries, st.Resets)
	}
}

// TestIIOPResendOnce: a request sent again after one member's
// CloseConnection is not sent a second time when the next member also
// closes: it is answered with COMM_FAILURE, COMPLETED_NO (logged), one
// retry counted, for a whole request and a fragmented one.
func TestIIOPResendOnce(t *testing.T) {
	closeOnFirst(t, "127.254.3.3:25403")
	closeOnFirst(t, "127.254.3.4:25404")
	for i, fragmentedReq := range []bool{false, true} {
		pool := oneMember("127.254.3.3:25403", "c1")
		pool.members = append(pool.members, Member{ID: 2, Addr: netip.MustParseAddrPort("127.254.3.4:25404"), Pool: "/Common/iiop_pool", Name: "c2"})
		logs := &seenLog{}
		cfg := iiopConfig(pool, IIOPOptions{})
		cfg.Events.Log = logs.add
		vs := startVS(t, fmt.Sprintf("127.254.3.%d:%d", 13+i, 25413+i), cfg)
		req := iiop.AppendRequest(nil, 2, false, 1, true, []byte("k"), "echo", nil)
		if fragmentedReq {
			req = fragmented(2, false, 1, "k", "echo")
		}
		c := dialIIOP(t, vs)
		if _, err := c.Write(req); err != nil {
			t.Fatal(err)
		}
		wantCommFailure(t, c, 1, iiop.CompletedNo)
		if st := vs.e.Stats(); st.Retries != 1 || st.Resets != 0 {
			t.Fatalf("fragmented=%v: retries %d resets %d, want 1 and 0", fragmentedReq, st.Retries, st.Resets)
		}
		c.Close()
	}
}

// wantCommFailure reads the client's next message: a Reply to id with
// a COMM_FAILURE system exception of the given completion status.
func wantCommFailure(t *testing.T, c net.Conn, id uint32, completed uint32) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(10 * time.Second))
	b, err := iioptest.ReadMessage(c)
	if err != nil {
		t.Fatalf("no answer to request %d: %v", id, err)
	}
	m, err := iiop.Parse(b)
	if err != nil || m.Type != iiop.Reply || m.RequestID != id {
		t.Fatalf("got %v id %d (%v), want a Reply to %d", m.Type, m.RequestID, err, id)
	}
	repo, _, got, ok := iiop.SystemException(b)
	if !ok || repo != iiop.CommFailure || got != completed {
		t.Fatalf("got %q completed %d (%v), want %s completed %d", repo, got, ok, iiop.CommFailure, completed)
	}
}

// TestIIOPResendNoMember: a request a member's CloseConnection leaves
// unanswered, which no other member takes again (the other refuses
// connections, the closing one is left out while it is not alone),
// is answered with COMM_FAILURE, COMPLETED_NO, rather than forgotten;
// whole or fragmented (its last fragment after the CloseConnection),
// on the client's own connections and on shared ones, with a timeout
// set or not (before, it was forgotten, or left to the timeout); the
// client is not reset, nothing is counted as a retry.
func TestIIOPResendNoMember(t *testing.T) {
	m1 := "127.246.200.1:25461"
	closeOnFirst(t, m1)
	refused := "127.246.200.2:25462" // nothing listens there
	i := 0
	for _, oneConnect := range []bool{false, true} {
		for _, timeout := range []time.Duration{0, 5 * time.Second} {
			for _, frag := range []bool{false, true} {
				i++
				name := fmt.Sprintf("oneconnect=%v timeout=%v fragmented=%v", oneConnect, timeout, frag)
				pool := oneMember(m1, "m1")
				pool.members = append(pool.members, Member{ID: 2, Addr: netip.MustParseAddrPort(refused), Pool: "/Common/iiop_pool", Name: "m2"})
				logs := &seenLog{}
				cfg := iiopConfig(pool, IIOPOptions{Timeout: timeout})
				cfg.Events.Log = logs.add
				if oneConnect {
					cfg.OneConnect = &OneConnect{}
				}
				vs := startVS(t, fmt.Sprintf("127.246.200.%d:%d", 10+i, 25470+i), cfg)
				c := dialIIOP(t, vs)
				whole := iiop.AppendRequest(nil, 2, i%2 == 0, 7, true, []byte("k"), "echo", []byte("a body in two parts"))
				if !frag {
					if _, err := c.Write(whole); err != nil {
						t.Fatal(err)
					}
				} else {
					first, rest := iiop.Split(whole, 40)
					if _, err := c.Write(first); err != nil {
						t.Fatal(err)
					}
					waitFor(t, name+": m1's CloseConnection with the request incomplete", func() bool {
						for _, l := range logs.take() {
							if strings.Contains(l, "incomplete at m1's CloseConnection, kept") {
								return true
							}
						}
						return false
					})
					if _, err := c.Write(iiop.AppendFragment(nil, 2, i%2 == 0, 7, false, rest)); err != nil {
						t.Fatal(err)
					}
				}
				wantCommFailure(t, c, 7, iiop.CompletedNo)
				if st := vs.e.Stats(); st.Resets != 0 || st.Retries != 0 {
					t.Fatalf("%s: resets %d retries %d, want 0 and 0", name, st.Resets, st.Retries)
				}
				c.Close()
			}
		}
	}
}
