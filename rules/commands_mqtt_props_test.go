package rules

import (
	"strconv"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mqtt"
)

// TestMQTTProperty: MQTT::property reads a 5.0 packet's properties in
// order and edits them, the block encoded again; an edit the packet may
// not carry, a bad value or a 3.1.1 connection is an error and leaves the
// packet as it was.
func TestMQTTProperty(t *testing.T) {
	prop := func(name string) *mqtt.PropInfo {
		pi, ok := mqtt.PropByName(name)
		if !ok {
			t.Fatalf("no property %s", name)
		}
		return pi
	}
	block := func(props ...mqtt.Prop) []byte {
		b, err := mqtt.AppendProps(nil, props)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	publish := func() *mqtt.Packet {
		return &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a", Payload: []byte("x"), Props: block(
			mqtt.Prop{Info: prop("content_type"), Value: "text/plain"},
			mqtt.Prop{Info: prop("user_property"), Key: "region", Value: "eu"},
			mqtt.Prop{Info: prop("message_expiry_interval"), Num: 60},
			mqtt.Prop{Info: prop("user_property"), Key: "tenant", Value: "t1"})}
	}
	connect := func() *mqtt.Packet {
		return &mqtt.Packet{Type: mqtt.CONNECT, ProtocolName: "MQTT", ProtocolVersion: mqtt.V5, CleanSession: true, ClientID: "c",
			Props: block(mqtt.Prop{Info: prop("session_expiry_interval"), Num: 30})}
	}
	names := func(p *mqtt.Packet) string {
		props, err := mqtt.ParseProps(p.Props)
		if err != nil {
			return err.Error()
		}
		var l []string
		for _, x := range props {
			s := x.Info.Name + "="
			switch x.Info.Kind {
			case mqtt.PropPair:
				s += x.Key + ":" + x.Value
			case mqtt.PropString, mqtt.PropBinary:
				s += x.Value
			default:
				s += strconv.FormatUint(uint64(x.Num), 10)
			}
			l = append(l, s)
		}
		return strings.Join(l, " ")
	}
	cases := []struct {
		name    string
		pkt     func() *mqtt.Packet
		version uint8
		body    string
		log     string
		want    string // the properties after the event
		err     string
	}{
		{name: "all", pkt: publish, body: `log local0. [MQTT::property]`,
			log: "content_type text/plain user_property {region eu} message_expiry_interval 60 user_property {tenant t1}"},
		{name: "one", pkt: publish, body: `log local0. "[MQTT::property content_type]/[MQTT::property message_expiry_interval]/[MQTT::property topic_alias]"`,
			log: "text/plain/60/"},
		{name: "user properties", pkt: publish, body: `array set u [MQTT::property user_property]; log local0. $u(tenant)`, log: "t1"},
		{name: "set in place", pkt: publish, body: `MQTT::property content_type application/json`,
			want: "content_type=application/json user_property=region:eu message_expiry_interval=60 user_property=tenant:t1"},
		{name: "user properties replaced", pkt: publish, body: `MQTT::property user_property [list region us via ltm]`,
			want: "content_type=text/plain user_property=region:us user_property=via:ltm message_expiry_interval=60"},
		{name: "added at the end", pkt: publish, body: `MQTT::property topic_alias 7`,
			want: "content_type=text/plain user_property=region:eu message_expiry_interval=60 user_property=tenant:t1 topic_alias=7"},
		{name: "removed", pkt: publish, body: `MQTT::property remove user_property; MQTT::property remove content_type`,
			want: "message_expiry_interval=60"},
		{name: "connect", pkt: connect, body: `log local0. [MQTT::property session_expiry_interval]; MQTT::property receive_maximum 10`, log: "30",
			want: "session_expiry_interval=30 receive_maximum=10"},
		{name: "3.1.1 reads none", pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a"} }, version: mqtt.V311,
			body: `log local0. "<[MQTT::property]>"`, log: "<>"},
		{name: "3.1.1 refuses edits", pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.PUBLISH, Topic: "a"} }, version: mqtt.V311,
			body: `MQTT::property content_type x`, err: "properties are MQTT 5.0's"},
		{name: "not for this packet", pkt: publish, body: `MQTT::property receive_maximum 5`, err: "a PUBLISH message does not carry receive_maximum"},
		{name: "unknown", pkt: publish, body: `MQTT::property colour red`, err: `unknown property "colour"`},
		{name: "out of range", pkt: publish, body: `MQTT::property topic_alias 0`, err: "topic_alias must be a number from 1 to 65535"},
		{name: "odd user list", pkt: publish, body: `MQTT::property user_property {a b c}`, err: "list of names and values"},
		{name: "NUL in a string", pkt: publish, body: "MQTT::property content_type \"a\\0b\"", err: "not valid UTF-8"},
		{name: "a packet without properties", pkt: func() *mqtt.Packet { return &mqtt.Packet{Type: mqtt.PINGREQ} }, body: `MQTT::property`,
			err: "not valid for a PINGREQ message"},
		{name: "too many arguments", pkt: publish, body: `MQTT::property a b c`, err: "wrong # args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := mustCompile(t, "mqtt", "when MQTT_CLIENT_INGRESS { "+c.body+" }")
			var logged []string
			p := NewProgram(&Env{Log: func(_, l string) { logged = append(logged, l) }}, r)
			s := p.NewConnState(newFakeConn())
			defer s.Release()
			pkt := c.pkt()
			v := c.version
			if v == 0 {
				v = mqtt.V5
			}
			before := string(pkt.Encode(nil, v))
			s.SetMQTT()
			s.MQTT().Version = v
			s.BeginMQTT(pkt)
			err := s.Run(MQTTClientIngress)
			o := s.EndMQTT()
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				if string(pkt.Encode(nil, v)) != before || o.Edited {
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
			if c.want != "" {
				if got := names(pkt); got != c.want || !o.Edited {
					t.Fatalf("properties %q (edited %v), want %q", got, o.Edited, c.want)
				}
				// The packet decodes again with the new block's length.
				var q mqtt.Packet
				if err := q.Decode(pkt.Encode(nil, v), v); err != nil || string(q.Props) != string(pkt.Props) {
					t.Fatalf("re-encoded packet: %v", err)
				}
			} else if o.Edited {
				t.Fatal("packet marked edited")
			}
		})
	}
}
