package mrfsip

import (
	"bytes"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// viaReq is an INVITE whose Via is the client's own sent-by and branch.
func viaReq(sentBy, branch, callID string) []byte {
	return bytes.Replace(req("INVITE", "alice", branch, callID, 70, false), []byte("192.0.2.1:5060"), []byte(sentBy), 1)
}

// TestClientViaKeys: without Via insertion a response is matched by the
// client's top Via, its sent-by and branch: one branch from two clients
// gives two keys, and the received and rport parameters a server adds
// do not change the key.
func TestClientViaKeys(t *testing.T) {
	s := New(&Session{Host: "127.144.3.9:5060"})
	var bufs [2][]byte
	_, k1 := s.Outbound(&bufs, &mrf.Message{Data: viaReq("192.0.2.1:5060", "z9hG4bK-same", "c1")}, 1)
	_, k2 := s.Outbound(&bufs, &mrf.Message{Data: viaReq("192.0.2.2:5060", "z9hG4bK-same", "c2")}, 2)
	if k1 == k2 {
		t.Fatal("two clients' requests with one branch have one key")
	}
	m, _ := sipmsg.Parse(viaReq("192.0.2.1:5060", "z9hG4bK-same;received=198.51.100.7;rport=40000", "c1"))
	if c := s.Classify(sipmsg.Reject(&m, 200, "OK")); !c.Answer || c.Key != k1 {
		t.Fatalf("the response with received and rport: %+v, want key %d", c, k1)
	}
}

// TestSharedBranch: two clients send INVITEs with one branch over one
// shared peer connection, both in flight at once (the member answers
// only once it has both); each gets its own answer.
func TestSharedBranch(t *testing.T) {
	ln, err := net.Listen("tcp", "127.144.3.1:0")
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		rd := mrf.Reader{R: c, F: &mblb.SIPFramer{}}
		var held [][]byte
		for len(held) < 2 {
			b, err := rd.Next()
			if err != nil {
				return
			}
			m, err := sipmsg.Parse(b)
			if err != nil || !m.Request {
				continue
			}
			cid, _ := m.Header(sipmsg.CallID)
			held = append(held, sipmsg.Reject(&m, 200, "OK for "+string(cid)))
		}
		for i := len(held) - 1; i >= 0; i-- { // the second first
			c.Write(held[i])
		}
		time.Sleep(5 * time.Second) // keep the connection while the answers go back
	}()
	cfg := &mrf.Config{Proto: New(&Session{MaxForwards: true, Host: "127.144.3.9:5060"}), Peers: map[string]*mrf.Peer{}, DefaultPool: "p"}
	r := mrf.NewRouter(cfg, env{map[string]netip.AddrPort{"p": netip.MustParseAddrPort(ln.Addr().String())}}, nil)
	t.Cleanup(r.Close)
	got := [2]chan []byte{make(chan []byte, 4), make(chan []byte, 4)}
	for i, sentBy := range []string{"192.0.2.1:5060", "192.0.2.2:5060"} {
		s := r.NewSession(func(b []byte) error { got[i] <- append([]byte(nil), b...); return nil }, nil)
		s.Handle(s.Message(viaReq(sentBy, "z9hG4bK-same", []string{"call-a", "call-b"}[i])))
	}
	for i, want := range []string{"OK for call-a", "OK for call-b"} {
		select {
		case b := <-got[i]:
			if !strings.Contains(string(b), want) {
				t.Fatalf("client %d got %q, want %q", i, b, want)
			}
		case <-time.After(15 * time.Second):
			t.Fatalf("client %d got no answer", i)
		}
	}
}
