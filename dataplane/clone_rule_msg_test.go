package dataplane

import (
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/diameter"
	"github.com/openltm/openltm/dataplane/fix"
	"github.com/openltm/openltm/dataplane/ftpalg"
	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
)

// TestRuleCloneMessage: on the gateways that serve the client message
// by message (mqtt, fix, diameter) a rule's clone in a client message's
// event copies from that message on: the client's second message
// starts the copy, so the clone member gets it and the later ones, not
// the first; clientside as the client sent them, serverside as the
// member got them. A clone in an event over the member's messages
// (MQTT_SERVER_INGRESS, FIX_MESSAGE with response-parsing, a member's
// DIAMETER_INGRESS) copies the member's messages from that one on:
// clientside as the client got them, serverside as the member sent
// them. The client's answers come from the member alone, and a clone in
// the member's packet's egress (MQTT_CLIENT_EGRESS) is skipped and
// counted as dropped.
func TestRuleCloneMessage(t *testing.T) {
	t.Parallel()
	enc := func(p *mqtt.Packet) string { return string(p.Encode(nil, mqtt.V311)) }
	pub := &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room", Payload: []byte("x")}
	ping := &mqtt.Packet{Type: mqtt.PINGREQ}
	pingresp := &mqtt.Packet{Type: mqtt.PINGRESP}
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
	mqttMember := func(t *testing.T, addr string) string { return startBroker(t, addr, "member-a").Addr() }
	mqttSetup := func(t *testing.T, cfg *Config, vs, member, rule string) {
		mqttVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", rule)
	}
	fixMember := func(t *testing.T, addr string) string { return startAcceptor(t, addr, "member-a").Addr() }
	fixSetup := func(t *testing.T, cfg *Config, vs, member, rule string) {
		delete(cfg.Virtuals, "/Common/vs")
		fixVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", fix.Options{FullLogon: true}, rule)
	}
	fixResponse := func(t *testing.T, cfg *Config, vs, member, rule string) {
		delete(cfg.Virtuals, "/Common/vs")
		fixVirtual(t, cfg, "/Common/vs", vs, "/Common/pool", fix.Options{FullLogon: true, Response: true}, rule)
	}
	fixRun := func(t *testing.T, vs string) {
		c := fixDial(t, vs)
		c.Send(fixLogon("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=A", "49=member-a")
		c.Send(fixOrder("FIX.4.4", "BANZAI"))
		recvHas(t, c, "35=8", "11=ORD1")
		c.Close()
	}
	k := 0 // the rows of 127.214.31.<k+1>
	for _, tc := range []struct {
		name    string
		base    string // the row's addresses ("": 127.214.31.<i+1>)
		rule    string // the event, n counting the messages it runs over
		cond    string // the messages counted ("": all)
		body    string // the whole rule, instead of rule and cond
		server  bool   // the rule's clone in serverside { }
		dropped uint64
		setup   func(t *testing.T, cfg *Config, vs, member, rule string)
		member  func(t *testing.T, addr string) string
		run     func(t *testing.T, vs string)
		check   func(t *testing.T, got string)
	}{
		{name: "mqtt", rule: "MQTT_CLIENT_INGRESS",
			member: mqttMember, setup: mqttSetup, run: mqttRun,
			check: func(t *testing.T, got string) {
				if want := enc(pub) + enc(ping); got != want {
					t.Errorf("rule's clone got %q, want the PUBLISH and the PINGREQ %q", got, want)
				}
			}},
		{name: "mqtt server ingress", base: "127.217.31.1",
			body:   "when CLIENT_ACCEPTED {\n set n 0\n}\nwhen MQTT_SERVER_INGRESS {\n incr n\n if { $n == 2 } { clientside { clone pool /Common/ids } }\n}",
			member: mqttMember, setup: mqttSetup, run: mqttRun,
			check: func(t *testing.T, got string) {
				if want := enc(pingresp); got != want {
					t.Errorf("MQTT_SERVER_INGRESS's clone got %q, want the broker's PINGRESP alone (not its CONNACK) %q", got, want)
				}
			}},
		{name: "mqtt server ingress serverside", rule: "MQTT_SERVER_INGRESS", server: true, base: "127.217.31.2",
			member: mqttMember, setup: mqttSetup, run: mqttRun,
			check: func(t *testing.T, got string) {
				if want := enc(pingresp); got != want {
					t.Errorf("serverside clone got %q, want the broker's PINGRESP %q", got, want)
				}
			}},
		{name: "mqtt client egress", rule: "MQTT_CLIENT_EGRESS", dropped: 1, base: "127.217.31.3",
			member: mqttMember, setup: mqttSetup, run: mqttRun},
		{name: "mqtt server connected", body: "when SERVER_CONNECTED {\n clientside { clone pool /Common/ids }\n}",
			member: mqttMember, setup: mqttSetup, run: mqttRun,
			check: func(t *testing.T, got string) {
				if want := enc(mqtttest.Connect("cloned")) + enc(pub) + enc(ping); got != want {
					t.Errorf("SERVER_CONNECTED's clone got %q, want the CONNECT and the rest %q", got, want)
				}
			}},
		{name: "fix lb selected", body: "when LB_SELECTED {\n clone pool /Common/ids\n}",
			member: fixMember, setup: fixSetup, run: fixRun,
			check: func(t *testing.T, got string) {
				if want := string(fixLogon("FIX.4.4", "BANZAI")) + string(fixOrder("FIX.4.4", "BANZAI")); got != want {
					t.Errorf("LB_SELECTED's clone got %q, want the logon and the order %q", got, want)
				}
			}},
		{name: "fix", rule: "FIX_MESSAGE",
			member: fixMember, setup: fixSetup, run: fixRun,
			check: func(t *testing.T, got string) {
				if want := string(fixOrder("FIX.4.4", "BANZAI")); got != want {
					t.Errorf("rule's clone got %q, want the order alone %q", got, want)
				}
			}},
		{name: "fix response", rule: "FIX_MESSAGE", cond: "[FIX::tag get 49] eq \"member-a\"", base: "127.217.31.4",
			member: fixMember, setup: fixResponse, run: fixRun,
			check: func(t *testing.T, got string) {
				if !strings.HasPrefix(got, "8=FIX.4.4\x01") || !strings.Contains(got, "\x0135=8\x01") || strings.Contains(got, "\x0135=A\x01") || strings.Contains(got, "49=BANZAI") {
					t.Errorf("clone of the member's messages got %q, want its execution report alone", got)
				}
			}},
		{name: "diameter member serverside", rule: "DIAMETER_INGRESS", cond: "![DIAMETER::is_request]", server: true, base: "127.217.31.5",
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
				if n := strings.Count(got, "client.example;clone;"); n != 2 || diamMessages(got) != 2 || got[4]&0x80 != 0 {
					t.Errorf("clone of the member's messages got %d answers' sessions in %d messages (%q), want both CCAs and not the CEA", n, diamMessages(got), got)
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
			base := tc.base
			if base == "" {
				base = "127.214.31." + string(rune('1'+k))
				k++
			}
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
			if tc.body != "" {
				rule = tc.body
			}
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

// TestRuleCloneSOCKSRequest: on a socks virtual a rule's clone in
// SOCKS_REQUEST, which runs before the tunnel is opened, copies the
// tunnel's bytes as one in CLIENT_ACCEPTED does (the SOCKS request
// itself is not copied); one run for another destination's client is
// not started.
func TestRuleCloneSOCKSRequest(t *testing.T) {
	t.Parallel()
	echoMember(t, "127.214.32.10:21080")
	cs := startCloneCollector(t, "127.214.32.11:21001")
	p, _ := newPlane(t)
	cfg := socksConfig("127.214.32.1:21080", "127.214.32.10:21080", netip.MustParseAddrPort("127.214.32.12:53"), true)
	cfg.Virtuals["/Common/socks"].Rules, _ = compileRules(t, "when SOCKS_REQUEST {\n if { [SOCKS::destination] ends_with \":21080\" } { clone pool /Common/ids }\n}")
	addClonePool(cfg, "/Common/ids", "127.214.32.11:21001")
	mustApply(t, p, cfg)
	req := []byte{5, 1, 0, 5, 1, 0, 1, 127, 214, 32, 10, 21080 >> 8, 21080 & 0xff}
	code, c := socksDial(t, "127.214.32.1:21080", req)
	if code != 0 {
		t.Fatalf("SOCKS reply %d", code)
	}
	if _, err := c.Write([]byte("through the tunnel")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("through the tunnel"))
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "through the tunnel" {
		t.Fatalf("echo %q %v", got, err)
	}
	c.Close()
	if got := first(cs.wait(t, 1)); got != "through the tunnel" {
		t.Errorf("rule's clone got %q, want the tunnel's bytes alone", got)
	}
}

// TestRuleCloneFTPBind: on an ftp virtual a rule's clone in
// LB_SELECTED or SERVER_CONNECTED, which run before the control
// connection's pumps start (the member speaks first), copies the
// client's commands from the first, as one in CLIENT_ACCEPTED does;
// serverside as the member got them.
func TestRuleCloneFTPBind(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct{ event, clone string }{
		{"LB_SELECTED", "clone pool /Common/ids"},
		{"SERVER_CONNECTED", "serverside { clone pool /Common/ids }"},
	} {
		t.Run(tc.event, func(t *testing.T) {
			base := "127.214.33." + string(rune('1'+i))
			startFTPMember(t, base+"0:22121", nil)
			cs := startCloneCollector(t, base+"1:21001")
			p, _ := newPlane(t)
			cfg := basic(base+":22121", base+"0:22121")
			v := cfg.Virtuals["/Common/vs"]
			v.FTP = &ftpalg.Options{Profile: "/Common/ftp", DataPort: 20, TranslateExtended: true}
			v.Rules, _ = compileRules(t, "when "+tc.event+" {\n "+tc.clone+"\n}")
			addClonePool(cfg, "/Common/ids", base+"1:21001")
			mustApply(t, p, cfg)
			c := ftpClient(t, base+":22121")
			c.PrintfLine("QUIT")
			c.ReadResponse(221)
			c.Close()
			got := first(cs.wait(t, 1))
			if want := "USER anonymous\r\nPASS x\r\nTYPE I\r\nQUIT\r\n"; got != want {
				t.Errorf("rule's clone got %q, want the client's commands %q", got, want)
			}
		})
	}
}

// TestRuleCloneServerData: on a standard virtual a rule's clone in
// SERVER_DATA (after SERVER_CONNECTED's TCP::collect), which runs on the
// member's goroutine, copies the client's bytes from the command on: the
// goroutine reading the client joins the clone before it copies its
// next bytes, so the clone member gets the client's second message and
// not the first (whose echo ran the event); clientside as the client
// sent it, serverside as the member got it.
func TestRuleCloneServerData(t *testing.T) {
	t.Parallel()
	for i, tc := range []struct{ name, clone string }{
		{"clientside", "clone pool /Common/ids"},
		{"serverside", "serverside { clone pool /Common/ids }"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.214.34." + string(rune('1'+i))
			echoMember(t, base+"0:23000")
			cs := startCloneCollector(t, base+"1:21001")
			p, _ := newPlane(t)
			cfg := basic(base+":23000", base+"0:23000")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, "when SERVER_CONNECTED {\n TCP::collect\n}\nwhen SERVER_DATA {\n if { ![info exists tapped] } {\n  set tapped 1\n  "+tc.clone+"\n }\n TCP::release\n TCP::collect\n}")
			addClonePool(cfg, "/Common/ids", base+"1:21001")
			mustApply(t, p, cfg)
			c, err := net.DialTimeout("tcp", base+":23000", 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			for _, m := range []string{"first message", "second message"} {
				if _, err := c.Write([]byte(m)); err != nil {
					t.Fatal(err)
				}
				got := make([]byte, len(m))
				if _, err := io.ReadFull(c, got); err != nil || string(got) != m {
					t.Fatalf("echo of %q: %q %v", m, got, err)
				}
			}
			c.Close()
			if got := first(cs.wait(t, 1)); got != "second message" {
				t.Errorf("rule's clone got %q, want the second message alone", got)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Dropped == 0
			})
		})
	}
}
