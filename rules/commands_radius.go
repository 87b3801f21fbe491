package rules

import (
	"strconv"

	"github.com/openltm/openltm/dataplane/radius"
	"github.com/openltm/openltm/rules/tcl"
)

// SetRADIUS tells the RADIUS:: commands that the connection's virtual
// server has a radius profile, so that they read its datagrams as RADIUS
// packets; without it they are errors, as BIG-IP refuses them.
func (s *ConnState) SetRADIUS() { s.radius = true }

// registerRADIUS adds the RADIUS:: commands. They read and edit the
// packet of the CLIENT_DATA (a request) or SERVER_DATA (a response) event
// of a UDP virtual with a radius profile: the datagram is the packet, and
// an edit replaces it (the dataplane signs it again when the profile's
// clients data group knows the secret). Attributes are named by number
// or RFC 2865/2866 name; values are read and written as string (the raw
// octets), integer, ip4 or ip6, the attribute's usual type by default
// [M]. RADIUS::subscriber belongs to PEM, which openltm does not have.
func registerRADIUS(t *tcl.Commands) {
	t.Register("RADIUS::code", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("RADIUS::code")
		}
		p, _, _, err := radiusPacket(in, "RADIUS::code")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(radius.Code(p))), nil
	})
	t.Register("RADIUS::id", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("RADIUS::id")
		}
		p, _, _, err := radiusPacket(in, "RADIUS::id")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(radius.ID(p))), nil
	})
	t.Register("RADIUS::rtdom", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("RADIUS::rtdom")
		}
		if _, _, _, err := radiusPacket(in, "RADIUS::rtdom"); err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(0), nil // openltm has the one route domain, 0
	})
	t.Register("RADIUS::subscriber", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return tcl.Empty, tcl.Errorf("RADIUS::subscriber: needs PEM (Policy Enforcement Manager) subscriber discovery, which openltm does not provide")
	})
	t.Register("RADIUS::avp", cmdRADIUSAVP)
}

// radiusPacket is the event's RADIUS packet, its side and connection.
func radiusPacket(in *tcl.Interp, cmd string) ([]byte, *ConnState, Conn, error) {
	s, c, err := udpSess(in, cmd)
	if err != nil {
		return nil, s, c, err
	}
	if !s.radius {
		return nil, s, c, tcl.Errorf("%s: the virtual server has no radius profile", cmd)
	}
	switch s.event {
	case ClientData, ServerData, RADIUSAAAAuthRequest, RADIUSAAAAuthResponse, RADIUSAAAAcctRequest, RADIUSAAAAcctResponse:
	default:
		return nil, s, c, tcl.Errorf("%s: not valid in %s (valid in CLIENT_DATA, SERVER_DATA and the RADIUS_AAA_* events)", cmd, s.event)
	}
	p := c.Payload(s.side)
	n, err := radius.Check(p)
	if err != nil {
		return nil, s, c, tcl.Errorf("%s: %v", cmd, err)
	}
	return p[:n], s, c, nil
}

const radiusAVPUsage = "RADIUS::avp ?replace|insert|delete? attribute ?value? ?type? ?index n? ?vendor id type?"

// cmdRADIUSAVP is RADIUS::avp: read an attribute (empty when absent),
// or replace, insert or delete one.
func cmdRADIUSAVP(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "RADIUS::avp"
	a := args[1:]
	verb := ""
	if len(a) > 0 {
		switch a[0].String() {
		case "replace", "insert", "delete":
			verb, a = a[0].String(), a[1:]
		}
	}
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs(radiusAVPUsage)
	}
	t, typ, err := radius.ParseAttr(a[0].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
	}
	a = a[1:]
	var value tcl.Value
	if verb == "replace" || verb == "insert" {
		if len(a) == 0 {
			return tcl.Empty, tcl.WrongArgs("RADIUS::avp " + verb + " attribute value ?type? ?index n? ?vendor id type?")
		}
		value, a = a[0], a[1:]
	}
	id := radius.AttrID{Type: t}
	index, indexed, typGiven := 0, false, false
	for len(a) > 0 {
		w := a[0].String()
		switch {
		case w == "index" && len(a) >= 2:
			n, err := strconv.Atoi(a[1].String())
			if err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("%s: index %q is not a number from 0", cmd, a[1].String())
			}
			index, indexed, a = n, true, a[2:]
		case w == "vendor" && len(a) >= 3:
			v, err1 := strconv.ParseUint(a[1].String(), 0, 32)
			vt, err2 := strconv.ParseUint(a[2].String(), 0, 8)
			if err1 != nil || err2 != nil || v == 0 {
				return tcl.Empty, tcl.Errorf("%s: vendor %q type %q: a vendor id (1-4294967295) and a vendor type (0-255)", cmd, a[1].String(), a[2].String())
			}
			if t != radius.AttrVendorSpecific {
				return tcl.Empty, tcl.Errorf("%s: vendor attributes are inside Vendor-Specific (26), not %d", cmd, t)
			}
			id.Vendor, id.VType, a = uint32(v), uint8(vt), a[3:]
		default:
			if verb == "delete" {
				return tcl.Empty, tcl.WrongArgs("RADIUS::avp delete attribute ?index n? ?vendor id type?")
			}
			tp, ok := radius.ParseType(w)
			if !ok {
				return tcl.Empty, tcl.Errorf("%s: %q is not a type (string, integer, ip4, ip6), index n or vendor id type", cmd, w)
			}
			typ, typGiven, a = tp, true, a[1:]
		}
	}
	if id.Vendor != 0 && !typGiven {
		typ = radius.TypeString // a vendor's attribute has no type we know
	}
	p, s, c, err := radiusPacket(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	var out []byte
	switch verb {
	case "":
		v, ok := radius.Attr(p, id, index)
		if !ok {
			return tcl.Empty, nil
		}
		str, err := radius.Format(v, typ)
		if err != nil {
			return tcl.Empty, tcl.Errorf("%s: attribute %s as %s: %v", cmd, id, typ, err)
		}
		if typ == radius.TypeString {
			return tcl.Bytes(v), nil
		}
		return tcl.Str(str), nil
	case "delete":
		n := index
		if !indexed {
			n = -1 // every one [M]
		}
		out, err = radius.Delete(p, id, n)
	default:
		var v []byte
		if typ == radius.TypeString {
			v = tcl.BytesOf(value)
		} else if v, err = radius.Encode(value.String(), typ); err != nil {
			return tcl.Empty, tcl.Errorf("%s %s: %v", cmd, verb, err)
		}
		if verb == "replace" {
			out, err = radius.Replace(p, id, index, v)
		} else {
			out, err = radius.Insert(p, id, index, v)
		}
	}
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s %s: %v", cmd, verb, err)
	}
	return tcl.Empty, tclErr(c.ReplacePayload(s.side, 0, len(c.Payload(s.side)), out))
}
