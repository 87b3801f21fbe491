package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mrf"
)

// TestMRFCommands: the GENERICMESSAGE:: and MR:: commands read and change
// the message in hand and the router's peers and routes.
func TestMRFCommands(t *testing.T) {
	pa := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Mode: mrf.PerClient}
	cfg := &mrf.Config{Peers: map[string]*mrf.Peer{pa.Name: pa}, MaxRetries: 2}
	for _, c := range []struct {
		name, ev, body, log, err string
		noMsg                    bool
		check                    func(t *testing.T, m *mrf.Message, r *mrf.Router)
	}{
		{name: "reads", ev: "GENERICMESSAGE_INGRESS", body: `log local0. "[GENERICMESSAGE::message text] [GENERICMESSAGE::message length] [GENERICMESSAGE::message is_request] [GENERICMESSAGE::message no_response] <[GENERICMESSAGE::message dst]> [MR::message status] [MR::protocol] [MR::instance] [MR::transport] [MR::max_retries] [MR::message retry_count]"`,
			log: "hello 5 1 0 <> unprocessed genericmsg 0 virtual /Common/vs 2 0"},
		{name: "rewrites", ev: "MR_INGRESS", body: `GENERICMESSAGE::message text bye; GENERICMESSAGE::message src s1; GENERICMESSAGE::message dst d1; GENERICMESSAGE::message is_request false; MR::payload replace 0 1 B; MR::max_retries 5; log local0. [MR::payload 2]`,
			log: "By", check: func(t *testing.T, m *mrf.Message, _ *mrf.Router) {
				if string(m.Data) != "Bye" || m.Src != "s1" || m.Dst != "d1" || m.Request || m.MaxRetries != 5 {
					t.Fatalf("message %+v", m)
				}
			}},
		{name: "route peers", ev: "MR_INGRESS", body: `MR::message route mode ratio peer peer_a peer_b; log local0. [MR::message route]`,
			log: "peer peer_a peer peer_b", check: func(t *testing.T, m *mrf.Message, _ *mrf.Router) {
				if !m.RouteRatio || len(m.RoutePeers) != 2 {
					t.Fatalf("route %v ratio %v", m.RoutePeers, m.RouteRatio)
				}
			}},
		{name: "route host and none", ev: "MR_INGRESS", body: `MR::message route virtual /Common/vs host 127.127.0.9:80; log local0. [MR::message route]; MR::message route none; log local0. <[MR::message route]>`,
			log: "host 127.127.0.9:80|<>"},
		{name: "drop return retry", ev: "MR_FAILED", body: `MR::message drop why; MR::return; MR::retry`,
			check: func(t *testing.T, m *mrf.Message, _ *mrf.Router) {
				if !m.Drop || m.Reason != "why" || !m.Return || !m.Retry {
					t.Fatalf("message %+v", m)
				}
			}},
		{name: "store and restore", ev: "MR_EGRESS", body: `set a 1; set b two; MR::store a b; unset a b; MR::restore; log local0. "$a $b"`, log: "1 two"},
		{name: "peer on the fly", ev: "MR_INGRESS", body: `MR::peer dyn host 127.127.0.9:7 connection-mode per-client max-connections 3; log local0. [MR::peer dyn]; log local0. [MR::peer peer_a]`,
			log: "connection-mode per-client max-connections 3 host 127.127.0.9:7|connection-mode per-client max-connections 1 pool /Common/pa",
			check: func(t *testing.T, _ *mrf.Message, r *mrf.Router) {
				if p := r.Peer("dyn"); p == nil || p.Host != netip.MustParseAddrPort("127.127.0.9:7") || p.Conns != 3 {
					t.Fatalf("peer %+v", p)
				}
			}},
		{name: "routes on the fly", ev: "GENERICMESSAGE_INGRESS", body: `GENERICMESSAGE::route add dst x peer peer_a; log local0. [GENERICMESSAGE::route lookup dst x]; log local0. [GENERICMESSAGE::route delete dst x]; log local0. <[GENERICMESSAGE::route lookup dst x]>`,
			log: "/Common/peer_a|1|<>"},
		{name: "message view", ev: "GENERICMESSAGE_INGRESS", body: `log local0. "[MESSAGE::proto] [MESSAGE::type] [MESSAGE::field text] [MESSAGE::field length] [MESSAGE::field is_request] [MESSAGE::field no_response] [MESSAGE::field status] <[MESSAGE::field dst]>"`,
			log: "genericmsg request hello 5 1 0 unprocessed <>"},
		{name: "message view bad field", ev: "MR_INGRESS", body: `MESSAGE::field nosuch`, err: "MESSAGE::field: no field \"nosuch\": valid are src, dst"},
		{name: "peer name", ev: "GENERICMESSAGE_INGRESS", body: `GENERICMESSAGE::peer name client1; log local0. [GENERICMESSAGE::peer name]`, log: "client1"},
		{name: "instance and mode", ev: "MR_INGRESS", body: `MR::connection_instance 2; log local0. "[MR::connection_instance] [MR::connection_mode] [MR::available_for_routing]"`, log: "2 per-peer 1"},
		{name: "collect release", ev: "MR_INGRESS", body: `MR::collect; MR::release; log local0. ok`, log: "ok"},
		{name: "connection settings of a peer's message", ev: "MR_INGRESS", body: `MR::connect_back_port`, err: "MR::connect_back_port: the message has no client connection"},
		{name: "create without a client", ev: "GENERICMESSAGE_INGRESS", body: `GENERICMESSAGE::message create x`, err: "no client connection"},
		{name: "flow id of a peer's message", ev: "MR_INGRESS", body: `log local0. [MR::flow_id]`, log: "0"},
		{name: "sequence number", ev: "MR_INGRESS", body: `log local0. [GENERICMESSAGE::message request_sequence_number]; GENERICMESSAGE::message reqseqnum 7; log local0. [GENERICMESSAGE::message request_sequence_number]`, log: "0|7"},
		{name: "bad sequence number", ev: "MR_INGRESS", body: `GENERICMESSAGE::message reqseqnum -1`, err: "not a non-negative integer"},
		{name: "source and destination aliases", ev: "MR_INGRESS", body: `GENERICMESSAGE::message source s; GENERICMESSAGE::message destination d; log local0. "[GENERICMESSAGE::message src] [GENERICMESSAGE::message dest] [GENERICMESSAGE::message len]"`, log: "s d 5"},
		{name: "bad route word", ev: "MR_INGRESS", body: `MR::message route frob x`, err: `unknown word "frob"`},
		{name: "bad peer mode", ev: "MR_INGRESS", body: `MR::peer p pool x connection-mode sideways`, err: `unknown connection-mode "sideways"`},
		{name: "no message", ev: "CLIENT_ACCEPTED", body: `GENERICMESSAGE::message text`, noMsg: true, err: "no message in CLIENT_ACCEPTED"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl := mustCompile(t, "mr", "when "+c.ev+" { "+c.body+" }")
			if u := rl.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, rl)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			r := mrf.NewRouter(cfg, nil, nil)
			m := &mrf.Message{Data: []byte("hello"), Request: true, Status: mrf.StatusUnprocessed, MaxRetries: 2, Instance: -1}
			if !c.noMsg {
				s.BeginMR(m, r, "virtual /Common/vs")
			}
			ev, ok := ParseEvent(c.ev)
			if !ok {
				t.Fatalf("no event %s", c.ev)
			}
			err := s.Run(ev)
			s.EndMR()
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
			if c.log != "" && strings.Join(got, "|") != c.log {
				t.Fatalf("logged %q, want %q", strings.Join(got, "|"), c.log)
			}
			if c.check != nil {
				c.check(t, m, r)
			}
		})
	}
}

// GENERICMESSAGE::message create makes messages of the client's
// connection for the host to route; a made message's events cannot make
// more; MR::flow_id numbers the client's connection.
func TestMRCreate(t *testing.T) {
	rl := mustCompile(t, "mr", `when GENERICMESSAGE_INGRESS {
		GENERICMESSAGE::message create "one" d1
		GENERICMESSAGE::message create
		log local0. [MR::flow_id]
	}`)
	var logged []string
	p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, rl)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	r := mrf.NewRouter(&mrf.Config{}, nil, nil)
	defer r.Close()
	sess := r.NewSession(func([]byte) error { return nil }, nil)
	m := sess.Message([]byte("hello"))
	s.BeginMR(m, r, "virtual /Common/vs")
	if err := s.Run(GenericMessageIngress); err != nil {
		t.Fatal(err)
	}
	s.EndMR()
	made := s.TakeMRMade()
	if len(made) != 2 || string(made[0].Data) != "one" || made[0].Dst != "d1" || !made[0].Made || len(made[1].Data) != 0 || made[1].Originator() != sess {
		t.Fatalf("made %+v", made)
	}
	if len(logged) != 1 || !strings.HasSuffix(logged[0], ": "+strconv.FormatUint(sess.ID(), 10)) {
		t.Fatalf("logged %q, want the flow id %d", logged, sess.ID())
	}
	if again := s.TakeMRMade(); again != nil {
		t.Fatalf("taken twice: %v", again)
	}
	s.BeginMR(made[0], r, "virtual /Common/vs")
	err := s.Run(GenericMessageIngress)
	s.EndMR()
	if err == nil || !strings.Contains(err.Error(), "cannot make another") {
		t.Fatalf("a made message made another: %v", err)
	}
}
