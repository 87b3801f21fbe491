package mblb

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Reused request id tests listen on 127.254.10.0/24, ports 25500-25539.

// scriptedMember answers nothing by itself: the test has it answer the
// i-th request it read (answer), with a Reply under the id it saw whose
// body is the request's operation.
type scriptedMember struct {
	mu   sync.Mutex
	seen []scriptedReq
}

type scriptedReq struct {
	c     net.Conn
	minor uint8
	id    uint32
	op    string
}

func startScriptedMember(t *testing.T, addr string) *scriptedMember {
	sm := &scriptedMember{}
	serveEach(t, addr, func(c net.Conn) {
		defer c.Close()
		for {
			b, err := iioptest.ReadMessage(c)
			if err != nil {
				return
			}
			m, err := iiop.Parse(b)
			if err != nil || m.Type != iiop.Request {
				continue
			}
			sm.mu.Lock()
			sm.seen = append(sm.seen, scriptedReq{c, m.Minor, m.RequestID, iiop.RequestOperation(b)})
			sm.mu.Unlock()
		}
	})
	return sm
}

func (sm *scriptedMember) n() int {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return len(sm.seen)
}

func (sm *scriptedMember) req(i int) scriptedReq {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	return sm.seen[i]
}

func (sm *scriptedMember) answer(t *testing.T, i int, frag bool) {
	t.Helper()
	r := sm.req(i)
	b := iiop.AppendReply(nil, r.minor, false, r.id, 0, []byte(r.op))
	if frag { // (GIOP 1.1 and 1.2): the reply's fields, then its body
		n := 12
		first, rest := iiop.Split(b, n)
		b = iiop.AppendFragment(first, r.minor, false, r.id, false, rest)
	}
	if _, err := r.c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// TestIIOPReusedIDLateReply: a client that cancels a request (or lets
// it time out) and sends a new one under the same id gets the new one's
// reply as its answer, not the old one's late reply: on its own
// connection the new request goes under another id there (the late
// reply still due under the old one) and the late reply is dropped; on
// another member's connection the late reply is dropped as the client
// awaits that id elsewhere; on a shared connection the new request has
// an id of its own already and the late route is dropped. A late reply
// after the new request's answer still goes to the client, and the
// session goes on.
func TestIIOPReusedIDLateReply(t *testing.T) {
	for i, tc := range []struct {
		name       string
		members    int
		oneConnect bool
		timeout    time.Duration // 0: the client cancels
		lateFirst  bool          // the late reply comes before the new one's
		minor      uint8
		frag       bool // the late reply comes in fragments
	}{
		{"own, cancelled", 1, false, 0, true, 2, false},
		{"own, cancelled, GIOP 1.0", 1, false, 0, true, 0, false},
		{"own, timed out", 1, false, time.Second, true, 2, false},
		{"own, late after the answer", 1, false, 0, false, 2, false},
		{"own, other member", 2, false, 0, true, 2, false},
		{"own, fragmented late reply, GIOP 1.1", 1, false, 0, true, 1, true},
		{"own, fragmented late reply, GIOP 1.2", 1, false, 0, true, 2, true},
		{"own, other member, fragmented, GIOP 1.2", 2, false, 0, true, 2, true},
		{"shared, cancelled", 1, true, 0, true, 2, false},
		{"shared, timed out", 1, true, time.Second, true, 1, false},
		{"shared, late after the answer", 1, true, 0, false, 2, false},
		{"shared, fragmented late reply, GIOP 1.1", 1, true, 0, true, 1, true},
		{"shared, fragmented late reply, GIOP 1.2", 1, true, 0, true, 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
			var sms []*scriptedMember
			for j := range tc.members {
				addr := fmt.Sprintf("127.254.10.%d:%d", 1+2*i+j, 25500+i)
				sms = append(sms, startScriptedMember(t, addr))
				p.members = append(p.members, Member{ID: MemberID(j + 1), Addr: netip.MustParseAddrPort(addr), Pool: "/Common/iiop_pool", Name: fmt.Sprintf("m%d", j+1)})
			}
			logs := &seenLog{}
			cfg := iiopConfig(p, IIOPOptions{Timeout: tc.timeout})
			cfg.Events.Log = logs.add
			if tc.oneConnect {
				cfg.OneConnect = &OneConnect{MaxSize: 1}
			}
			vs := startVS(t, fmt.Sprintf("127.254.10.%d:%d", 100+i, 25520+i), cfg)
			c := dialIIOP(t, vs)
			send := func(op string) {
				t.Helper()
				if _, err := c.Write(iiop.AppendRequest(nil, tc.minor, false, 7, true, []byte("k"), op, nil)); err != nil {
					t.Fatal(err)
				}
			}
			send("old")
			waitFor(t, "the old request at m1", func() bool { return sms[0].n() == 1 })
			if tc.timeout == 0 {
				if _, err := c.Write(iiop.AppendCancelRequest(nil, tc.minor, false, 7)); err != nil {
					t.Fatal(err)
				}
			} else {
				waitFor(t, "the old request timed out", func() bool { return vs.e.Stats().IIOPTimeouts == 1 })
			}
			send("new")
			newAt := sms[0]
			if tc.members == 2 {
				newAt = sms[1]
				waitFor(t, "the new request at m2", func() bool { return sms[1].n() == 1 })
			} else {
				waitFor(t, "the new request at m1", func() bool { return sms[0].n() == 2 })
				if old, nw := sms[0].req(0), sms[0].req(1); old.id == nw.id {
					t.Fatalf("both requests under id %d at the member", old.id)
				}
			}
			newIdx := newAt.n() - 1
			if tc.lateFirst {
				sms[0].answer(t, 0, tc.frag)
				waitFor(t, "the late reply dropped", func() bool {
					for _, l := range logs.take() {
						if strings.Contains(l, "dropped") {
							return true
						}
					}
					return false
				})
				newAt.answer(t, newIdx, false)
				if got := readReplies(t, c, 1); fmt.Sprint(got) != "[7=new]" {
					t.Fatalf("got %v, want [7=new]", got)
				}
			} else {
				newAt.answer(t, newIdx, false)
				if got := readReplies(t, c, 1); fmt.Sprint(got) != "[7=new]" {
					t.Fatalf("got %v, want [7=new]", got)
				}
				sms[0].answer(t, 0, tc.frag) // (awaited under no newer request now)
				if got := readReplies(t, c, 1); fmt.Sprint(got) != "[7=old]" {
					t.Fatalf("late: got %v, want [7=old]", got)
				}
			}
			// The session goes on under the same id.
			send("again")
			var at *scriptedMember
			waitFor(t, "the third request at a member", func() bool {
				for _, sm := range sms {
					if n := sm.n(); n > 0 && sm.req(n-1).op == "again" {
						at = sm
					}
				}
				return at != nil
			})
			at.answer(t, at.n()-1, false)
			if got := readReplies(t, c, 1); fmt.Sprint(got) != "[7=again]" {
				t.Fatalf("got %v, want [7=again]", got)
			}
			if st := vs.e.Stats(); st.Resets != 0 {
				t.Fatalf("%d resets", st.Resets)
			}
		})
	}
}
