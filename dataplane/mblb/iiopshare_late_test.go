package mblb

import (
	"fmt"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Late reply tests listen on 127.254.4.0/24, ports 25440-25459.

// heldMember answers each GIOP 1.2 request expecting a reply with a
// Reply "late" under the id it saw, one each time release is sent to;
// it counts the Requests and CancelRequests it read.
type heldMember struct {
	release           chan struct{}
	requests, cancels atomic.Int32
}

func startHeldMember(t *testing.T, addr string) *heldMember {
	h := &heldMember{release: make(chan struct{}, 4)}
	serveEach(t, addr, func(c net.Conn) {
		defer c.Close()
		ids := make(chan uint32, 16)
		go func() {
			defer close(ids)
			for {
				b, err := iioptest.ReadMessage(c)
				if err != nil {
					return
				}
				m, err := iiop.Parse(b)
				if err != nil {
					return
				}
				switch m.Type {
				case iiop.Request:
					h.requests.Add(1)
					ids <- m.RequestID
				case iiop.CancelRequest:
					h.cancels.Add(1)
				}
			}
		}()
		for id := range ids {
			select {
			case <-h.release:
			case <-time.After(20 * time.Second):
				return
			}
			if _, err := c.Write(iiop.AppendReply(nil, 2, false, id, 0, []byte("late"))); err != nil {
				return
			}
		}
	})
	return h
}

// TestIIOPOneConnectLateReplies: on a shared connection a reply to a
// request that timed out (forgotten) or was cancelled still reaches its
// client under the client's id, as on a client's own connection; one
// whose client has gone is dropped; the connection's loan is returned
// each time.
func TestIIOPOneConnectLateReplies(t *testing.T) {
	for i, tc := range []struct {
		name    string
		opt     IIOPOptions
		cancel  bool // the client cancels the request
		leave   bool // the client leaves before the reply
		deliver bool
	}{
		{"timed out", IIOPOptions{Timeout: 50 * time.Millisecond}, false, false, true},
		{"cancelled", IIOPOptions{}, true, false, true},
		{"cancelled, client gone", IIOPOptions{}, true, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startHeldMember(t, fmt.Sprintf("127.254.4.%d:%d", 1+i, 25441+i))
			p := oneMember(fmt.Sprintf("127.254.4.%d:%d", 1+i, 25441+i), "held")
			logs := &seenLog{}
			cfg := iiopConfig(p, tc.opt)
			cfg.Events.Log = logs.add
			cfg.OneConnect = &OneConnect{MaxSize: 1}
			vs := startVS(t, fmt.Sprintf("127.254.4.%d:%d", 10+i, 25450+i), cfg)
			c := dialIIOP(t, vs)
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 7, true, []byte("k"), "op", nil)); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the request at the member", func() bool { return h.requests.Load() == 1 })
			if tc.cancel {
				if _, err := c.Write(iiop.AppendCancelRequest(nil, 2, false, 7)); err != nil {
					t.Fatal(err)
				}
				waitFor(t, "the CancelRequest at the member", func() bool { return h.cancels.Load() == 1 })
			} else {
				waitFor(t, "the request timed out", func() bool { return vs.e.Stats().IIOPTimeouts == 1 })
			}
			if tc.leave {
				c.(*net.TCPConn).SetLinger(0)
				c.Close()
				waitFor(t, "the client gone", func() bool { return vs.e.Stats().Sessions == 0 })
			}
			waitFor(t, "the loan returned", func() bool {
				st, _ := vs.e.OneConnectStats()
				return st.CurrentIdle == 1
			})
			h.release <- struct{}{}
			if tc.deliver {
				if got := readReplies(t, c, 1); fmt.Sprint(got) != "[7=late]" {
					t.Fatalf("got %v, want [7=late]", got)
				}
			} else {
				waitFor(t, "the late reply dropped", func() bool {
					for _, l := range logs.take() {
						if strings.Contains(l, "which no client awaits, dropped") {
							return true
						}
					}
					return false
				})
			}
			if st, _ := vs.e.OneConnectStats(); st.New != 1 || st.CurrentIdle != 1 {
				t.Fatalf("pool %+v: want the one connection, idle", st)
			}
			if !tc.leave {
				// The connection goes on: the next request is answered.
				if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 8, true, []byte("k"), "op", nil)); err != nil {
					t.Fatal(err)
				}
				h.release <- struct{}{}
				if got := readReplies(t, c, 1); fmt.Sprint(got) != "[8=late]" {
					t.Fatalf("got %v, want [8=late]", got)
				}
				c.Close()
			}
		})
	}
}

// TestIIOPSharedLateRoutes: a retired route answers its late reply
// once, under its client's id; its id is not given to another request
// meanwhile; none is kept for a client gone or past iiopLateKeep; at
// most iiopLateMax are kept, the stale ones forgotten first when full.
func TestIIOPSharedLateRoutes(t *testing.T) {
	is := &iiopSession{s: &ClientConn{}}
	sh := newIIOPShared()
	mid := sh.assign(is, 41, true)
	if !sh.retire(mid) {
		t.Fatal("no route to retire")
	}
	sh.next = mid - 1
	if got := sh.assign(is, 42, true); got == mid {
		t.Fatalf("the retired id %d given again", mid)
	}
	if r, ok, late := sh.route(mid, false); !ok || !late || r.id != 41 || r.is != is {
		t.Fatalf("a 1.2 reply's first fragment: %+v %v %v", r, ok, late)
	}
	if _, ok, _ := sh.route(mid, true); !ok {
		t.Fatal("its last fragment found no route")
	}
	if _, ok, _ := sh.route(mid, true); ok {
		t.Fatal("a retired route answered twice")
	}

	// A client gone, a route kept too long: none.
	gone := &iiopSession{s: &ClientConn{}}
	mid = sh.assign(gone, 1, true)
	sh.retire(mid)
	gone.s.closedFlag.Store(true)
	if _, ok, _ := sh.route(mid, true); ok {
		t.Fatal("a late reply routed to a client gone")
	}
	mid = sh.assign(is, 2, true)
	sh.retire(mid)
	sh.mu.Lock()
	l := sh.late[mid]
	l.at -= int64(2 * iiopLateKeep)
	sh.late[mid] = l
	sh.mu.Unlock()
	if _, ok, _ := sh.route(mid, true); ok {
		t.Fatal("a route kept past iiopLateKeep answered")
	}

	// The bound.
	sh = newIIOPShared()
	var mids []uint32
	for i := range iiopLateMax + 10 {
		mids = append(mids, sh.assign(is, uint32(i), true))
		sh.retire(mids[i])
	}
	if n := len(sh.late); n != iiopLateMax {
		t.Fatalf("%d routes kept, want %d", n, iiopLateMax)
	}
	if _, ok, _ := sh.route(mids[len(mids)-1], true); ok {
		t.Fatal("a route past the bound was kept")
	}
	sh.mu.Lock()
	for _, m := range mids[:5] {
		l := sh.late[m]
		l.at -= int64(2 * iiopLateKeep)
		sh.late[m] = l
	}
	sh.mu.Unlock()
	extra := sh.assign(is, 9999, true)
	sh.retire(extra)
	if n := len(sh.late); n != iiopLateMax-4 {
		t.Fatalf("%d routes kept after the stale five went and one came, want %d", n, iiopLateMax-4)
	}
	if _, ok, _ := sh.route(extra, true); !ok {
		t.Fatal("the route retired after the stale ones went was not kept")
	}
}
