package rules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// TestDiameterCommands: the DIAMETER:: commands read the message in hand
// in DIAMETER_INGRESS and DIAMETER_EGRESS, rewrite its AVPs (the outcome
// carries the new message), and drop, disconnect or persist it.
func TestDiameterCommands(t *testing.T) {
	var avps []byte
	avps = diammsg.AppendAVP(avps, diammsg.AVPSessionID, diammsg.AVPFlagMandatory, 0, []byte("gx;1;2"))
	avps = diammsg.AppendAVP(avps, diammsg.AVPOriginHost, diammsg.AVPFlagMandatory, 0, []byte("pcef.example"))
	avps = diammsg.AppendAVP(avps, diammsg.AVPOriginRealm, diammsg.AVPFlagMandatory, 0, []byte("example"))
	avps = diammsg.AppendAVP(avps, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(2001))
	raw := diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 16777238, 0x1234, 0x5678, avps)
	for _, c := range []struct {
		name, ev, body, log, err string
		noMsg                    bool
		check                    func(t *testing.T, o DiameterOutcome)
	}{
		{name: "header", ev: "DIAMETER_INGRESS", body: `log local0. "[DIAMETER::command] [DIAMETER::is_request] [DIAMETER::is_response] [DIAMETER::is_retransmission] [DIAMETER::length] [DIAMETER::header appid] [DIAMETER::header hopbyhop]"`,
			log: "272 1 0 0 " + itoa(len(raw)) + " 16777238 4660"},
		{name: "identities", ev: "DIAMETER_INGRESS", body: `log local0. "[DIAMETER::session] [DIAMETER::host] [DIAMETER::realm origin] <[DIAMETER::host destination]> [DIAMETER::result]"`,
			log: "gx;1;2 pcef.example example <> 2001"},
		{name: "avp reads", ev: "DIAMETER_EGRESS", body: `log local0. "[DIAMETER::avp codes] [DIAMETER::avp count 264] [DIAMETER::avp exists Destination-Host] [DIAMETER::avp data get 268 unsigned32] [DIAMETER::avp Session-Id]"`,
			log: "263 264 296 268 1 0 2001 gx;1;2"},
		{name: "avp rewrite", ev: "DIAMETER_INGRESS", body: `DIAMETER::avp replace Origin-Host lb.example; DIAMETER::avp insert 293 hss.example; DIAMETER::avp delete 268; DIAMETER::realm destination far.example; log local0. "[DIAMETER::avp codes] [DIAMETER::host]"`,
			log: "263 264 296 293 283 lb.example", check: func(t *testing.T, o DiameterOutcome) {
				m, err := diammsg.Parse(o.Raw)
				if err != nil || !o.Edited {
					t.Fatalf("edited %v, parse %v", o.Edited, err)
				}
				if h, d := string(m.Get(diammsg.AVPOriginHost)), string(m.Get(diammsg.AVPDestinationRealm)); h != "lb.example" || d != "far.example" || m.HopByHop() != 0x1234 {
					t.Fatalf("Origin-Host %q Destination-Realm %q hbh %x", h, d, m.HopByHop())
				}
			}},
		{name: "drop and persist", ev: "DIAMETER_INGRESS", body: `DIAMETER::persist [DIAMETER::session]; DIAMETER::drop; log local0. [DIAMETER::persist]`, log: "gx;1;2",
			check: func(t *testing.T, o DiameterOutcome) {
				if !o.Drop || o.Persist != "gx;1;2" || o.Edited {
					t.Fatalf("outcome %+v", o)
				}
			}},
		{name: "persist reset", ev: "DIAMETER_INGRESS", body: `DIAMETER::persist reset; log local0. <[DIAMETER::persist]>`, log: "<>",
			check: func(t *testing.T, o DiameterOutcome) {
				if !o.PersistReset || o.Persist != "" {
					t.Fatalf("outcome %+v", o)
				}
			}},
		{name: "disconnect", ev: "DIAMETER_INGRESS", body: `DIAMETER::disconnect; log local0. x`, log: "x",
			check: func(t *testing.T, o DiameterOutcome) {
				if !o.Disconnect {
					t.Fatalf("outcome %+v", o)
				}
			}},
		{name: "no message", ev: "CLIENT_ACCEPTED", body: `DIAMETER::command`, noMsg: true, err: "no Diameter message in CLIENT_ACCEPTED"},
		{name: "bad code", ev: "DIAMETER_INGRESS", body: `DIAMETER::avp count Nonesuch`, err: `"Nonesuch" is not an AVP code or name`},
		{name: "bad type", ev: "DIAMETER_INGRESS", body: `DIAMETER::avp insert 1 x float`, err: `bad type "float"`},
		{name: "bad option", ev: "DIAMETER_INGRESS", body: `DIAMETER::avp frob`, err: `bad option "frob"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "dia", "when "+c.ev+" { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			if !c.noMsg {
				s.BeginDiameter(append([]byte(nil), raw...))
			}
			ev, _ := ParseEvent(c.ev)
			err := s.Run(ev)
			o := s.EndDiameter()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.check != nil {
				c.check(t, o)
			}
		})
	}
	if n := mustCompile(t, "n", "when DIAMETER_INGRESS { }\nwhen DIAMETER_EGRESS { }\nwhen CLIENT_ACCEPTED { }").DiameterNeeds(); len(n) != 2 {
		t.Fatalf("DiameterNeeds = %+v", n)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
