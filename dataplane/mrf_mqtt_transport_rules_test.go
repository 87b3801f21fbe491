package dataplane

import (
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfmqtt"
)

// TestMRFTransportRulesMQTT: an MQTT router's broker connections made
// by a transport-config with rules run them: CLIENT_ACCEPTED as the
// connection opens, MR_EGRESS and MQTT_SERVER_EGRESS over the client's
// packets to the broker (a topic rewritten there reaches the broker;
// MQTT::drop keeps a packet from it), MQTT_SERVER_INGRESS,
// MQTT_SERVER_DATA (after MQTT::collect) and MR_INGRESS over the
// broker's (a payload edit reaches the subscriber), CLIENT_CLOSED as
// the connection ends.
func TestMRFTransportRulesMQTT(t *testing.T) {
	t.Parallel()
	b := startBroker(t, "127.175.2.1:1883", "member-a")
	p, _ := newPlane(t)
	cfg := basic("127.175.2.10:1883", b.Addr())
	withPool(cfg, "/Common/pa", b.Addr())
	prog, lg := transportRules(t, `when CLIENT_ACCEPTED {
  log local0. "accepted [IP::remote_addr]"
}
when MR_EGRESS {
  if { [MQTT::type] eq "CONNECT" } { set cid [MQTT::client_id] }
}
when MQTT_SERVER_EGRESS {
  log local0. "egress [MQTT::type]"
  if { [MQTT::type] eq "PUBLISH" } {
    if { [MQTT::topic] eq "secret" } {
      MQTT::drop
    } else {
      MQTT::topic "tc/[MQTT::topic]"
    }
  }
}
when MQTT_SERVER_INGRESS {
  if { [MQTT::type] eq "PUBLISH" } { MQTT::collect }
}
when MQTT_SERVER_DATA {
  MQTT::payload append " +tc"
}
when MR_INGRESS {
  log local0. "ingress [MQTT::type]"
}
when CLIENT_CLOSED {
  log local0. "closed $cid"
}`)
	tc := &mrf.Transport{Name: "/Common/tc", Rules: prog, RulesKey: "a"}
	peer := &mrf.Peer{Name: "/Common/peer_a", Pool: "/Common/pa", Conns: 1, Mode: mrf.PerClient, Transport: tc.Name, TC: tc}
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/ms", Router: "/Common/rt", MaxRetries: 1, DefaultPool: "/Common/pool", Idle: time.Minute,
		Proto:  &mrfmqtt.Session{},
		Routes: []*mrf.Route{{Name: "/Common/r", Peers: []*mrf.Peer{peer}}}, Peers: map[string]*mrf.Peer{peer.Name: peer},
		Transports: map[string]*mrf.Transport{tc.Name: tc}}
	mustApply(t, p, cfg)

	sub, ack := mqttDial(t, "127.175.2.10:1883", mqtttest.Connect("sub"))
	if ack.ReturnCode != 0 {
		t.Fatalf("CONNACK %d", ack.ReturnCode)
	}
	subscribe(t, sub, "tc/#")
	pub, _ := mqttDial(t, "127.175.2.10:1883", mqtttest.Connect("pub"))
	for _, topic := range []string{"secret", "room"} {
		if err := pub.Send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: topic, Payload: []byte("hi")}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := sub.Expect(mqtt.PUBLISH, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.Topic != "tc/room" || string(got.Payload) != "hi +tc" {
		t.Fatalf("delivered %q %q, want tc/room \"hi +tc\" (the secret one dropped)", got.Topic, got.Payload)
	}
	waitRuleLog(t, lg, "accepted 127.175.2.1")
	waitRuleLog(t, lg, "egress CONNECT")
	waitRuleLog(t, lg, "ingress CONNACK")
	waitRuleLog(t, lg, "ingress SUBACK")
	pub.Close()
	waitRuleLog(t, lg, "closed pub")
	for _, l := range lg.Lines() {
		if strings.Contains(l, "TCL error") {
			t.Fatalf("rule error: %s", l)
		}
	}
}
