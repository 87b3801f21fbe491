package rules

import (
	"strings"

	"github.com/openltm/openltm/dataplane/mqtt"
	"github.com/openltm/openltm/rules/tcl"
)

// propTypes are the packets whose 5.0 property block rules read: those
// whose variable header the codec splits into fields (an
// acknowledgement's, DISCONNECT's and AUTH's pass as they came).
var propTypes = []mqtt.Type{mqtt.CONNECT, mqtt.CONNACK, mqtt.PUBLISH, mqtt.SUBSCRIBE, mqtt.SUBACK, mqtt.UNSUBSCRIBE, mqtt.UNSUBACK}

const propUse = "MQTT::property ?name ?value?? | MQTT::property remove name"

// cmdMQTTProperty reads and edits an MQTT 5.0 packet's properties, which
// BIG-IP's MQTT:: commands do not reach [M: openltm's command].
// `MQTT::property` is the list of name and value pairs in packet order
// (a user_property's value is its name and value); `MQTT::property
// name` one property's value (empty when absent; user_property is the
// flat list of names and values, subscription_identifier the list of
// identifiers); `MQTT::property name value` replaces every occurrence
// (where the first was, else at the end), and `MQTT::property remove
// name` removes them. An edit is refused, and the packet left as it was,
// for a property the packet type may not carry, a value out of range,
// or a connection below 5.0. A 3.1.1 packet has no properties.
func cmdMQTTProperty(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MQTT::property"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(propUse)
	}
	st, err := mqttOf(in, cmd, propTypes...)
	if err != nil {
		return tcl.Empty, err
	}
	p := st.pkt
	version := st.Version
	if p.Type == mqtt.CONNECT {
		version = p.ProtocolVersion
	}
	var props []mqtt.Prop
	if version == mqtt.V5 {
		if props, err = mqtt.ParseProps(p.Props); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
		}
	}
	if len(args) == 1 {
		var l []tcl.Value
		for _, pr := range props {
			l = append(l, tcl.Str(pr.Info.Name), propValue(pr))
		}
		return tcl.List(l...), nil
	}
	remove := len(args) == 3 && args[1].String() == "remove"
	nameArg := args[1]
	if remove {
		nameArg = args[2]
	}
	pi, ok := mqtt.PropByName(nameArg.String())
	if !ok {
		names := make([]string, len(mqtt.Props))
		for i, x := range mqtt.Props {
			names[i] = x.Name
		}
		return tcl.Empty, tcl.Errorf("%s: unknown property %q (one of %s)", cmd, nameArg.String(), strings.Join(names, ", "))
	}
	if len(args) == 2 {
		var l []tcl.Value
		for _, pr := range props {
			if pr.Info != pi {
				continue
			}
			switch pi.Kind {
			case mqtt.PropPair:
				l = append(l, tcl.Str(pr.Key), tcl.Str(pr.Value))
			case mqtt.PropVarint:
				l = append(l, propValue(pr))
			default:
				return propValue(pr), nil
			}
		}
		if pi.Kind == mqtt.PropPair || pi.Kind == mqtt.PropVarint {
			return tcl.List(l...), nil
		}
		return tcl.Empty, nil
	}
	if version != mqtt.V5 {
		return tcl.Empty, tcl.Errorf("%s: properties are MQTT 5.0's; this connection speaks protocol level %d", cmd, version)
	}
	if !pi.Allowed(p.Type) {
		return tcl.Empty, tcl.Errorf("%s: a %s message does not carry %s", cmd, p.Type, pi.Name)
	}
	var repl []mqtt.Prop
	if !remove {
		if repl, err = propValues(cmd, pi, args[2]); err != nil {
			return tcl.Empty, err
		}
	}
	out := make([]mqtt.Prop, 0, len(props)+len(repl))
	placed := false
	for _, pr := range props {
		if pr.Info != pi {
			out = append(out, pr)
		} else if !placed {
			out, placed = append(out, repl...), true
		}
	}
	if !placed {
		out = append(out, repl...)
	}
	block, err := mqtt.AppendProps(nil, out)
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
	}
	return tcl.Empty, st.edit(cmd, func(p *mqtt.Packet) { p.Props = block })
}

// propValue is a property's value as rules see it.
func propValue(pr mqtt.Prop) tcl.Value {
	switch pr.Info.Kind {
	case mqtt.PropString:
		return tcl.Str(pr.Value)
	case mqtt.PropBinary:
		return tcl.Bytes([]byte(pr.Value))
	case mqtt.PropPair:
		return tcl.List(tcl.Str(pr.Key), tcl.Str(pr.Value))
	}
	return tcl.Int(int64(pr.Num))
}

// propValues reads a new value of pi: one value, a list of identifiers
// for subscription_identifier, a flat list of names and values for
// user_property (empty: none).
func propValues(cmd string, pi *mqtt.PropInfo, v tcl.Value) ([]mqtt.Prop, error) {
	switch pi.Kind {
	case mqtt.PropString:
		return []mqtt.Prop{{Info: pi, Value: v.String()}}, nil
	case mqtt.PropBinary:
		return []mqtt.Prop{{Info: pi, Value: string(tcl.BytesOf(v))}}, nil
	}
	elems, err := tcl.AsList(v)
	if err != nil {
		return nil, tcl.Errorf("%s: %v", cmd, err)
	}
	if pi.Kind == mqtt.PropPair {
		if len(elems)%2 != 0 {
			return nil, tcl.Errorf("%s: user_property takes a list of names and values", cmd)
		}
		out := make([]mqtt.Prop, 0, len(elems)/2)
		for i := 0; i < len(elems); i += 2 {
			out = append(out, mqtt.Prop{Info: pi, Key: elems[i].String(), Value: elems[i+1].String()})
		}
		return out, nil
	}
	if pi.Kind != mqtt.PropVarint && len(elems) != 1 {
		return nil, tcl.Errorf("%s: %s takes one number", cmd, pi.Name)
	}
	lo, hi := pi.Bounds()
	out := make([]mqtt.Prop, 0, len(elems))
	for _, e := range elems {
		n, err := e.Int64()
		if err != nil || n < int64(lo) || n > int64(hi) {
			return nil, tcl.Errorf("%s: %s must be a number from %d to %d, not %q", cmd, pi.Name, lo, hi, e.String())
		}
		out = append(out, mqtt.Prop{Info: pi, Num: uint32(n)})
	}
	return out, nil
}
