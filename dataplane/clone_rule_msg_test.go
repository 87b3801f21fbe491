package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
)

// TestRuleCloneMessage: on the gateways that serve the client message
// by message (mqtt, fix, diameter) a rule's clone in a client message's
// event copies from that message on: the client's second message
// starts the copy, so the clone member gets it and the later ones, not
// the first; clientside as the client sent them, serverside as the
// member got them. The client's answers come from the member alone, and
// a clone in an event over the member's messages (MQTT_SERVER_INGRESS)
// is skipped and counted as dropped.
func TestRuleCloneMessage(t *testing.T) {
	t.Parallel()
	enc := func(p *mqtt.Packet) string { return string(p.Encode(nil, mqtt.V311)) }
	pub := &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room", Payload: []byte("x")}
	ping := &mqtt.Packet{Type: mqtt.PINGREQ}
	mqttRun := func(t *testing.T, vs string) {
		cl, _ := mqttDial(t, vs, mqtttest.Connect("cloned"))
		if err := cl.Send(pub); err != nil {
			t.Fatal(err)
		}
		if err := cl.Send(ping); err != nil {
			t.Fatal(err)
		}
		if _, err := cl.Expect(mqtt.PINGRESP, 10*time.Second); err != nil {
			t.Fatal(err)
		}
		cl.Close()
	}
	for i, tc := range []struct {
		name    string
		rule    string // the event, n counting the messages it runs over
		cond    string // the messages counted ("": all)
		server  bool   // the rule's clone in serverside { }
		dropped uint64
		setup   func(t *testing.T, cfg *Config, vs, member, rule string)
		member  func(t *testing.T, addr string) string
		run     func(t *testing.T, vs string)
		check   func(t *testing.T, got string)
	}{
		{name: "mqtt", rule: "MQTT_CLIENT_INGRESS",
			member: func(t *testing.T, addr string) string { return startBroker(t, addr, "member-a").Addr() },
			setup: func(t *testing.T, cfg *Config, vs, member, rule string) {
				mqttVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", rule)
			},
			run: mqttRun,
			check: func(t *testing.T, got string) {
				if want := enc(pub) + enc(ping); got != want {
					t.Errorf("rule's clone got %q, want the PUBLISH and the PINGREQ %q", got, want)
				}
			}},
		{name: "mqtt server ingress", rule: "MQTT_SERVER_INGRESS", dropped: 1,
			member: func(t *testing.T, addr string) string { return startBroker(t, addr, "member-a").Addr() },
			setup: func(t *testing.T, cfg *Config, vs, member, rule string) {
				mqttVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", rule)
			},
			run:   mqttRun,
			check: nil},
		{name: "fix", rule: "FIX_MESSAGE",
			member: func(t *testing.T, addr string) string { return startAcceptor(t, addr, "member-a").Addr() },
			setup: func(t *testing.T, cfg *Config, vs, member, rule string) {
				delete(cfg.Virtuals, "/Common/vs")
				fixVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", fix.Options{FullLogon: true}, rule)
			},
			run: func(t *testing.T, vs string) {
				c := fixDial(t, vs)
				c.Send(fixLogon("FIX.4.4", "BANZAI"))
				recvHas(t, c, "35=A", "49=member-a")
				c.Send(fixOrder("FIX.4.4", "BANZAI"))
				recvHas(t, c, "35=8", "11=ORD1")
				c.Close()
			},
			check: func(t *testing.T, got string) {
				if want := string(fixOrder("FIX.4.4", "BANZAI")); got != want {
					t.Errorf("rule's clone got %q, want the order alone %q", got, want)
				}
			}},
		{name: "diameter serverside", rule: "DIAMETER_INGRESS", cond: "[DIAMETER::is_request]", server: true,
			member: func(t *testing.T, addr string) string { return diamServer(t, addr, "member-a.example", false).Addr() },
			setup: func(t *testing.T, cfg *Config, vs, member, rule string) {
				delete(cfg.Virtuals, "/Common/vs")
				diamVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", diameter.Options{}, rule)
			},
			run: func(t *testing.T, vs string) {
				c, _ := diamClient(t, vs, "client.example")
				ccrs(t, c, "client.example", "client.example;clone;1", "client.example;clone;2")
				c.Close()
			},
			check: func(t *testing.T, got string) {
				if n := strings.Count(got, "client.example;clone;"); n != 2 || diamMessages(got) != 2 {
					t.Errorf("rule's clone got %d CCRs in %d messages (%q), want both CCRs and not the CER", n, diamMessages(got), got)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.214.31." + string(rune('1'+i))
			member := tc.member(t, base+"0:21000")
			cs := startCloneCollector(t, base+"1:21001")
			p, _ := newPlane(t)
			cfg := basic(base+":21002", member)
			clone := "clone pool /Common/ids"
			if tc.server {
				clone = "serverside { " + clone + " }"
			}
			cond := tc.cond
			if cond == "" {
				cond = "1"
			}
			rule := "when CLIENT_ACCEPTED {\n set n 0\n}\nwhen " + tc.rule + " {\n if { " + cond + " } {\n  incr n\n  if { $n == 2 } { " + clone + " }\n }\n}"
			tc.setup(t, cfg, base+":21002", member, rule)
			addClonePool(cfg, "/Common/ids", base+"1:21001")
			mustApply(t, p, cfg)
			tc.run(t, base+":21002")
			if tc.check != nil {
				tc.check(t, first(cs.wait(t, 1)))
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				want := uint64(1)
				if tc.check == nil {
					want = 0
				}
				return st.Clone != nil && st.Clone.Conns == want && st.Clone.Dropped == tc.dropped
			})
		})
	}
}
