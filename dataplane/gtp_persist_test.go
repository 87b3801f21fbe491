package dataplane

import (
	"encoding/binary"
	"net"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
	"github.com/openltm/openltm/dataplane/persist"
)

// gtpSessionVirtuals are a GTP-C virtual (vs on port 2123) and a GTP-U
// one (vsu, port 2152 of the same address), both with a gtp profile and
// a universal persistence profile matching across services (so the
// GTP-U virtual finds the node its GTP-C virtual chose), over pools of
// the same two nodes.
func gtpSessionVirtuals(t *testing.T, addr string, nodes ...string) *Plane {
	t.Helper()
	p, _ := newPlane(t)
	var cm, um []string
	for _, n := range nodes {
		cm, um = append(cm, n+":2123"), append(um, n+":2152")
	}
	cfg := udpBasic(addr+":2123", cm...)
	cfg.Virtuals["/Common/vs"].GTP = &GTPProfile{IngressMax: 100}
	cfg.Virtuals["/Common/vs"].Persist = &Persistence{Profile: "/Common/gtp_universal", Method: PersistUniversal, Timeout: time.Hour, MatchAcrossServices: true}
	u := *cfg.Virtuals["/Common/vs"]
	u.Name, u.Destination, u.Pool = "/Common/vsu", ap(addr+":2152"), "/Common/poolu"
	cfg.Virtuals["/Common/vsu"] = &u
	cfg.Pools["/Common/poolu"] = &Pool{Name: "/Common/poolu", LBMode: RoundRobin}
	for _, m := range um {
		a := ap(m)
		cfg.Pools["/Common/poolu"].Members = append(cfg.Pools["/Common/poolu"].Members, Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	mustApply(t, p, cfg)
	return p
}

func gtpv2(typ uint8, teid, seq uint32, ies ...gtpmsg.IE) []byte {
	m := gtpmsg.Message{Header: gtpmsg.Header{Version: 2, Type: typ, HasTEID: true, TEID: teid, Seq: seq}, IEs: ies}
	return m.Append(nil)
}

func gpdu(teid uint32, payload string) []byte {
	m := gtpmsg.Message{Header: gtpmsg.Header{Version: 1, Type: gtpmsg.GPDU, TEID: teid}, Payload: []byte(payload)}
	return m.Append(nil)
}

// gtpRecords are the virtual's GTP persistence records, key to member.
func gtpRecords(p *Plane) map[string]string {
	out := map[string]string{}
	p.PersistRecords(persist.Filter{Mode: persist.Universal}, func(r *persist.Record) bool {
		out[r.Virtual+" "+r.Key.String()] = r.Member.String()
		return true
	})
	return out
}

// TestGTPSessionPersistence: two subscribers' Create Session Requests
// are balanced to different members; each session's next messages (by
// the control plane TEID the member gave) and its G-PDUs (by the user
// plane TEID, on the GTP-U virtual, from another client) stay on its
// member; the records show under universal; the member's accepting
// Delete Session Response drops them.
func TestGTPSessionPersistence(t *testing.T) {
	nodes := []string{"127.137.1.2", "127.137.1.3"}
	for i, n := range nodes {
		label := []string{"M1", "M2"}[i]
		startGTPMember(t, n+":2123", label)
		startGTPMember(t, n+":2152", label)
	}
	p := gtpSessionVirtuals(t, "127.137.1.1", nodes...)
	c := gtpDial(t, "127.137.1.100", "127.137.1.1:2123")
	u := gtpDial(t, "127.137.1.101", "127.137.1.1:2152")

	who := map[string]string{}
	for i, imsi := range []string{"001010000000001", "001010000000002"} {
		a := gtpAsk(t, c, createSession(imsi, "internet", uint32(10+i)))
		if a == nil || a.Type != gtpmsg.CreateSessionResponse || !a.Accepted() {
			t.Fatalf("create session %s: answer %+v", imsi, a)
		}
		who[imsi] = gtpmsg.Label(a)
	}
	if who["001010000000001"] == who["001010000000002"] {
		t.Fatalf("both sessions went to %s; want them balanced", who["001010000000001"])
	}
	seq := uint32(100)
	for imsi, m := range who {
		cp, up := gtpmsg.SessionTEIDs(m, imsi)
		for i := 0; i < 4; i++ {
			seq++
			a := gtpAsk(t, c, gtpv2(gtpmsg.ModifyBearerRequest, cp, seq))
			if a == nil || a.Type != gtpmsg.ModifyBearerResponse || gtpmsg.Label(a) != m {
				t.Fatalf("%s's modify bearer %d: answer %+v, want one from %s", imsi, i, a, m)
			}
			g := gtpAsk(t, u, gpdu(up, "ping"))
			if g == nil || g.Type != gtpmsg.GPDU || string(g.Payload) != m {
				t.Fatalf("%s's G-PDU %d: answer %+v, want one from %s", imsi, i, g, m)
			}
		}
	}
	recs := gtpRecords(p)
	for imsi, m := range who {
		cp, up := gtpmsg.SessionTEIDs(m, imsi)
		idx := map[string]int{"M1": 0, "M2": 1}[m]
		for k, want := range map[string]string{
			"/Common/vs imsi:" + imsi:    nodes[idx] + ":2123",
			"/Common/vs " + teidKey(cp):  nodes[idx] + ":2123",
			"/Common/vs " + teidKey(up):  nodes[idx] + ":2123",
			"/Common/vsu " + teidKey(up): nodes[idx] + ":2152",
		} {
			if recs[k] != want {
				t.Errorf("record %s: %q, want %q (records %v)", k, recs[k], want, recs)
			}
		}
	}

	// The first subscriber's session goes: its records with it.
	imsi, m := "001010000000001", who["001010000000001"]
	cp, up := gtpmsg.SessionTEIDs(m, imsi)
	a := gtpAsk(t, c, gtpv2(gtpmsg.DeleteSessionRequest, cp, 500))
	if a == nil || a.Type != gtpmsg.DeleteSessionResponse || gtpmsg.Label(a) != m {
		t.Fatalf("delete session: answer %+v, want one from %s", a, m)
	}
	gone := []string{"/Common/vs imsi:" + imsi, "/Common/vs " + teidKey(cp), "/Common/vs " + teidKey(up), "/Common/vsu " + teidKey(up)}
	deadline := time.Now().Add(10 * time.Second)
	for {
		recs = gtpRecords(p)
		left := []string{}
		for _, k := range gone {
			if _, ok := recs[k]; ok {
				left = append(left, k)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("records left after the delete: %v", left)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, ok := recs["/Common/vs imsi:001010000000002"]; !ok {
		t.Fatalf("the other subscriber's records went too: %v", recs)
	}
}

func teidKey(teid uint32) string {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], teid)
	const hex = "0123456789abcdef"
	s := "teid:"
	for _, c := range b {
		s += string(hex[c>>4]) + string(hex[c&0xf])
	}
	return s
}

// TestGTPRetransmission: a request sent again with its sequence number
// goes to the member its first copy went to (round robin would send it
// to the other), v1 and v2; a new sequence number is balanced again.
func TestGTPRetransmission(t *testing.T) {
	vs := "127.137.2.1:2123"
	startGTPMember(t, "127.137.2.2:2123", "M1")
	startGTPMember(t, "127.137.2.3:2123", "M2")
	gtpVirtual(t, vs, "", []string{"127.137.2.2:2123", "127.137.2.3:2123"}, nil)
	c := gtpDial(t, "127.137.2.100", vs)
	prev := ""
	for i := 1; i <= 6; i++ {
		req := gtpmsg.Echo(1+i%2, uint32(i))
		first := gtpAsk(t, c, req)
		if first == nil {
			t.Fatalf("request %d: no answer", i)
		}
		if prev != "" && gtpmsg.Label(first) == prev {
			t.Fatalf("request %d went to %s as the one before; want it balanced", i, prev)
		}
		prev = gtpmsg.Label(first)
		for again := 0; again < 2; again++ {
			a := gtpAsk(t, c, req)
			if a == nil || a.Seq != uint32(i) || gtpmsg.Label(a) != prev {
				t.Fatalf("request %d sent again: answer %+v, want %s's", i, a, prev)
			}
		}
	}
}

// TestGTPDuplicateAnswer: a member answering every request twice: the
// client gets one answer for each copy of the request it sent, the
// member's repeats dropped and counted.
func TestGTPDuplicateAnswer(t *testing.T) {
	vs := "127.137.3.1:2123"
	m, err := net.ListenPacket("udp", "127.137.3.2:2123")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, from, err := m.ReadFrom(buf)
			if err != nil {
				return
			}
			if a := gtpmsg.Respond(buf[:n], "TWICE"); a != nil {
				m.WriteTo(a, from)
				m.WriteTo(a, from)
			}
		}
	}()
	p := gtpVirtual(t, vs, "", []string{"127.137.3.2:2123"}, nil)
	c := gtpDial(t, "127.137.3.100", vs)
	for i := uint32(1); i <= 3; i++ {
		if a := gtpAsk(t, c, gtpmsg.Echo(2, i)); a == nil || a.Seq != i {
			t.Fatalf("request %d: answer %+v", i, a)
		}
		// The next datagram is the next request's answer, not a repeat.
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		st := p.ProfileStats(ProfileUDP, "/Common/udp", []string{"/Common/vs"})
		if st.Conns.Dropped >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d dropped, want the member's 3 repeats", st.Conns.Dropped)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
