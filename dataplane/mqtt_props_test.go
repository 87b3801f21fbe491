package dataplane

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
)

// TestMQTTProperties: a rule reads a 5.0 PUBLISH's user properties and
// edits them on the way to the member, whose subscribers get the packet
// with its property block encoded again; 3.1.1 clients pass as before.
func TestMQTTProperties(t *testing.T) {
	t.Parallel()
	a := startBroker(t, "127.112.3.10:1883", "member-a")
	p, _ := newPlane(t)
	cfg := basic("127.112.3.1:1883", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	mqttVirtual(t, cfg, "/Common/props", "127.112.3.1:1883", "/Common/pool", `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "CONNECT"} { set v5 [expr {[MQTT::protocol_version] == 5}] }
		if {[MQTT::type] eq "PUBLISH" && $v5} {
			array set u [MQTT::property user_property]
			if {[info exists u(secret)]} { MQTT::property remove user_property }
			MQTT::property user_property [concat [MQTT::property user_property] [list via ltm]]
			MQTT::property content_type "seen/[MQTT::property content_type]"
		}
	}`)
	mustApply(t, p, cfg)
	v5 := func(id string) *mqtt.Packet {
		return &mqtt.Packet{Type: mqtt.CONNECT, ProtocolName: "MQTT", ProtocolVersion: mqtt.V5, CleanSession: true, KeepAlive: 60, ClientID: id}
	}
	userProps := func(t *testing.T, m *mqtt.Packet) string {
		props, err := mqtt.ParseProps(m.Props)
		if err != nil {
			t.Fatal(err)
		}
		var l []string
		for _, x := range props {
			switch x.Info.Kind {
			case mqtt.PropPair:
				l = append(l, x.Key+":"+x.Value)
			case mqtt.PropString:
				l = append(l, x.Info.Name+"="+x.Value)
			}
		}
		return strings.Join(l, " ")
	}
	sub, _ := mqttDial(t, "127.112.3.1:1883", v5("sub"))
	subscribe(t, sub, "p/#")
	pub, _ := mqttDial(t, "127.112.3.1:1883", v5("pub"))
	up, ok1 := mqtt.PropByName("user_property")
	ct, ok2 := mqtt.PropByName("content_type")
	if !ok1 || !ok2 {
		t.Fatal("properties unknown to the codec")
	}
	for _, tt := range []struct {
		name  string
		props []mqtt.Prop
		want  string
	}{
		{"added", []mqtt.Prop{{Info: up, Key: "region", Value: "eu"}, {Info: ct, Value: "text"}}, "region:eu via:ltm content_type=seen/text"},
		{"removed", []mqtt.Prop{{Info: up, Key: "secret", Value: "x"}}, "via:ltm content_type=seen/"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			block, err := mqtt.AppendProps(nil, tt.props)
			if err != nil {
				t.Fatal(err)
			}
			if err := pub.Send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "p/" + tt.name, Payload: []byte("m"), Props: block}); err != nil {
				t.Fatal(err)
			}
			m, err := sub.Expect(mqtt.PUBLISH, 10*time.Second)
			if err != nil || m.Topic != "p/"+tt.name {
				t.Fatalf("PUBLISH: %v %+v", err, m)
			}
			if got := userProps(t, m); got != tt.want {
				t.Fatalf("properties at the subscriber %q, want %q", got, tt.want)
			}
		})
	}

	// mosquitto's 5.0 clients: the user property the publisher set and
	// the one the rule added reach the subscriber.
	pubPath, err1 := exec.LookPath("mosquitto_pub")
	subPath, err2 := exec.LookPath("mosquitto_sub")
	if err1 != nil || err2 != nil {
		t.Log("mosquitto_pub and mosquitto_sub are not installed (Debian package mosquitto-clients): their part skipped")
		return
	}
	msub := exec.Command(subPath, "-h", "127.112.3.1", "-p", "1883", "-V", "mqttv5", "-i", "msub", "-t", "m/1", "-C", "1", "-W", "20", "-F", "%P %p")
	var out bytes.Buffer
	msub.Stdout = &out
	if err := msub.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- msub.Wait() }()
	var err error
	for i := 0; i < 100; i++ {
		mp := exec.Command(pubPath, "-h", "127.112.3.1", "-p", "1883", "-V", "mqttv5", "-i", fmt.Sprintf("mpub-%d", i), "-t", "m/1",
			"-D", "publish", "user-property", "app", "demo", "-m", "hello")
		if b, err := mp.CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_pub: %v %s", err, b)
		}
		select {
		case err = <-done:
			i = 100
		case <-time.After(100 * time.Millisecond):
		}
	}
	if got := strings.TrimSpace(out.String()); err != nil || got != "app:demo via:ltm hello" {
		t.Fatalf("mosquitto_sub: %v %q", err, got)
	}
}

// TestMQTTClonePools: a clientside clone pool gets the MQTT packets as
// the client sent them, a serverside one as the member got them (after
// the rule rewrote the topic).
func TestMQTTClonePools(t *testing.T) {
	t.Parallel()
	a := startBroker(t, "127.112.6.10:1883", "member-a")
	cs := startCloneCollector(t, "127.112.6.20:9000")
	ss := startCloneCollector(t, "127.112.6.21:9000")
	p, _ := newPlane(t)
	cfg := basic("127.112.6.1:1883", a.Addr())
	mqttVirtual(t, cfg, "/Common/vs", "127.112.6.1:1883", "/Common/pool", `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "PUBLISH"} { MQTT::topic "c/[MQTT::topic]" }
	}`)
	withClone(cfg, "/Common/clone_c", false, "127.112.6.20:9000")
	withClone(cfg, "/Common/clone_s", true, "127.112.6.21:9000")
	mustApply(t, p, cfg)
	connect := mqtttest.Connect("cloned")
	cl, _ := mqttDial(t, "127.112.6.1:1883", connect)
	pub := &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room", Payload: []byte("x")}
	if err := cl.Send(pub); err != nil {
		t.Fatal(err)
	}
	// The member got it once the PINGRESP to a later PINGREQ is back.
	if err := cl.Send(&mqtt.Packet{Type: mqtt.PINGREQ}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Expect(mqtt.PINGRESP, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	cl.Close()
	enc := func(p *mqtt.Packet) string { return string(p.Encode(nil, mqtt.V311)) }
	ping := enc(&mqtt.Packet{Type: mqtt.PINGREQ})
	rewritten := *pub
	rewritten.Topic = "c/room"
	if got, want := first(cs.wait(t, 1)), enc(connect)+enc(pub)+ping; got != want {
		t.Errorf("clientside clone got %q, want %q", got, want)
	}
	if got, want := first(ss.wait(t, 1)), enc(connect)+enc(&rewritten)+ping; got != want {
		t.Errorf("serverside clone got %q, want %q", got, want)
	}
}
