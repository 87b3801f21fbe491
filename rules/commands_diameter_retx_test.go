package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diammsg"
)

// TestDiameterRetxCommands: the retransmission settings of a request and
// of the connection, the reason and state the host gives, retransmit on
// an answer, respond, retry and message, and the route table commands a
// classic profile has no table for.
func TestDiameterRetxCommands(t *testing.T) {
	var avps []byte
	avps = diammsg.AppendAVP(avps, diammsg.AVPSessionID, diammsg.AVPFlagMandatory, 0, []byte("gx;9"))
	avps = diammsg.AppendAVP(avps, diammsg.AVPResultCode, diammsg.AVPFlagMandatory, 0, diammsg.U32(3004))
	req := diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, 7, 8, avps)
	ans := diammsg.Build(diammsg.FlagProxiable, 272, 4, 7, 8, avps)
	prof := DiameterRetx{Action: "retransmit", Timeout: 10 * time.Second}
	for _, c := range []struct {
		name, ev, body, log, err string
		msg                      []byte
		ctx                      DiameterContext
		check                    func(t *testing.T, o DiameterOutcome, s *ConnState)
	}{
		{name: "retransmission reads the profile's", ev: "DIAMETER_INGRESS", msg: req,
			body: `log local0. "[DIAMETER::retransmission action] [DIAMETER::retransmission timeout] <[DIAMETER::retransmission error-codes]>"`,
			log:  "retransmit 10 <>"},
		{name: "retransmission set", ev: "DIAMETER_INGRESS", msg: req,
			body: `DIAMETER::retransmission action unable; DIAMETER::retransmission timeout 3; DIAMETER::retransmission error-codes {3002 3004}; log local0. "[DIAMETER::retransmission action] [DIAMETER::retransmission timeout] [DIAMETER::retransmission error-codes]"`,
			log:  "unable 3 3002 3004", check: func(t *testing.T, o DiameterOutcome, _ *ConnState) {
				if r := o.Retx; r == nil || r.Action != "unable" || r.Timeout != 3*time.Second || len(r.ErrorCodes) != 2 || !r.CodesSet {
					t.Fatalf("Retx %+v", o.Retx)
				}
			}},
		{name: "defaults under the message's", ev: "DIAMETER_INGRESS", msg: req,
			body: `DIAMETER::retransmission_default action busy; log local0. "[DIAMETER::retransmission action] [DIAMETER::retransmission_default action]"`,
			log:  "busy busy", check: func(t *testing.T, o DiameterOutcome, s *ConnState) {
				if d := s.DiameterDefaults(); d == nil || d.Action != "busy" || o.Retx != nil {
					t.Fatalf("defaults %+v, Retx %+v", d, o.Retx)
				}
			}},
		{name: "defaults in CLIENT_ACCEPTED", ev: "CLIENT_ACCEPTED",
			body: `DIAMETER::retransmission_default timeout 4; DIAMETER::skip_capabilities_exchange peer.example; log local0. [DIAMETER::retransmission_default timeout]`,
			log:  "4", check: func(t *testing.T, _ DiameterOutcome, s *ConnState) {
				skip, host := s.DiameterSkipCER()
				if d := s.DiameterDefaults(); d == nil || d.Timeout != 4*time.Second || !skip || host != "peer.example" {
					t.Fatalf("defaults %+v, skip %v %q", d, skip, host)
				}
			}},
		{name: "bad action", ev: "DIAMETER_INGRESS", msg: req, body: `DIAMETER::retransmission action later`, err: `bad action "later"`},
		{name: "bad timeout", ev: "DIAMETER_INGRESS", msg: req, body: `DIAMETER::retransmission timeout -1`, err: `bad timeout "-1"`},
		{name: "retransmission of an answer", ev: "DIAMETER_INGRESS", msg: ans, body: `DIAMETER::retransmission action busy`, err: "only requests are retransmitted"},
		{name: "reason and state", ev: "DIAMETER_RETRANSMISSION", msg: req, ctx: DiameterContext{ClientSide: true, Reason: "timeout", State: "IOPEN"},
			body: `log local0. "[DIAMETER::retransmission_reason] [DIAMETER::state] [DIAMETER::is_request]"`, log: "timeout IOPEN 1"},
		{name: "no reason", ev: "DIAMETER_EGRESS", msg: req, body: `log local0. [DIAMETER::retransmission_reason]`, log: "none"},
		{name: "retransmit", ev: "DIAMETER_EGRESS", msg: ans, ctx: DiameterContext{Pending: true},
			body: `DIAMETER::retransmit; log local0. x`, log: "x", check: func(t *testing.T, o DiameterOutcome, _ *ConnState) {
				if !o.Retransmit {
					t.Fatalf("outcome %+v", o)
				}
			}},
		{name: "retransmit with nothing queued", ev: "DIAMETER_EGRESS", msg: ans, body: `DIAMETER::retransmit`, err: "no request in the retransmission queue"},
		{name: "retransmit a request", ev: "DIAMETER_EGRESS", msg: req, ctx: DiameterContext{Pending: true}, body: `DIAMETER::retransmit`, err: "is a request"},
		{name: "respond", ev: "DIAMETER_INGRESS", msg: req,
			body: `set a [DIAMETER::avp create Result-Code 0 1 0 0 3004 unsigned32][DIAMETER::avp create Origin-Host 0 1 0 0 lb.example string]
				DIAMETER::respond 1 0 1 1 0 [DIAMETER::command] [DIAMETER::header appid] [DIAMETER::header hopbyhop] [DIAMETER::header endtoend] $a
				DIAMETER::drop; log local0. ok`,
			log: "ok", check: func(t *testing.T, o DiameterOutcome, _ *ConnState) {
				if len(o.Respond) != 1 || !o.Drop {
					t.Fatalf("outcome %+v", o)
				}
				m, err := diammsg.Parse(o.Respond[0])
				if err != nil || m.Request() || m.Flags() != diammsg.FlagProxiable|diammsg.FlagError || m.Code() != 272 || m.HopByHop() != 7 || m.EndToEnd() != 8 ||
					string(m.Get(diammsg.AVPOriginHost)) != "lb.example" || string(m.Get(diammsg.AVPResultCode)) != string(diammsg.U32(3004)) {
					t.Fatalf("respond %x: %v", o.Respond[0], err)
				}
			}},
		{name: "respond with a bad payload", ev: "DIAMETER_INGRESS", msg: req, body: `DIAMETER::respond 1 0 0 0 0 272 4 1 1 xyz`, err: "not a list of AVPs"},
		{name: "message and retry", ev: "DIAMETER_EGRESS", msg: req,
			body: `set m [DIAMETER::message]; DIAMETER::retry $m 1; DIAMETER::retry $m; log local0. [string length $m]`,
			log:  itoa(len(req)), check: func(t *testing.T, o DiameterOutcome, _ *ConnState) {
				if len(o.Retry) != 2 || !o.Retry[0].Across || o.Retry[1].Across || string(o.Retry[1].Raw) != string(req) {
					t.Fatalf("retry %+v", o.Retry)
				}
			}},
		{name: "retry an answer", ev: "DIAMETER_EGRESS", msg: ans, body: `DIAMETER::retry [DIAMETER::message]`, err: "only requests are sent again"},
		{name: "message replaced", ev: "DIAMETER_INGRESS", msg: req, body: `DIAMETER::message [binary format a* abc]`, err: "not a Diameter message"},
		{name: "route status", ev: "DIAMETER_INGRESS", msg: req, body: `DIAMETER::route_status`, err: "message routing virtual"},
		{name: "dynamic routes", ev: "CLIENT_ACCEPTED", body: `DIAMETER::dynamic_route_insertion disabled`, err: "route table"},
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
			if c.msg != nil {
				ctx := c.ctx
				ctx.Profile = prof
				s.BeginDiameterWith(append([]byte(nil), c.msg...), ctx)
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
				c.check(t, o, s)
			}
		})
	}
	if n := mustCompile(t, "n", "when DIAMETER_RETRANSMISSION { }").DiameterNeeds(); len(n) != 1 {
		t.Fatalf("DiameterNeeds = %+v", n)
	}
}
