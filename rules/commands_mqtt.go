package rules

import (
	"fmt"
	"strings"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/rules/tcl"
)

// MQTTState is the packet an MQTT_ event runs over and what the rule
// asked of it. The host binds a decoded packet with BeginMQTT, runs the
// event, and reads the outcome with EndMQTT, under the lock its events
// run under.
type MQTTState struct {
	// Version is the connection's protocol level (its CONNECT's), which
	// packets the rule edits or makes are encoded for.
	Version uint8
	// Disabled: MQTT::disable; the connection's packets are still
	// framed and checked but raise no MQTT_ events until MQTT::enable
	// (in an event already running, such as the one that disabled).
	Disabled bool

	pkt    *mqtt.Packet
	edited bool
	// collect is MQTT::collect's length (-1 none, 0 the whole payload).
	collect int
	out     MQTTOutcome
}

// MQTTOutcome is what an MQTT_ event did to its packet.
type MQTTOutcome struct {
	// Edited: the packet changed (a field, MQTT::replace); the host
	// encodes it again.
	Edited bool
	// Drop: MQTT::drop; the packet goes no further.
	Drop bool
	// Respond are packets for the sender (MQTT::respond), Before and
	// After packets for the destination around this one (MQTT::insert).
	Respond, Before, After [][]byte
	// Disconnect: MQTT::disconnect; the connection closes once what is
	// pending is written.
	Disconnect bool
	// Collect: MQTT::collect asked for the DATA event over the payload.
	Collect bool
}

// SetMQTT gives the connection an MQTT state: its virtual server has an
// mqtt profile. Called once per connection.
func (s *ConnState) SetMQTT() {
	if s.mqtt == nil {
		s.mqtt = &MQTTState{collect: -1}
	}
}

// MQTT is the connection's MQTT state; nil without an mqtt profile.
func (s *ConnState) MQTT() *MQTTState { return s.mqtt }

// BeginMQTT binds p (decoded by the host; edits change it in place) to
// the MQTT:: commands of the event about to run.
func (s *ConnState) BeginMQTT(p *mqtt.Packet) {
	s.SetMQTT()
	st := s.mqtt
	st.pkt, st.edited, st.out = p, false, MQTTOutcome{}
}

// EndMQTT is what the event did; the state forgets the packet.
func (s *ConnState) EndMQTT() MQTTOutcome {
	st := s.mqtt
	if st == nil {
		return MQTTOutcome{}
	}
	out := st.out
	out.Edited = st.edited
	out.Collect = st.collect >= 0
	st.pkt, st.collect, st.out = nil, -1, MQTTOutcome{}
	return out
}

func registerMQTT(t *tcl.Commands) {
	t.Register("MQTT::type", cmdMQTTType)
	t.Register("MQTT::length", cmdMQTTLength)
	for _, f := range mqttFields {
		t.Register("MQTT::"+f.name, cmdMQTTField(f))
	}
	t.Register("MQTT::will", cmdMQTTWill)
	t.Register("MQTT::property", cmdMQTTProperty) // commands_mqtt_props.go
	t.Register("MQTT::topic", cmdMQTTTopic)
	t.Register("MQTT::payload", cmdMQTTPayload)
	t.Register("MQTT::return_code_list", cmdMQTTReturnCodeList)
	t.Register("MQTT::drop", cmdMQTTDrop)
	t.Register("MQTT::respond", cmdMQTTMake("MQTT::respond"))
	t.Register("MQTT::insert", cmdMQTTMake("MQTT::insert"))
	t.Register("MQTT::replace", cmdMQTTMake("MQTT::replace"))
	t.Register("MQTT::message", cmdMQTTMake("MQTT::message"))
	t.Register("MQTT::collect", cmdMQTTCollect)
	t.Register("MQTT::release", cmdMQTTRelease)
	t.Register("MQTT::disconnect", cmdMQTTDisconnect)
	t.Register("MQTT::enable", cmdMQTTEnable(true))
	t.Register("MQTT::disable", cmdMQTTEnable(false))
}

// mqttOf is the connection's MQTT state with a packet at hand, or the
// command's error. types, when given, are the packet types the command
// reads.
func mqttOf(in *tcl.Interp, cmd string, types ...mqtt.Type) (*MQTTState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.mqtt == nil {
		return nil, tcl.Errorf("%s: the virtual server has no mqtt profile", cmd)
	}
	if s.mqtt.pkt == nil {
		return nil, tcl.Errorf("%s: no MQTT message in %s", cmd, s.event)
	}
	if len(types) > 0 {
		t := s.mqtt.pkt.Type
		for _, ok := range types {
			if t == ok {
				return s.mqtt, nil
			}
		}
		names := make([]string, len(types))
		for i, t := range types {
			names[i] = t.String()
		}
		return nil, tcl.Errorf("%s: not valid for a %s message (valid for %s)", cmd, t, strings.Join(names, ", "))
	}
	return s.mqtt, nil
}

func cmdMQTTType(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MQTT::type")
	}
	st, err := mqttOf(in, "MQTT::type")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.pkt.Type.String()), nil
}

// cmdMQTTLength is the packet's remaining length, as it would leave now.
func cmdMQTTLength(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MQTT::length")
	}
	st, err := mqttOf(in, "MQTT::length")
	if err != nil {
		return tcl.Empty, err
	}
	raw := st.pkt.Encode(nil, st.Version)
	i := 1
	for raw[i]&0x80 != 0 {
		i++
	}
	return tcl.Int(int64(len(raw) - i - 1)), nil
}

// mqttField is a field command: `MQTT::name ?value?` reads or sets one
// field of the packet types it names.
type mqttField struct {
	name  string
	types []mqtt.Type
	kind  byte // s string, b boolean, n number up to max
	max   int64
	get   func(p *mqtt.Packet) any
	set   func(p *mqtt.Packet, v any)
}

var idTypes = []mqtt.Type{mqtt.PUBLISH, mqtt.PUBACK, mqtt.PUBREC, mqtt.PUBREL, mqtt.PUBCOMP,
	mqtt.SUBSCRIBE, mqtt.SUBACK, mqtt.UNSUBSCRIBE, mqtt.UNSUBACK}

var mqttFields = []mqttField{
	{"client_id", []mqtt.Type{mqtt.CONNECT}, 's', 0,
		func(p *mqtt.Packet) any { return p.ClientID }, func(p *mqtt.Packet, v any) { p.ClientID = v.(string) }},
	{"username", []mqtt.Type{mqtt.CONNECT}, 's', 0,
		func(p *mqtt.Packet) any { return p.Username },
		func(p *mqtt.Packet, v any) {
			p.Username = v.(string)
			p.HasUsername = p.Username != "" || p.HasPassword
		}},
	{"password", []mqtt.Type{mqtt.CONNECT}, 's', 0,
		func(p *mqtt.Packet) any { return string(p.Password) },
		func(p *mqtt.Packet, v any) {
			p.Password = []byte(v.(string))
			p.HasPassword = len(p.Password) > 0
			p.HasUsername = p.HasUsername || p.HasPassword && p.ProtocolVersion != mqtt.V5
		}},
	{"clean_session", []mqtt.Type{mqtt.CONNECT}, 'b', 0,
		func(p *mqtt.Packet) any { return p.CleanSession }, func(p *mqtt.Packet, v any) { p.CleanSession = v.(bool) }},
	{"keep_alive", []mqtt.Type{mqtt.CONNECT}, 'n', 65535,
		func(p *mqtt.Packet) any { return int64(p.KeepAlive) }, func(p *mqtt.Packet, v any) { p.KeepAlive = uint16(v.(int64)) }},
	{"protocol_name", []mqtt.Type{mqtt.CONNECT}, 's', 0,
		func(p *mqtt.Packet) any { return p.ProtocolName }, func(p *mqtt.Packet, v any) { p.ProtocolName = v.(string) }},
	{"protocol_version", []mqtt.Type{mqtt.CONNECT}, 'n', 255,
		func(p *mqtt.Packet) any { return int64(p.ProtocolVersion) }, func(p *mqtt.Packet, v any) { p.ProtocolVersion = uint8(v.(int64)) }},
	{"qos", []mqtt.Type{mqtt.PUBLISH}, 'n', 2,
		func(p *mqtt.Packet) any { return int64(p.QoS) }, func(p *mqtt.Packet, v any) { p.QoS = uint8(v.(int64)) }},
	{"dup", []mqtt.Type{mqtt.PUBLISH}, 'b', 0,
		func(p *mqtt.Packet) any { return p.Dup }, func(p *mqtt.Packet, v any) { p.Dup = v.(bool) }},
	{"retain", []mqtt.Type{mqtt.PUBLISH}, 'b', 0,
		func(p *mqtt.Packet) any { return p.Retain }, func(p *mqtt.Packet, v any) { p.Retain = v.(bool) }},
	{"packet_id", idTypes, 'n', 65535,
		func(p *mqtt.Packet) any { return int64(p.PacketID) }, func(p *mqtt.Packet, v any) { p.PacketID = uint16(v.(int64)) }},
	{"return_code", []mqtt.Type{mqtt.CONNACK}, 'n', 255,
		func(p *mqtt.Packet) any { return int64(p.ReturnCode) }, func(p *mqtt.Packet, v any) { p.ReturnCode = uint8(v.(int64)) }},
	{"session_present", []mqtt.Type{mqtt.CONNACK}, 'b', 0,
		func(p *mqtt.Packet) any { return p.SessionPresent }, func(p *mqtt.Packet, v any) { p.SessionPresent = v.(bool) }},
}

func cmdMQTTField(f mqttField) tcl.CmdFunc {
	cmd := "MQTT::" + f.name
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs(cmd + " ?value?")
		}
		st, err := mqttOf(in, cmd, f.types...)
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) == 1 {
			switch v := f.get(st.pkt).(type) {
			case string:
				return tcl.Str(v), nil
			case bool:
				return tcl.Bool(v), nil
			case int64:
				return tcl.Int(v), nil
			}
		}
		v, err := mqttValue(cmd, f.kind, f.max, args[1])
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, st.edit(cmd, func(p *mqtt.Packet) { f.set(p, v) })
	}
}

// mqttValue reads a field's new value.
func mqttValue(cmd string, kind byte, max int64, a tcl.Value) (any, error) {
	switch kind {
	case 'b':
		b, err := a.Truth()
		if err != nil {
			return nil, tcl.Errorf("%s: expected a boolean but got %q", cmd, a.String())
		}
		return b, nil
	case 'n':
		n, err := a.Int64()
		if err != nil || n < 0 || n > max {
			return nil, tcl.Errorf("%s: expected a number from 0 to %d but got %q", cmd, max, a.String())
		}
		return n, nil
	}
	s := a.String()
	if len(s) > 65535 {
		return nil, tcl.Errorf("%s: longer than 65535 bytes", cmd)
	}
	return s, nil
}

// edit changes the packet if the change leaves it well formed (a QoS 1
// PUBLISH needs a packet id, say); otherwise the packet stays as it was
// and the command fails.
func (st *MQTTState) edit(cmd string, fn func(p *mqtt.Packet)) error {
	q := *st.pkt
	q.Subscriptions = append([]mqtt.Subscription(nil), q.Subscriptions...)
	fn(&q)
	if err := q.Check(st.Version); err != nil {
		return tcl.Errorf("%s: the message would not be valid: %v", cmd, err)
	}
	*st.pkt = q
	st.edited = true
	return nil
}

// cmdMQTTWill reads a CONNECT's will: `MQTT::will` is a list of
// topic, message, qos and retain (empty without a will), `MQTT::will
// topic|message|qos|retain ?value?` one of them [M].
func cmdMQTTWill(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "MQTT::will ?topic|message|qos|retain ?value??"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(use)
	}
	st, err := mqttOf(in, "MQTT::will", mqtt.CONNECT)
	if err != nil {
		return tcl.Empty, err
	}
	p := st.pkt
	if len(args) == 1 {
		if !p.Will {
			return tcl.Empty, nil
		}
		return tcl.List(tcl.Str("topic"), tcl.Str(p.WillTopic), tcl.Str("message"), tcl.Bytes(p.WillMessage),
			tcl.Str("qos"), tcl.Int(int64(p.WillQoS)), tcl.Str("retain"), tcl.Bool(p.WillRetain)), nil
	}
	what := args[1].String()
	if len(args) == 2 {
		switch what {
		case "topic":
			return tcl.Str(p.WillTopic), nil
		case "message":
			return tcl.Bytes(p.WillMessage), nil
		case "qos":
			return tcl.Int(int64(p.WillQoS)), nil
		case "retain":
			return tcl.Bool(p.WillRetain), nil
		}
		return tcl.Empty, tcl.WrongArgs(use)
	}
	v := args[2]
	switch what {
	case "topic":
		return tcl.Empty, st.edit("MQTT::will", func(p *mqtt.Packet) { p.Will, p.WillTopic = true, v.String() })
	case "message":
		return tcl.Empty, st.edit("MQTT::will", func(p *mqtt.Packet) { p.Will, p.WillMessage = true, tcl.BytesOf(v) })
	case "qos", "retain":
		kind := byte('n')
		if what == "retain" {
			kind = 'b'
		}
		x, err := mqttValue("MQTT::will "+what, kind, 2, v)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, st.edit("MQTT::will", func(p *mqtt.Packet) {
			if what == "qos" {
				p.WillQoS = uint8(x.(int64))
			} else {
				p.WillRetain = x.(bool)
			}
		})
	}
	return tcl.Empty, tcl.WrongArgs(use)
}

// cmdMQTTTopic reads or sets a PUBLISH's topic; over a SUBSCRIBE or
// UNSUBSCRIBE it is the list of topic filters (with their QoS for a
// SUBSCRIBE, as topic_list is written), and a list sets them [M].
func cmdMQTTTopic(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("MQTT::topic ?topic?")
	}
	st, err := mqttOf(in, "MQTT::topic", mqtt.PUBLISH, mqtt.SUBSCRIBE, mqtt.UNSUBSCRIBE)
	if err != nil {
		return tcl.Empty, err
	}
	p := st.pkt
	if p.Type == mqtt.PUBLISH {
		if len(args) == 1 {
			return tcl.Str(p.Topic), nil
		}
		t := args[1].String()
		return tcl.Empty, st.edit("MQTT::topic", func(p *mqtt.Packet) { p.Topic = t })
	}
	if len(args) == 1 {
		var out []tcl.Value
		for _, s := range p.Subscriptions {
			out = append(out, tcl.Str(s.Topic))
			if p.Type == mqtt.SUBSCRIBE {
				out = append(out, tcl.Int(int64(s.Options)))
			}
		}
		return tcl.List(out...), nil
	}
	subs, err := topicList("MQTT::topic", args[1], p.Type == mqtt.SUBSCRIBE)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, st.edit("MQTT::topic", func(p *mqtt.Packet) { p.Subscriptions = subs })
}

// topicList reads a topic list: topic and QoS pairs, or (withQoS false)
// topics, each optionally followed by a QoS that is ignored.
func topicList(cmd string, v tcl.Value, withQoS bool) ([]mqtt.Subscription, error) {
	elems, err := tcl.AsList(v)
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	var out []mqtt.Subscription
	for i := 0; i < len(elems); i++ {
		s := mqtt.Subscription{Topic: elems[i].String()}
		if i+1 < len(elems) {
			if q, err := elems[i+1].Int64(); err == nil && q >= 0 && q <= 2 {
				if withQoS {
					s.Options = uint8(q)
				}
				i++
			} else if withQoS {
				return nil, tcl.Errorf("%s: expected a QoS of 0, 1 or 2 after %q", cmd, s.Topic)
			}
		} else if withQoS {
			return nil, tcl.Errorf("%s: expected a QoS of 0, 1 or 2 after %q", cmd, s.Topic)
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		return nil, tcl.Errorf("%s: expected at least one topic", cmd)
	}
	return out, nil
}

// cmdMQTTPayload is a PUBLISH's payload: whole, its length, or
// replaced, prepended to or appended to. The packet is whole when its
// events run, so the payload reads without MQTT::collect [M].
func cmdMQTTPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const use = "MQTT::payload ?length | replace content | prepend content | append content?"
	st, err := mqttOf(in, "MQTT::payload", mqtt.PUBLISH)
	if err != nil {
		return tcl.Empty, err
	}
	p := st.pkt
	switch {
	case len(args) == 1:
		return tcl.Bytes(p.Payload), nil
	case len(args) == 2 && args[1].String() == "length":
		return tcl.Int(int64(len(p.Payload))), nil
	case len(args) == 3:
		b := tcl.BytesOf(args[2])
		var np []byte
		switch args[1].String() {
		case "replace":
			np = b
		case "prepend":
			np = append(append([]byte(nil), b...), p.Payload...)
		case "append":
			np = append(append([]byte(nil), p.Payload...), b...)
		default:
			return tcl.Empty, tcl.WrongArgs(use)
		}
		return tcl.Empty, st.edit("MQTT::payload", func(p *mqtt.Packet) { p.Payload = np })
	}
	return tcl.Empty, tcl.WrongArgs(use)
}

func cmdMQTTReturnCodeList(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("MQTT::return_code_list ?list?")
	}
	st, err := mqttOf(in, "MQTT::return_code_list", mqtt.SUBACK)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 {
		out := make([]tcl.Value, len(st.pkt.ReturnCodes))
		for i, c := range st.pkt.ReturnCodes {
			out[i] = tcl.Int(int64(c))
		}
		return tcl.List(out...), nil
	}
	codes, err := codeList("MQTT::return_code_list", args[1])
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, st.edit("MQTT::return_code_list", func(p *mqtt.Packet) { p.ReturnCodes = codes })
}

func codeList(cmd string, v tcl.Value) ([]byte, error) {
	elems, err := tcl.AsList(v)
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	out := make([]byte, len(elems))
	for i, e := range elems {
		n, err := e.Int64()
		if err != nil || n < 0 || n > 255 {
			return nil, tcl.Errorf("%s: expected return codes from 0 to 255 but got %q", cmd, e.String())
		}
		out[i] = byte(n)
	}
	if len(out) == 0 {
		return nil, tcl.Errorf("%s: expected at least one return code", cmd)
	}
	return out, nil
}

func cmdMQTTDrop(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MQTT::drop")
	}
	st, err := mqttOf(in, "MQTT::drop")
	if err != nil {
		return tcl.Empty, err
	}
	st.out.Drop = true
	return tcl.Empty, nil
}

// cmdMQTTMake builds a packet from `type T key value ...` for
// MQTT::respond (to the sender), MQTT::insert before|after (to the
// destination), MQTT::replace (the packet at hand) and MQTT::message
// (returned, as bytes, for TCP::respond or a sideband [M]).
func cmdMQTTMake(cmd string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a := args[1:]
		where := ""
		if cmd == "MQTT::insert" {
			if len(a) == 0 || (a[0].String() != "before" && a[0].String() != "after") {
				return tcl.Empty, tcl.WrongArgs("MQTT::insert before|after type TYPE ?field value ...?")
			}
			where, a = a[0].String(), a[1:]
		}
		var st *MQTTState
		version := uint8(mqtt.V311)
		if cmd == "MQTT::message" {
			if s := sessionOf(in); s != nil && s.mqtt != nil && s.mqtt.Version != 0 {
				version = s.mqtt.Version
			}
		} else {
			s, _, err := sess(in, cmd)
			if err != nil {
				return tcl.Empty, err
			}
			if s.mqtt == nil {
				return tcl.Empty, tcl.Errorf("%s: the virtual server has no mqtt profile", cmd)
			}
			if s.mqtt.pkt == nil && !(cmd == "MQTT::insert" && where == "after" && s.event == MQTTClientShutdown) {
				return tcl.Empty, tcl.Errorf("%s: no MQTT message in %s", cmd, s.event)
			}
			st = s.mqtt
			if st.Version != 0 {
				version = st.Version
			}
		}
		p, err := MQTTPacket(a, version)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
		}
		raw := p.Encode(nil, version)
		switch cmd {
		case "MQTT::message":
			return tcl.Bytes(raw), nil
		case "MQTT::respond":
			st.out.Respond = append(st.out.Respond, raw)
		case "MQTT::replace":
			*st.pkt = *p
			st.edited = true
		default:
			if where == "before" {
				st.out.Before = append(st.out.Before, raw)
			} else {
				st.out.After = append(st.out.After, raw)
			}
		}
		return tcl.Empty, nil
	}
}

// MQTTPacket builds the packet `type T field value ...` describes (the
// arguments of MQTT::respond, insert, replace and message), checked to
// be well formed for the protocol level.
func MQTTPacket(a []tcl.Value, version uint8) (*mqtt.Packet, error) {
	if len(a) < 2 || a[0].String() != "type" {
		return nil, fmt.Errorf("expected type TYPE ?field value ...?")
	}
	t, ok := mqtt.TypeOf(a[1].String())
	if !ok || t == mqtt.AUTH && version != mqtt.V5 {
		return nil, fmt.Errorf("unknown message type %q", a[1].String())
	}
	p := &mqtt.Packet{Type: t}
	if t == mqtt.CONNECT {
		p.ProtocolName, p.ProtocolVersion, p.CleanSession = "MQTT", version, true
		if version == mqtt.V31 {
			p.ProtocolName = "MQIsdp"
		}
	}
	a = a[2:]
	if len(a)%2 != 0 {
		return nil, fmt.Errorf("field %q has no value", a[len(a)-1].String())
	}
	for i := 0; i < len(a); i += 2 {
		k, v := a[i].String(), a[i+1]
		if err := setMQTTField(p, k, v); err != nil {
			return nil, err
		}
	}
	if t == mqtt.PUBLISH {
		p.Flags = p.QoS << 1
	}
	if t == mqtt.CONNECT {
		version = p.ProtocolVersion
	}
	if err := p.Check(version); err != nil {
		return nil, fmt.Errorf("not a valid %s message: %v", t, err)
	}
	return p, nil
}

func setMQTTField(p *mqtt.Packet, k string, v tcl.Value) error {
	num := func(max int64) (int64, error) {
		n, err := v.Int64()
		if err != nil || n < 0 || n > max {
			return 0, fmt.Errorf("%s: expected a number from 0 to %d but got %q", k, max, v.String())
		}
		return n, nil
	}
	boolean := func() (bool, error) {
		b, err := v.Truth()
		if err != nil {
			return false, fmt.Errorf("%s: expected a boolean but got %q", k, v.String())
		}
		return b, nil
	}
	var err error
	var n int64
	switch k {
	case "client_id":
		p.ClientID = v.String()
	case "username":
		p.Username, p.HasUsername = v.String(), true
	case "password":
		p.Password, p.HasPassword = tcl.BytesOf(v), true
	case "keep_alive":
		n, err = num(65535)
		p.KeepAlive = uint16(n)
	case "clean_session":
		p.CleanSession, err = boolean()
	case "protocol_name":
		p.ProtocolName = v.String()
	case "protocol_version":
		n, err = num(255)
		p.ProtocolVersion = uint8(n)
	case "will_topic":
		p.Will, p.WillTopic = true, v.String()
	case "will_message":
		p.Will, p.WillMessage = true, tcl.BytesOf(v)
	case "will_qos":
		n, err = num(2)
		p.WillQoS = uint8(n)
	case "will_retain":
		p.WillRetain, err = boolean()
	case "return_code":
		n, err = num(255)
		p.ReturnCode = uint8(n)
	case "session_present":
		p.SessionPresent, err = boolean()
	case "topic":
		p.Topic = v.String()
	case "payload":
		p.Payload = tcl.BytesOf(v)
	case "qos":
		n, err = num(2)
		p.QoS = uint8(n)
	case "packet_id":
		n, err = num(65535)
		p.PacketID = uint16(n)
	case "dup":
		p.Dup, err = boolean()
	case "retain":
		p.Retain, err = boolean()
	case "topic_list":
		p.Subscriptions, err = topicList("topic_list", v, p.Type == mqtt.SUBSCRIBE)
	case "return_code_list":
		p.ReturnCodes, err = codeList("return_code_list", v)
	default:
		return fmt.Errorf("unknown field %q", k)
	}
	return err
}

// cmdMQTTCollect asks for MQTT_CLIENT_DATA (or MQTT_SERVER_DATA) over
// the PUBLISH's payload after this event. The whole packet is in hand
// when its events run, so a length is accepted and the DATA event sees
// the whole payload [M].
func cmdMQTTCollect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("MQTT::collect ?length?")
	}
	st, err := mqttOf(in, "MQTT::collect", mqtt.PUBLISH)
	if err != nil {
		return tcl.Empty, err
	}
	n := int64(0)
	if len(args) == 2 {
		if n, err = args[1].Int64(); err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("MQTT::collect: expected a length of 0 or more but got %q", args[1].String())
		}
	}
	st.collect = int(n)
	return tcl.Empty, nil
}

func cmdMQTTRelease(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MQTT::release")
	}
	st, err := mqttOf(in, "MQTT::release")
	if err != nil {
		return tcl.Empty, err
	}
	st.collect = -1
	return tcl.Empty, nil
}

func cmdMQTTDisconnect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MQTT::disconnect")
	}
	s, _, err := sess(in, "MQTT::disconnect")
	if err != nil {
		return tcl.Empty, err
	}
	if s.mqtt == nil {
		return tcl.Empty, tcl.Errorf("MQTT::disconnect: the virtual server has no mqtt profile")
	}
	s.mqtt.out.Disconnect = true
	return tcl.Empty, nil
}

func cmdMQTTEnable(on bool) tcl.CmdFunc {
	name := "MQTT::disable"
	if on {
		name = "MQTT::enable"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		s, _, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if s.mqtt == nil {
			return tcl.Empty, tcl.Errorf("%s: the virtual server has no mqtt profile", name)
		}
		s.mqtt.Disabled = !on
		return tcl.Empty, nil
	}
}
