package rules

import (
	"bytes"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mqtt"
)

// TestMQTTCommands: in the MQTT_ events the MQTT:: commands read and
// edit the packet in hand, make packets for the sender and the
// destination, and drop or disconnect; edits that would leave the
// packet malformed are errors and leave it as it was.
func TestMQTTCommands(t *testing.T) {
	connect := func() *mqtt.Packet {
		return &mqtt.Packet{Type: mqtt.CONNECT, ProtocolName: "MQTT", ProtocolVersion: mqtt.V311, CleanSession: true, KeepAlive: 30,
			ClientID: "dev-1", HasUsername: true, Username: "ann", HasPassword: true, Password: []byte("pw"),
			Will: true, WillQoS: 1, WillTopic: "w", WillMessage: []byte("bye")}
	}
	publish := func() *mqtt.Packet {
		return &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a/b", QoS: 1, PacketID: 9, Payload: []byte("data")}
	}
	enc := func(p *mqtt.Packet) string { return string(p.Encode(nil, mqtt.V311)) }
	cases := []struct {
		name string
		pkt  func() *mqtt.Packet
		body string
		ev   Event
		log  string
		want func(p *mqtt.Packet) bool // the packet after the event
		out  func(o MQTTOutcome) bool
		err  string
	}{
		{name: "connect fields", pkt: connect, body: `log local0. "[MQTT::type] [MQTT::client_id] [MQTT::username] [MQTT::password] [MQTT::clean_session] [MQTT::keep_alive] [MQTT::protocol_name] [MQTT::protocol_version]"`,
			log: "CONNECT dev-1 ann pw 1 30 MQTT 4"},
		{name: "will", pkt: connect, body: `log local0. "[MQTT::will] [MQTT::will topic]"`, log: "topic w message bye qos 1 retain 0 w"},
		{name: "length", pkt: publish, body: `log local0. [MQTT::length]`, log: "11"},
		{name: "set client id", pkt: connect, body: `MQTT::client_id dev-2`, want: func(p *mqtt.Packet) bool { return p.ClientID == "dev-2" },
			out: func(o MQTTOutcome) bool { return o.Edited }},
		{name: "publish fields", pkt: publish, body: `log local0. "[MQTT::topic] [MQTT::qos] [MQTT::dup] [MQTT::retain] [MQTT::packet_id] [MQTT::payload] [MQTT::payload length]"`,
			log: "a/b 1 0 0 9 data 4"},
		{name: "payload prepend and append", pkt: publish, body: `MQTT::payload prepend <; MQTT::payload append >`,
			want: func(p *mqtt.Packet) bool { return string(p.Payload) == "<data>" }},
		{name: "topic replaced", pkt: publish, body: `MQTT::topic x/[MQTT::topic]`, want: func(p *mqtt.Packet) bool { return p.Topic == "x/a/b" }},
		{name: "subscribe topics", body: `log local0. [MQTT::topic]; MQTT::topic {t/1 0 t/2 2}`,
			pkt: func() *mqtt.Packet {
				return &mqtt.Packet{Type: mqtt.SUBSCRIBE, PacketID: 1, Subscriptions: []mqtt.Subscription{{Topic: "s", Options: 1}}}
			}, log: "s 1",
			want: func(p *mqtt.Packet) bool {
				return len(p.Subscriptions) == 2 && p.Subscriptions[1] == mqtt.Subscription{Topic: "t/2", Options: 2}
			}},
		{name: "connack", ev: MQTTServerIngress, pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.CONNACK, ReturnCode: 0} },
			body: `log local0. "[MQTT::return_code] [MQTT::session_present]"; MQTT::return_code 4`, log: "0 0",
			want: func(p *mqtt.Packet) bool { return p.ReturnCode == 4 }},
		{name: "suback codes", ev: MQTTServerIngress, pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.SUBACK, PacketID: 2, ReturnCodes: []byte{0, 1}} },
			body: `log local0. [MQTT::return_code_list]; MQTT::return_code_list {128 128}`, log: "0 1",
			want: func(p *mqtt.Packet) bool { return bytes.Equal(p.ReturnCodes, []byte{128, 128}) }},
		{name: "respond, drop and disconnect", pkt: connect, body: `MQTT::respond type CONNACK return_code 5; MQTT::drop; MQTT::disconnect`,
			out: func(o MQTTOutcome) bool {
				return o.Drop && o.Disconnect && len(o.Respond) == 1 && string(o.Respond[0]) == enc(&mqtt.Packet{Type: mqtt.CONNACK, ReturnCode: 5})
			}},
		{name: "insert before and after", pkt: publish, body: `MQTT::insert before type PUBLISH topic a payload 1; MQTT::insert after type PINGREQ`,
			out: func(o MQTTOutcome) bool {
				return len(o.Before) == 1 && len(o.After) == 1 && string(o.After[0]) == enc(&mqtt.Packet{Type: mqtt.PINGREQ}) &&
					string(o.Before[0]) == enc(&mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a", Payload: []byte("1")})
			}},
		{name: "replace", pkt: publish, body: `MQTT::replace type PUBLISH topic z payload new qos 0`,
			want: func(p *mqtt.Packet) bool { return p.Topic == "z" && string(p.Payload) == "new" && p.QoS == 0 }},
		{name: "message bytes", pkt: publish, body: `log local0. [string length [MQTT::message type SUBSCRIBE packet_id 3 topic_list {a 1}]]`, log: "8"},
		{name: "collect", pkt: publish, body: `MQTT::collect`, out: func(o MQTTOutcome) bool { return o.Collect }},
		{name: "collect then release", pkt: publish, body: `MQTT::collect 2; MQTT::release`, out: func(o MQTTOutcome) bool { return !o.Collect }},
		{name: "wrong packet type", pkt: publish, body: `MQTT::client_id`, err: "not valid for a PUBLISH message"},
		{name: "qos out of range", pkt: publish, body: `MQTT::qos 3`, err: "expected a number from 0 to 2"},
		{name: "qos 1 without packet id", pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "t"} }, body: `MQTT::qos 1`, err: "would not be valid"},
		{name: "topic with NUL", pkt: publish, body: "MQTT::topic \"a\\0b\"", err: "would not be valid"},
		{name: "respond without a type", pkt: publish, body: `MQTT::respond return_code 1`, err: "expected type TYPE"},
		{name: "respond unknown field", pkt: publish, body: `MQTT::respond type PUBACK packet_id 1 frob 2`, err: `unknown field "frob"`},
		{name: "respond subscribe without topics", pkt: publish, body: `MQTT::respond type SUBSCRIBE packet_id 1`, err: "not a valid SUBSCRIBE"},
		{name: "insert where", pkt: publish, body: `MQTT::insert type PINGREQ`, err: "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ev := c.ev
			if ev == 0 {
				ev = MQTTClientIngress
			}
			r := mustCompile(t, "mqtt", "when "+ev.String()+" { "+c.body+" }")
			if u := r.Unsupported(); len(u) > 0 {
				t.Fatalf("refused as not implemented: %v", u)
			}
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			pkt := c.pkt()
			before := enc(pkt)
			s.SetMQTT()
			s.MQTT().Version = mqtt.V311
			s.BeginMQTT(pkt)
			err := s.Run(ev)
			o := s.EndMQTT()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if enc(pkt) != before {
					t.Fatal("the packet changed by a failed command")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.log != "" && (len(logged) == 0 || !strings.HasSuffix(logged[len(logged)-1], ">: "+c.log)) {
				t.Fatalf("logged %q, want %q", logged, c.log)
			}
			if c.want != nil && (!c.want(pkt) || !o.Edited) {
				t.Fatalf("packet after the event %+v (edited %v)", pkt, o.Edited)
			}
			if c.want == nil && o.Edited != (c.out != nil && o.Edited) {
				t.Fatalf("packet marked edited: %+v", pkt)
			}
			if c.out != nil && !c.out(o) {
				t.Fatalf("outcome %+v", o)
			}
		})
	}
}

// TestMQTTNoProfile: the commands fail clearly on a connection without
// an mqtt profile, and the MQTT_ events need one.
func TestMQTTNoProfile(t *testing.T) {
	r := mustCompile(t, "m", `when CLIENT_ACCEPTED { MQTT::type }
when MQTT_CLIENT_INGRESS { log local0. hi }`)
	if n := r.MQTTNeeds(); len(n) != 1 || n[0].Name != "MQTT_CLIENT_INGRESS" {
		t.Fatalf("MQTTNeeds = %+v", n)
	}
	s := NewProgram(&Env{}, r).NewConnState(newFakeConn())
	defer s.Release()
	if err := s.Run(ClientAccepted); err == nil || !strings.Contains(err.Error(), "no mqtt profile") {
		t.Fatalf("error %v", err)
	}
}
