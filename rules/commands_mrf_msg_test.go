package rules

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mrf"
)

// TestMRMessageV14: MR::message's v14+ subcommands read and set what
// the router acts on (clones for the host to route, the connections a
// message may use, its source), and refuse bad words.
func TestMRMessageV14(t *testing.T) {
	for _, c := range []struct {
		name, ev, body, log, err string
		check                    func(t *testing.T, m *mrf.Message, made []*mrf.Message)
	}{
		{name: "clone ids", ev: "MR_INGRESS", body: `log local0. [MR::message clone a b]; log local0. "[MR::message clone_count] <[MR::message clone_id]>"`,
			log: "3|3 <>", check: func(t *testing.T, m *mrf.Message, made []*mrf.Message) {
				if len(made) != 2 || made[0].CloneID != "a" || made[1].CloneID != "b" || string(made[1].Data) != "hello" ||
					made[0].Originator() != m.Originator() || made[1].CloneCount != 3 {
					t.Fatalf("made %+v", made)
				}
			}},
		{name: "clone count", ev: "MR_INGRESS", body: `MR::message clone -count 2; log local0. [MR::message clone -count 1]`,
			log: "4", check: func(t *testing.T, _ *mrf.Message, made []*mrf.Message) {
				if len(made) != 3 || made[0].CloneID != "1" || made[1].CloneID != "2" || made[2].CloneID != "4" {
					t.Fatalf("made %+v", made)
				}
			}},
		{name: "clone outside MR_INGRESS", ev: "MR_EGRESS", body: `MR::message clone x`, err: "valid in MR_INGRESS"},
		{name: "clone bad count", ev: "MR_INGRESS", body: `MR::message clone -count 0`, err: "not a count"},
		{name: "clone too many", ev: "MR_INGRESS", body: `MR::message clone -count 1000`, err: "past 64"},
		{name: "clone_id_request of a request", ev: "MR_INGRESS", body: `log local0. <[MR::message clone_id_request]>`, log: "<>"},
		{name: "existing only", ev: "MR_INGRESS", body: `MR::message existing_connections_only true; MR::message new_connection_only no; log local0. "[MR::message existing_connections_only] [MR::message new_connection_only]"`,
			log: "1 0", check: func(t *testing.T, m *mrf.Message, _ []*mrf.Message) {
				if !m.ExistingOnly {
					t.Fatalf("message %+v", m)
				}
			}},
		{name: "new connection only", ev: "MR_INGRESS", body: `MR::message new_connection_only yes`, err: "not over a new one"},
		{name: "bad boolean", ev: "MR_INGRESS", body: `MR::message existing_connections_only perhaps`, err: "perhaps"},
		{name: "instance seed", ev: "MR_INGRESS", body: `log local0. [MR::message outgoing_connection_instance_seed]; MR::message outgoing_connection_instance_seed 5; log local0. "[MR::message outgoing_connection_instance_seed] [MR::connection_instance]"`,
			log: "0|5 5"},
		{name: "bad seed", ev: "MR_INGRESS", body: `MR::message outgoing_connection_instance_seed -1`, err: "nonnegative"},
		{name: "priority", ev: "MR_INGRESS", body: `log local0. [MR::message priority]; MR::message priority 0; log local0. [MR::message priority]`, log: "0|0"},
		{name: "priority set", ev: "MR_INGRESS", body: `MR::message priority 3`, err: "does not order messages by priority"},
		{name: "snat", ev: "MR_INGRESS", body: `log local0. [MR::message snat]; MR::message snat automap; log local0. [MR::message snat]; log local0. [MR::message snat address 127.162.0.5:0]`,
			log: "none|automap|address 127.162.0.5", check: func(t *testing.T, m *mrf.Message, _ []*mrf.Message) {
				if m.SNAT != netip.MustParseAddr("127.162.0.5") || m.SNATAutomap {
					t.Fatalf("snat %v automap %v", m.SNAT, m.SNATAutomap)
				}
			}},
		{name: "bad snat", ev: "MR_INGRESS", body: `MR::message snat address nowhere`, err: "not an address"},
		{name: "pick_host of a host peer", ev: "MR_INGRESS", body: `MR::peer dyn host 127.162.0.9:7; log local0. [MR::message pick_host peer dyn]`, log: "127.162.0.9:7"},
		{name: "pick_host no peer", ev: "MR_INGRESS", body: `MR::message pick_host peer nosuch`, err: `no peer "nosuch"`},
		{name: "pick_host bad word", ev: "MR_INGRESS", body: `MR::message pick_host pool p frob x`, err: "wrong # args"},
		{name: "unknown", ev: "MR_INGRESS", body: `MR::message frobnicate`, err: "unknown subcommand"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rl := mustCompile(t, "mr", "when "+c.ev+" { "+c.body+" }")
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, rl)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			r := mrf.NewRouter(&mrf.Config{Peers: map[string]*mrf.Peer{}}, nil, nil)
			defer r.Close()
			sess := r.NewSession(func([]byte) error { return nil }, nil)
			m := sess.Message([]byte("hello"))
			s.BeginMR(m, r, "virtual /Common/vs")
			ev, _ := ParseEvent(c.ev)
			err := s.Run(ev)
			s.EndMR()
			made := s.TakeMRMade()
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
				c.check(t, m, made)
			}
		})
	}
}

// A clone's MR_INGRESS cannot clone it again (a rule that clones every
// message would loop without end).
func TestMRCloneOfClone(t *testing.T) {
	rl := mustCompile(t, "mr", `when MR_INGRESS { MR::message clone x }`)
	p := NewProgram(&Env{}, rl)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	r := mrf.NewRouter(&mrf.Config{}, nil, nil)
	defer r.Close()
	m := r.NewSession(func([]byte) error { return nil }, nil).Message([]byte("hello"))
	s.BeginMR(m.Clone("c1"), r, "virtual /Common/vs")
	err := s.Run(MRIngress)
	s.EndMR()
	if err == nil || !strings.Contains(err.Error(), "cannot make another") {
		t.Fatalf("a clone cloned: %v", err)
	}
}

// DIAMETER::dynamic_route_insertion and _lookup read the session
// profile's settings and set the client connection's own.
func TestDiameterDynamicRouting(t *testing.T) {
	rl := mustCompile(t, "d", `when MR_INGRESS {
		log local0. "[DIAMETER::dynamic_route_insertion] [DIAMETER::dynamic_route_lookup]"
		DIAMETER::dynamic_route_insertion enable
		DIAMETER::dynamic_route_lookup 0
		log local0. "[DIAMETER::dynamic_route_insertion] [DIAMETER::dynamic_route_lookup]"
	}`)
	var logged []string
	p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l[strings.LastIndex(l, ": ")+2:]) }}, rl)
	s := p.NewConnState(newFakeConn())
	defer s.Release()
	r := mrf.NewRouter(&mrf.Config{}, nil, nil)
	defer r.Close()
	sess := r.NewSession(func([]byte) error { return nil }, nil)
	s.BeginMR(sess.Message([]byte("x")), r, "virtual /Common/vs")
	err := s.Run(MRIngress)
	s.EndMR()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(logged, "|") != "disabled disabled|enabled disabled" {
		t.Fatalf("logged %q", logged)
	}
	if ins, look := sess.DynamicRouting(); !ins || look {
		t.Fatalf("insertion %v lookup %v", ins, look)
	}
}
