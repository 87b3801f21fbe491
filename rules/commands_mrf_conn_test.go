package rules

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mrf"
)

// TestMRFConnCommands: the MR:: commands that act on the client
// connection a message came from keep its settings on its session of the
// router, and refuse bad values and events with no message.
func TestMRFConnCommands(t *testing.T) {
	pa := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1}
	cfg := &mrf.Config{Peers: map[string]*mrf.Peer{pa.Name: pa}}
	for _, c := range []struct {
		name, ev, body, log, err string
		check                    func(t *testing.T, s *mrf.Session)
	}{
		{name: "connect back port", ev: "MR_INGRESS", body: `log local0. [MR::connect_back_port]; MR::connect_back_port 5070; log local0. [MR::connect_back_port]`, log: "0|5070",
			check: func(t *testing.T, s *mrf.Session) {
				if got := s.ConnectBack(netip.MustParseAddrPort("127.157.2.1:5060")); got.Port() != 5070 {
					t.Fatalf("connect back to %v", got)
				}
			}},
		{name: "bad connect back port", ev: "MR_INGRESS", body: `MR::connect_back_port 70000`, err: "not a port"},
		{name: "port matching", ev: "GENERICMESSAGE_INGRESS", body: `MR::ignore_peer_port 1; log local0. "[MR::ignore_peer_port] [MR::always_match_port]"; MR::always_match_port true; log local0. [MR::always_match_port]`, log: "1 0|1",
			check: func(t *testing.T, s *mrf.Session) {
				if ig, al := s.PortMatch(); !ig || !al {
					t.Fatalf("ignore %v always %v", ig, al)
				}
			}},
		{name: "bad boolean", ev: "MR_INGRESS", body: `MR::ignore_peer_port maybe`, err: "expected a boolean"},
		{name: "equivalent transports", ev: "MR_INGRESS", body: `MR::equivalent_transport /Common/vs2 {/Common/tc1 /Common/tc2}; log local0. [MR::equivalent_transport]; MR::equivalent_transport none; log local0. <[MR::equivalent_transport]>`,
			log: "/Common/vs2 /Common/tc1 /Common/tc2|<>"},
		{name: "stream", ev: "MR_INGRESS", body: `MR::stream 0; log local0. [MR::stream]`, log: "0"},
		{name: "streaming asked for", ev: "MR_INGRESS", body: `MR::stream 1`, err: "not supported"},
		{name: "prime a peer", ev: "MR_INGRESS", body: `MR::prime peer peer_a; MR::prime config /Common/tc1 pool /Common/empty; log local0. ok`, log: "ok"},
		{name: "prime an unknown peer", ev: "MR_INGRESS", body: `MR::prime peer nobody`, err: `no peer "nobody"`},
		{name: "prime usage", ev: "MR_INGRESS", body: `MR::prime`, err: "wrong # args"},
		{name: "prime outside the message events", ev: "CLIENT_ACCEPTED", body: `MR::prime peer peer_a`, err: "no message in CLIENT_ACCEPTED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl := mustCompile(t, "mr", "when "+c.ev+" { "+c.body+" }")
			if u := rl.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, rl)
			st := p.NewConnState(newFakeConn())
			defer st.Release()
			// The pools have no members: the primes fail in the
			// background, as a message's connection would.
			r := mrf.NewRouter(cfg, failEnv{}, nil)
			defer r.Close()
			s := r.NewSession(func([]byte) error { return nil }, nil)
			defer s.Close()
			if c.ev != "CLIENT_ACCEPTED" {
				st.BeginMR(s.Message([]byte("hello")), r, "virtual /Common/vs")
			}
			ev, _ := ParseEvent(c.ev)
			err := st.Run(ev)
			st.EndMR()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, l := range logged {
				got = append(got, l[strings.LastIndex(l, ": ")+2:])
			}
			if strings.Join(got, "|") != c.log {
				t.Fatalf("logged %q, want %q", strings.Join(got, "|"), c.log)
			}
			if c.check != nil {
				c.check(t, s)
			}
		})
	}
}

// failEnv is a dataplane whose pools have no member to connect to.
type failEnv struct{ mrf.Env }

func (failEnv) Pick(string, []netip.AddrPort) (netip.AddrPort, bool) { return netip.AddrPort{}, false }
