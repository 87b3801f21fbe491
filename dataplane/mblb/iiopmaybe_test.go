package mblb

import (
	"fmt"
	"net"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Lost-request tests listen on 127.29.1.0/24, ports 29100-29199.

// startLoser is a GIOP member answering each request expecting a reply
// with its name, except operation "hold" (never answered), "lose"
// (the connection closed at once, no CloseConnection) and "reset" (the
// connection reset), each read whole first.
func startLoser(t *testing.T, addr, name string) {
	serveEach(t, addr, func(c net.Conn) {
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
			switch iiop.RequestOperation(b) {
			case "hold":
				continue
			case "lose":
				return
			case "reset":
				c.(*net.TCPConn).SetLinger(0)
				return
			}
			if m.Expects {
				if _, err := c.Write(iiop.AppendReply(nil, m.Minor, m.Little(), m.RequestID, 0, []byte(name))); err != nil {
					return
				}
			}
		}
	})
}

// TestIIOPMemberGoneCompletedMaybe: requests sent whole to a member
// whose connection then ends without CloseConnection (closed, or reset)
// are answered at once with a Reply carrying COMM_FAILURE,
// COMPLETED_MAYBE in the request's GIOP version (1.0, 1.1, 1.2) and
// byte order: one the member held and the one it closed on; a one-way
// request between them gets nothing. On the client's own connections
// and on a shared one (one-connect), with a timeout set or not; counted
// in IIOPLost, never a reset nor a retry; the client goes on over a new
// connection. Before, they were forgotten (no timeout) or left to the
// timeout, the client never told.
func TestIIOPMemberGoneCompletedMaybe(t *testing.T) {
	member := "127.29.1.1:29101"
	startLoser(t, member, "m1")
	i := 0
	for _, oneConnect := range []bool{false, true} {
		for _, timeout := range []time.Duration{0, 20 * time.Second} {
			i++
			cfg := iiopConfig(oneMember(member, "m1"), IIOPOptions{Timeout: timeout})
			logs := &seenLog{}
			cfg.Events.Log = logs.add
			if oneConnect {
				cfg.OneConnect = &OneConnect{MaxSize: 1} // (the requests share one connection)
			}
			vs := startVS(t, fmt.Sprintf("127.29.1.%d:%d", 10+i, 29110+i), cfg)
			for minor := uint8(0); minor <= 2; minor++ {
				for _, little := range []bool{false, true} {
					for _, end := range []string{"lose", "reset"} {
						name := fmt.Sprintf("oneconnect=%v timeout=%v GIOP 1.%d little=%v %s", oneConnect, timeout, minor, little, end)
						t.Run(name, func(t *testing.T) {
							before := vs.e.Stats().IIOPLost
							c := dialIIOP(t, vs)
							var reqs []byte
							reqs = iiop.AppendRequest(reqs, minor, little, 1, true, []byte("k"), "hold", nil)
							reqs = iiop.AppendRequest(reqs, minor, little, 2, false, []byte("k"), "oneway", nil)
							reqs = iiop.AppendRequest(reqs, minor, little, 3, true, []byte("k"), end, []byte("body"))
							if _, err := c.Write(reqs); err != nil {
								t.Fatal(err)
							}
							c.SetReadDeadline(time.Now().Add(10 * time.Second))
							var got []string
							for range 2 {
								b, err := iioptest.ReadMessage(c)
								if err != nil {
									t.Fatalf("%s: after %v: %v", name, got, err)
								}
								m, err := iiop.Parse(b)
								if err != nil || m.Type != iiop.Reply || m.Minor != minor || m.Little() != little {
									t.Fatalf("%s: got %v GIOP 1.%d little=%v (%v), want a Reply in the request's version and order", name, m.Type, m.Minor, m.Little(), err)
								}
								repo, code, done, ok := iiop.SystemException(b)
								if !ok || repo != iiop.CommFailure || code != 0 {
									t.Fatalf("%s: id %d: %q %d (%v), want %s", name, m.RequestID, repo, code, ok, iiop.CommFailure)
								}
								got = append(got, fmt.Sprintf("%d=%s", m.RequestID, sysExName(repo, done)))
							}
							sort.Strings(got)
							if fmt.Sprint(got) != "[1=COMM_FAILURE/MAYBE 3=COMM_FAILURE/MAYBE]" {
								t.Fatalf("%s: got %v", name, got)
							}
							// Nothing for the one-way request: the next message
							// is the next request's reply, over a new connection.
							if got := iiopExchange(t, c, iiop.AppendRequest(nil, minor, little, 4, true, []byte("k"), "echo", nil), 1); fmt.Sprint(got) != "[4=m1]" {
								t.Fatalf("%s: then %v, want [4=m1]", name, got)
							}
							st := vs.e.Stats()
							if lost := before + 2; st.IIOPLost != lost || st.Resets != 0 || st.Retries != 0 {
								t.Fatalf("%s: lost %d resets %d retries %d, want %d, 0 and 0", name, st.IIOPLost, st.Resets, st.Retries, lost)
							}
							c.Close()
						})
					}
				}
			}
			found := false
			for _, l := range logs.take() {
				found = found || strings.Contains(l, "2 requests sent to m1 unanswered when its connection ended without CloseConnection: answered with COMM_FAILURE, COMPLETED_MAYBE")
			}
			if !found {
				t.Fatalf("oneconnect=%v timeout=%v: no log line of the lost requests", oneConnect, timeout)
			}
		}
	}
}

// TestIIOPMemberCloseConnectionNotMaybe: a member that sends
// CloseConnection before closing its connection has the request it left
// sent again (GIOP: it processed none of them), not answered as lost:
// alone in its pool, it takes it again over a new connection and
// answers; nothing is counted in IIOPLost. Own and shared connections.
func TestIIOPMemberCloseConnectionNotMaybe(t *testing.T) {
	_, pool := startIIOPMembers(t, "127.29.1.30:29130")
	for i, oneConnect := range []bool{false, true} {
		cfg := iiopConfig(pool, IIOPOptions{})
		if oneConnect {
			cfg.OneConnect = &OneConnect{}
		}
		vs := startVS(t, fmt.Sprintf("127.29.1.%d:%d", 40+i, 29140+i), cfg)
		c := dialIIOP(t, vs)
		op := fmt.Sprintf("closeonce:m1:%d", i) // (CloseConnection the first time)
		got := iiopExchange(t, c, iiop.AppendRequest(nil, 2, false, 1, true, []byte("k"), op, nil), 1)
		if fmt.Sprint(got) != "[1=m1]" {
			t.Fatalf("oneconnect=%v: %v, want the request sent again and answered", oneConnect, got)
		}
		if st := vs.e.Stats(); st.IIOPLost != 0 || st.Retries != 1 {
			t.Fatalf("oneconnect=%v: lost %d retries %d, want 0 and 1", oneConnect, st.IIOPLost, st.Retries)
		}
	}
}
