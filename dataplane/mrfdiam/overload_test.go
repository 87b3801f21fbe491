package mrfdiam

import (
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// holdEnv is env that records the members the router holds.
type holdEnv struct {
	env
	mu   sync.Mutex
	held []string
}

func (e *holdEnv) HoldMember(pool string, addr netip.AddrPort, a mrf.LeaveAction) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.held = append(e.held, pool+" "+addr.String()+" "+map[mrf.LeaveAction]string{mrf.LeaveDisable: "disable", mrf.LeaveOffline: "offline"}[a])
}

func (e *holdEnv) got() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.held...)
}

// leavingPeer is a Diameter peer that answers the virtual's CER, then
// sends a DPR as soon as a request arrives (leaving it unanswered), and
// reports the virtual's DPA on dpa.
func leavingPeer(t *testing.T, addr string) (netip.AddrPort, chan bool) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(func() { ln.Close() })
	dpa := make(chan bool, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		rd := diammsg.Reader{R: c}
		for range 8 {
			raw, err := rd.Next()
			if err != nil {
				return
			}
			m, _ := diammsg.Parse(raw)
			switch {
			case m.Request() && m.Code() == diammsg.CmdCapabilitiesExchange:
				c.Write(diammsg.AppendAnswer(nil, m, diammsg.ResultSuccess, []byte("leaving.example"), []byte("members.example"), nil))
			case m.Request():
				b := diammsg.AppendAVP(nil, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte("leaving.example"))
				b = diammsg.AppendAVP(b, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("members.example"))
				b = diammsg.AppendAVP(b, 273, diammsg.AVPFlagMandatory, 0, diammsg.U32(1)) // Disconnect-Cause BUSY
				c.Write(diammsg.Build(diammsg.FlagRequest, diammsg.CmdDisconnectPeer, 0, 99, 99, b))
			case m.Code() == diammsg.CmdDisconnectPeer:
				dpa <- true
				return
			}
		}
	}()
	return netip.MustParseAddrPort(ln.Addr().String()), dpa
}

// TestDisconnectPeerAction: a peer that sends a DPR gets the virtual's
// DPA; with disconnect-peer-action disable or force-offline its member
// is held (none: left alone), and the request it left unanswered is
// answered as retransmission-action says (unable: 3002).
func TestDisconnectPeerAction(t *testing.T) {
	for i, tc := range []struct {
		action mrf.LeaveAction
		want   string
	}{
		{mrf.LeaveNone, ""},
		{mrf.LeaveDisable, "disable"},
		{mrf.LeaveOffline, "offline"},
	} {
		addr, dpa := leavingPeer(t, "127.155.1.5:0")
		p := &mrf.Peer{Name: "peer_l", Pool: "pl"}
		e := &holdEnv{env: env{map[string]netip.AddrPort{"pl": addr}}}
		cfg := &mrf.Config{Proto: &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true, OnDisconnect: tc.action},
			Routes: []*mrf.Route{{Name: "r", Peers: []*mrf.Peer{p}}}, Peers: map[string]*mrf.Peer{"peer_l": p}, OnLost: mrf.LostUnable}
		r := mrf.NewRouter(cfg, e, nil)
		c := newClient(r)
		hbh := uint32(40 + i)
		c.send(t, request("s;leave", "realm", hbh))
		if m := c.next(t); m.HopByHop() != hbh || result(m) != diammsg.ResultUnableToDeliver {
			t.Fatalf("%d: answer hbh %d result %d", tc.action, m.HopByHop(), result(m))
		}
		select {
		case <-dpa:
		case <-time.After(15 * time.Second):
			t.Fatalf("%d: no DPA", tc.action)
		}
		want := []string(nil)
		if tc.want != "" {
			want = []string{"pl " + addr.String() + " " + tc.want}
		}
		deadline := time.Now().Add(10 * time.Second)
		for len(e.got()) < len(want) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := e.got(); len(got) != len(want) || len(want) == 1 && got[0] != want[0] {
			t.Fatalf("%d: held %q, want %q", tc.action, got, want)
		}
		r.Close()
	}
}

// TestRateLimits: past ingress-major-message-rate-limit a client's
// requests in one second are answered DIAMETER_TOO_BUSY by the virtual,
// past the critical limit dropped; egress limits do the same to the
// requests leaving on one peer connection. Answers and the base
// protocol's exchanges are not counted. A run that straddles a second
// (the windows are each second's) is tried again, up to five times.
func TestRateLimits(t *testing.T) {
	srv, err := diamtest.Start("127.155.1.6:0", "peer.example", false)
	if err != nil {
		t.Skipf("cannot listen: %v", err)
	}
	t.Cleanup(srv.Close)
	pools := map[string]netip.AddrPort{"pdef": netip.MustParseAddrPort(srv.Addr())}
	for _, tc := range []struct {
		name            string
		ingress, egress mrf.RateLimits
	}{
		{"ingress", mrf.RateLimits{Major: 2, Critical: 3}, mrf.RateLimits{}},
		{"egress", mrf.RateLimits{}, mrf.RateLimits{Major: 2, Critical: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for try := 0; ; try++ {
				r := newRouter(t, &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", Respond: true, Ingress: tc.ingress, Egress: tc.egress}, pools)
				c := newClient(r)
				c.send(t, cer("client.example", "clients.example"))
				c.next(t)
				start := time.Now().Unix()
				for i := range 5 {
					c.send(t, request("s;rate", "realm", uint32(10+i)))
				}
				if time.Now().Unix() != start {
					if try == 4 {
						t.Skip("every run straddled a second")
					}
					continue
				}
				results := map[uint32]uint32{}
				for range 3 {
					m := c.next(t)
					results[m.HopByHop()] = result(m)
				}
				if results[10] != diammsg.ResultSuccess || results[11] != diammsg.ResultSuccess || results[12] != diammsg.ResultTooBusy || len(results) != 3 {
					t.Fatalf("results by hop-by-hop %v", results)
				}
				if d := r.C.Dropped.Load(); d != 2 {
					t.Fatalf("%d dropped, want 2", d)
				}
				return
			}
		})
	}
}
