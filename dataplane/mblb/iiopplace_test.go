package mblb

import (
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Placement tests listen on 127.29.4.0/24, ports 29400-29499.

// closableMember is a GIOP member answering each request expecting a
// reply with its name; closeAll closes (FIN, no CloseConnection) every
// connection it has accepted so far.
type closableMember struct {
	mu    sync.Mutex
	conns []net.Conn
}

func startClosableMember(t *testing.T, addr, name string) *closableMember {
	cm := &closableMember{}
	serveEach(t, addr, func(c net.Conn) {
		cm.mu.Lock()
		cm.conns = append(cm.conns, c)
		cm.mu.Unlock()
		defer c.Close()
		for {
			b, err := iioptest.ReadMessage(c)
			if err != nil {
				return
			}
			m, err := iiop.Parse(b)
			if err != nil || m.Type != iiop.Request {
				return
			}
			if m.Expects {
				if _, err := c.Write(iiop.AppendReply(nil, m.Minor, m.Little(), m.RequestID, 0, []byte(name))); err != nil {
					return
				}
			}
		}
	})
	return cm
}

func (cm *closableMember) closeAll() {
	cm.mu.Lock()
	defer cm.mu.Unlock()
	for _, c := range cm.conns {
		c.Close()
	}
	cm.conns = nil
}

// TestIIOPPlaceOnEndedConnection: a request whose member connection,
// chosen while live, ends before the request is filed there (the member
// closed it; its reader marked it down and settled what was pending
// there) is not written there but sent over a new connection to the
// same member and answered. Before, it was written to the ended
// connection: here the reader had closed the socket, so the write failed
// and the member was passed over for the request (alone in its pool:
// the client was reset, as this test saw); where the socket was not yet
// closed, the write succeeded and the request, filed after the
// settling, waited for a reply that could not come, until the timeout
// or, without one, for as long as the client stayed.
// The window is held open by iiopBeforePlace, which closes the member's
// side and waits for the reader to end before the request is placed.
// Own and shared (one-connect) connections, with a timeout and without;
// one-way requests likewise go over the new connection (the member
// answers the request after them in order).
func TestIIOPPlaceOnEndedConnection(t *testing.T) {
	member := "127.29.4.1:29401"
	cm := startClosableMember(t, member, "m1")
	var armed sync.Mutex
	arm := false
	hook := func(sc *serverConn) {
		armed.Lock()
		on := arm
		arm = false
		armed.Unlock()
		if !on {
			return
		}
		cm.closeAll()
		for deadline := time.Now().Add(5 * time.Second); !sc.down.Load() && time.Now().Before(deadline); {
			time.Sleep(time.Millisecond)
		}
		// memberGone runs right after the reader marks sc down.
		time.Sleep(50 * time.Millisecond)
	}
	iiopBeforePlace.Store(&hook)
	t.Cleanup(func() { iiopBeforePlace.Store(nil) })
	i := 0
	for _, oneConnect := range []bool{false, true} {
		for _, timeout := range []time.Duration{0, 20 * time.Second} {
			i++
			name := fmt.Sprintf("oneconnect=%v timeout=%v", oneConnect, timeout)
			cfg := iiopConfig(oneMember(member, "m1"), IIOPOptions{Timeout: timeout})
			if oneConnect {
				cfg.OneConnect = &OneConnect{MaxSize: 1}
			}
			vs := startVS(t, fmt.Sprintf("127.29.4.%d:%d", 10+i, 29410+i), cfg)
			c := dialIIOP(t, vs)
			if got := iiopExchange(t, c, iiop.AppendRequest(nil, 2, false, 1, true, []byte("k"), "echo", nil), 1); fmt.Sprint(got) != "[1=m1]" {
				t.Fatalf("%s: first request: %v", name, got)
			}
			armed.Lock()
			arm = true
			armed.Unlock()
			c.SetReadDeadline(time.Now().Add(5 * time.Second))
			if got := iiopExchange(t, c, iiop.AppendRequest(nil, 2, false, 2, true, []byte("k"), "echo", nil), 1); fmt.Sprint(got) != "[2=m1]" {
				t.Fatalf("%s: the request placed as its connection ended: %v, want [2=m1] over a new connection", name, got)
			}
			// A one-way request in the same window, then a request: both
			// go over a live connection, the reply comes.
			armed.Lock()
			arm = true
			armed.Unlock()
			var reqs []byte
			reqs = iiop.AppendRequest(reqs, 2, false, 3, false, []byte("k"), "oneway", nil)
			reqs = iiop.AppendRequest(reqs, 2, false, 4, true, []byte("k"), "echo", nil)
			if got := iiopExchange(t, c, reqs, 1); fmt.Sprint(got) != "[4=m1]" {
				t.Fatalf("%s: after a one-way request placed as its connection ended: %v, want [4=m1]", name, got)
			}
			if st := vs.e.Stats(); st.IIOPLost != 0 || st.Resets != 0 {
				t.Fatalf("%s: lost %d resets %d, want 0 and 0", name, st.IIOPLost, st.Resets)
			}
			c.Close()
		}
	}
}
