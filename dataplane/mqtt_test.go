package dataplane

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/dataplane/mqtt/mqtttest"
)

// startBroker runs a test broker as a member.
func startBroker(t *testing.T, addr, name string) *mqtttest.Broker {
	t.Helper()
	b, err := mqtttest.StartBroker(addr, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// mqttVirtual adds an mqtt virtual named name at vs over pool, with the
// rule (if any).
func mqttVirtual(t *testing.T, cfg *Config, name, vs, pool, rule string) {
	v := &Virtual{Name: name, Destination: ap(vs), Enabled: true, TranslateAddress: true, TranslatePort: true,
		Pool: pool, SNAT: SNAT{Type: SNATNone}, MQTT: &mqtt.Options{Profile: "/Common/mqtt", Max: 64 << 10}}
	if rule != "" {
		v.Rules, _ = compileRules(t, rule)
	}
	cfg.Virtuals[name] = v
}

// mqttDial connects a client and reads its CONNACK.
func mqttDial(t *testing.T, vs string, connect *mqtt.Packet) (*mqtttest.Client, *mqtt.Packet) {
	t.Helper()
	cl, err := mqtttest.Dial(vs, connect)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cl.Close() })
	ack, err := cl.Expect(mqtt.CONNACK, 10*time.Second)
	if err != nil {
		t.Fatalf("CONNACK: %v", err)
	}
	return cl, ack
}

// subscribe subscribes cl to filter and waits for the SUBACK.
func subscribe(t *testing.T, cl *mqtttest.Client, filter string) {
	t.Helper()
	if err := cl.Send(&mqtt.Packet{Type: mqtt.SUBSCRIBE, PacketID: 1, Subscriptions: []mqtt.Subscription{{Topic: filter, Options: 1}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Expect(mqtt.SUBACK, 10*time.Second); err != nil {
		t.Fatalf("SUBACK: %v", err)
	}
}

// TestMQTTProfile: MQTT through a virtual with the mqtt profile, with
// the test broker as member and packets from a Go client: publish and
// subscribe pass both ways; a rule balances on the client id at
// CONNECT; a rule refuses a CONNECT by user name with its own CONNACK
// and the member never sees it; topics and payloads are rewritten both
// ways; MQTT_CLIENT_SHUTDOWN's insert reaches the member; and malformed,
// oversized or non-CONNECT first packets reset the client and are
// counted.
func TestMQTTProfile(t *testing.T) {
	t.Parallel()
	a := startBroker(t, "127.104.1.10:1883", "member-a")
	b := startBroker(t, "127.104.1.11:1883", "member-b")
	p, _ := newPlane(t)
	cfg := basic("127.104.1.1:1883", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	withPool(cfg, "/Common/pa", a.Addr())
	withPool(cfg, "/Common/pb", b.Addr())
	mqttVirtual(t, cfg, "/Common/plain", "127.104.1.1:1883", "/Common/pool", "")
	mqttVirtual(t, cfg, "/Common/byid", "127.104.1.2:1883", "/Common/pa", `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "CONNECT" && [MQTT::client_id] starts_with "b-"} { pool /Common/pb }
	}`)
	mqttVirtual(t, cfg, "/Common/auth", "127.104.1.3:1883", "/Common/pa", `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "CONNECT" && [MQTT::username] ne "good"} {
			MQTT::respond type CONNACK return_code 5
			MQTT::drop
			MQTT::disconnect
		}
	}`)
	mqttVirtual(t, cfg, "/Common/rewrite", "127.104.1.4:1883", "/Common/pa", `when MQTT_CLIENT_INGRESS {
		switch [MQTT::type] {
			PUBLISH { MQTT::topic "t1/[MQTT::topic]"; MQTT::collect }
			SUBSCRIBE {
				set l {}
				foreach {f q} [MQTT::topic] { lappend l "t1/$f" $q }
				MQTT::topic $l
			}
		}
	}
	when MQTT_CLIENT_DATA { MQTT::payload append "!" }
	when MQTT_CLIENT_EGRESS {
		if {[MQTT::type] eq "PUBLISH" && [MQTT::topic] starts_with "t1/"} { MQTT::topic [string range [MQTT::topic] 3 end] }
	}
	when MQTT_CLIENT_SHUTDOWN { MQTT::insert after type PUBLISH topic "t1/gone" payload "client gone" }`)
	mqttVirtual(t, cfg, "/Common/srv", "127.104.1.5:1883", "/Common/pa", `when MQTT_SERVER_INGRESS {
		if {[MQTT::type] eq "CONNACK"} { MQTT::session_present 1 }
	}
	when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "CONNECT"} {
			if {[MQTT::client_id] eq "quiet"} { MQTT::disable }
		} elseif {[MQTT::type] eq "PINGREQ"} {
			MQTT::respond type PINGRESP
			MQTT::drop
		} else {
			MQTT::drop
		}
	}`)
	mustApply(t, p, cfg)

	t.Run("server side and disable", func(t *testing.T) {
		// MQTT_SERVER_INGRESS edits the member's CONNACK; the rule drops
		// every later packet but answers pings itself.
		cl, ack := mqttDial(t, "127.104.1.5:1883", mqtttest.Connect("loud"))
		if !ack.SessionPresent {
			t.Fatalf("CONNACK %+v, want session present set by the rule", ack)
		}
		cl.Send(&mqtt.Packet{Type: mqtt.SUBSCRIBE, PacketID: 1, Subscriptions: []mqtt.Subscription{{Topic: "$member"}}})
		cl.Send(&mqtt.Packet{Type: mqtt.PINGREQ})
		if got, err := cl.Recv(10 * time.Second); err != nil || got.Type != mqtt.PINGRESP {
			t.Fatalf("after a dropped SUBSCRIBE: %v %+v, want the rule's PINGRESP first", err, got)
		}
		// MQTT::disable in CONNECT: no further MQTT_ events, so nothing
		// is dropped.
		cl, _ = mqttDial(t, "127.104.1.5:1883", mqtttest.Connect("quiet"))
		subscribe(t, cl, "$member")
	})

	t.Run("publish and subscribe", func(t *testing.T) {
		sub, ack := mqttDial(t, "127.104.1.1:1883", mqtttest.Connect("sub-1"))
		if ack.ReturnCode != 0 {
			t.Fatalf("CONNACK return code %d", ack.ReturnCode)
		}
		subscribe(t, sub, "news/#")
		pub, _ := mqttDial(t, "127.104.1.1:1883", mqtttest.Connect("pub-1"))
		if err := pub.Send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "news/x", QoS: 1, PacketID: 7, Payload: []byte("hello")}); err != nil {
			t.Fatal(err)
		}
		if ack, err := pub.Expect(mqtt.PUBACK, 10*time.Second); err != nil || ack.PacketID != 7 {
			t.Fatalf("PUBACK: %v %+v", err, ack)
		}
		got, err := sub.Expect(mqtt.PUBLISH, 10*time.Second)
		if err != nil || got.Topic != "news/x" || string(got.Payload) != "hello" {
			t.Fatalf("delivered: %v %+v", err, got)
		}
		pub.Send(&mqtt.Packet{Type: mqtt.PINGREQ})
		if _, err := pub.Expect(mqtt.PINGRESP, 10*time.Second); err != nil {
			t.Fatalf("PINGRESP: %v", err)
		}
	})

	t.Run("pool by client id", func(t *testing.T) {
		for _, id := range []string{"a-1", "b-1", "a-2", "b-2"} {
			cl, ack := mqttDial(t, "127.104.1.2:1883", mqtttest.Connect(id))
			if ack.ReturnCode != 0 {
				t.Fatalf("%s: CONNACK %d", id, ack.ReturnCode)
			}
			subscribe(t, cl, "$member")
			m, err := cl.Expect(mqtt.PUBLISH, 10*time.Second)
			want := "member-" + id[:1]
			if err != nil || string(m.Payload) != want {
				t.Fatalf("%s served by %v %v, want %s", id, m, err, want)
			}
			cl.Close()
		}
	})

	t.Run("connect refused by user name", func(t *testing.T) {
		bad := mqtttest.Connect("u-1")
		bad.HasUsername, bad.Username = true, "mallory"
		cl, ack := mqttDial(t, "127.104.1.3:1883", bad)
		if ack.ReturnCode != 5 {
			t.Fatalf("CONNACK return code %d, want 5", ack.ReturnCode)
		}
		if _, err := cl.Recv(10 * time.Second); err == nil {
			t.Fatal("the connection stayed open after MQTT::disconnect")
		}
		good := mqtttest.Connect("u-2")
		good.HasUsername, good.Username = true, "good"
		if _, ack := mqttDial(t, "127.104.1.3:1883", good); ack.ReturnCode != 0 {
			t.Fatalf("good user: CONNACK %d", ack.ReturnCode)
		}
		if users := a.Users(); slices.Contains(users, "mallory") || !slices.Contains(users, "good") {
			t.Fatalf("the member saw users %q", users)
		}
	})

	t.Run("topic and payload rewritten", func(t *testing.T) {
		watch, _ := mqttDial(t, "127.104.1.1:1883", mqtttest.Connect("watch"))
		subscribe(t, watch, "t1/#")
		sub, _ := mqttDial(t, "127.104.1.4:1883", mqtttest.Connect("rw-sub"))
		subscribe(t, sub, "room")
		pub, _ := mqttDial(t, "127.104.1.4:1883", mqtttest.Connect("rw-pub"))
		pub.Send(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "room", Payload: []byte("hi")})
		// The member sees the tenant's topic; the subscriber, behind the
		// same rule, gets it back without the prefix.
		if m, err := watch.Expect(mqtt.PUBLISH, 10*time.Second); err != nil || m.Topic != "t1/room" || string(m.Payload) != "hi!" {
			t.Fatalf("at the member: %v %+v", err, m)
		}
		if m, err := sub.Expect(mqtt.PUBLISH, 10*time.Second); err != nil || m.Topic != "room" || string(m.Payload) != "hi!" {
			t.Fatalf("to the subscriber: %v %+v", err, m)
		}
		// A client that closes (a FIN, no DISCONNECT, which would end
		// the member's side first) raises MQTT_CLIENT_SHUTDOWN.
		pub.Close()
		if m, err := watch.Expect(mqtt.PUBLISH, 10*time.Second); err != nil || m.Topic != "t1/gone" {
			t.Fatalf("MQTT_CLIENT_SHUTDOWN's insert: %v %+v", err, m)
		}
	})

	t.Run("malformed packets reset", func(t *testing.T) {
		before := p.ProfileStats(ProfileMQTT, "/Common/mqtt", []string{"/Common/plain"}).MQTT
		ping := (&mqtt.Packet{Type: mqtt.PINGREQ}).Encode(nil, mqtt.V311)
		big := (&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "x", Payload: bytes.Repeat([]byte("x"), 70<<10)}).Encode(nil, mqtt.V311)
		for _, c := range []struct {
			name  string
			first []byte // nil: a good CONNECT first
			then  []byte
		}{
			{"not a CONNECT first", ping, nil},
			{"PUBLISH with QoS 3", nil, []byte{0x36, 3, 0, 1, 'a'}},
			{"past the bound", nil, big},
			{"second CONNECT", nil, mqtttest.Connect("again").Encode(nil, mqtt.V311)},
		} {
			var cl *mqtttest.Client
			if c.first == nil {
				cl, _ = mqttDial(t, "127.104.1.1:1883", mqtttest.Connect("bad"))
				cl.Conn.Write(c.then)
			} else {
				var err error
				if cl, err = mqtttest.Dial("127.104.1.1:1883", &mqtt.Packet{Type: mqtt.PINGREQ}); err != nil {
					t.Fatal(err)
				}
			}
			_, err := cl.Recv(10 * time.Second)
			if err == nil || errors.Is(err, io.EOF) || strings.Contains(err.Error(), "timeout") {
				t.Errorf("%s: %v, want a reset", c.name, err)
			}
			cl.Close()
		}
		eventually(t, "the resets counted", func() bool {
			now := p.ProfileStats(ProfileMQTT, "/Common/mqtt", []string{"/Common/plain"}).MQTT
			return now.Malformed-before.Malformed == 3 && now.TooLarge-before.TooLarge == 1
		})
	})
}

// TestMQTTMosquitto: the mosquitto clients through the virtual, a
// subscriber getting what a publisher sent, and mosquitto_pub refused
// by a rule's CONNACK.
func TestMQTTMosquitto(t *testing.T) {
	t.Parallel()
	pubPath, err1 := exec.LookPath("mosquitto_pub")
	subPath, err2 := exec.LookPath("mosquitto_sub")
	if err1 != nil || err2 != nil {
		t.Skip("mosquitto_pub and mosquitto_sub are not installed (Debian package mosquitto-clients)")
	}
	a := startBroker(t, "127.104.2.10:1883", "member-a")
	p, _ := newPlane(t)
	cfg := basic("127.104.2.1:1883", a.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	mqttVirtual(t, cfg, "/Common/m", "127.104.2.1:1883", "/Common/pool", refuseMallory)
	mustApply(t, p, cfg)
	args := []string{"-h", "127.104.2.1", "-p", "1883"}
	for _, v := range []string{"mqttv311", "mqttv5"} {
		t.Run(v, func(t *testing.T) { mosquittoExchange(t, pubPath, subPath, args, v, "m/"+v, "hello "+v, a) })
	}
}

// refuseMallory is a rule that answers a CONNECT from user mallory with
// CONNACK "not authorized" and closes it before the member sees it.
const refuseMallory = `when MQTT_CLIENT_INGRESS {
		if {[MQTT::type] eq "CONNECT" && [MQTT::username] eq "mallory"} {
			MQTT::respond type CONNACK return_code 5
			MQTT::drop
			MQTT::disconnect
		}
	}`

// mosquittoExchange has mosquitto_sub (protocol version v, connection
// arguments args) get msg on topic from mosquitto_pub through a virtual
// with refuseMallory, and mosquitto_pub as mallory refused there, unseen
// by member.
func mosquittoExchange(t *testing.T, pubPath, subPath string, args []string, v, topic, msg string, member *mqtttest.Broker) {
	t.Helper()
	with := func(more ...string) []string { return append(slices.Clone(args), more...) }
	sub := exec.Command(subPath, with("-V", v, "-i", "sub-"+v, "-t", topic, "-C", "1", "-W", "20")...)
	var out bytes.Buffer
	sub.Stdout = &out
	if err := sub.Start(); err != nil {
		t.Fatal(err)
	}
	// Publish until the subscriber (whose subscription may not be in
	// yet) has its message.
	done := make(chan error, 1)
	go func() { done <- sub.Wait() }()
	var err error
	for i := 0; i < 100; i++ {
		pub := exec.Command(pubPath, with("-V", v, "-i", fmt.Sprintf("pub-%s-%d", v, i), "-t", topic, "-q", "1", "-m", msg)...)
		if b, err := pub.CombinedOutput(); err != nil {
			t.Fatalf("mosquitto_pub: %v %s", err, b)
		}
		select {
		case err = <-done:
			i = 100
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err != nil || strings.TrimSpace(out.String()) != msg {
		t.Fatalf("mosquitto_sub: %v %q", err, out.String())
	}
	bad := exec.Command(pubPath, with("-V", v, "-u", "mallory", "-t", "x", "-m", "x")...)
	if b, err := bad.CombinedOutput(); err == nil {
		t.Fatalf("mosquitto_pub as mallory succeeded: %s", b)
	}
	if slices.Contains(member.Users(), "mallory") {
		t.Fatal("the member saw mallory's CONNECT")
	}
}
