package rules

import (
	"net/netip"
	"strconv"

	"github.com/openltm/openltm/dataplane/dhcp"
	"github.com/openltm/openltm/rules/tcl"
)

// SetDHCP tells the DHCP::, DHCPv4:: and DHCPv6:: commands that the
// connection's virtual server has a dhcpv4 (version 4) or dhcpv6
// (version 6) profile, so that they read its datagrams as DHCP messages;
// without one they are errors.
func (s *ConnState) SetDHCP(version int) { s.dhcp = version }

// registerDHCP adds the DHCP::, DHCPv4:: and DHCPv6:: commands. BIG-IP
// runs them in CLIENT_DATA (the client's message, as it came) and
// SERVER_DATA (a member's answer, as it came) of a DHCP relay virtual;
// there are no DHCP events of their own. The header fields are read only
// [M: BIG-IP documents no setter]; options are read, set and deleted by
// number, their value the option's octets as a binary string [M]. drop
// loses the message; reject loses it and ends the flow [M: BIG-IP also
// sends an ICMP error, which openltm's sockets cannot].
func registerDHCP(t *tcl.Commands) {
	t.Register("DHCP::version", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("DHCP::version")
		}
		s, _, err := dhcpSess(in, "DHCP::version")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(s.dhcp)), nil
	})
	v4 := map[string]func(p []byte) tcl.Value{
		"chaddr": func(p []byte) tcl.Value { return tcl.Str(dhcp.FormatMAC(dhcp.Chaddr(p))) },
		"ciaddr": func(p []byte) tcl.Value { return tcl.Str(dhcp.Ciaddr(p).String()) },
		"giaddr": func(p []byte) tcl.Value { return tcl.Str(dhcp.Giaddr(p).String()) },
		"siaddr": func(p []byte) tcl.Value { return tcl.Str(dhcp.Siaddr(p).String()) },
		"yiaddr": func(p []byte) tcl.Value { return tcl.Str(dhcp.Yiaddr(p).String()) },
		"hlen":   func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Hlen(p))) },
		"hops":   func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Hops(p))) },
		"htype":  func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Htype(p))) },
		"len":    func(p []byte) tcl.Value { return tcl.Int(int64(len(p))) },
		"opcode": func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Op(p))) },
		"secs":   func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Secs(p))) },
		"type":   func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.MessageType(p))) },
		"xid":    func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.Xid(p))) },
	}
	for name, get := range v4 {
		cmd := "DHCPv4::" + name
		t.Register(cmd, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) != 1 {
				return tcl.Empty, tcl.WrongArgs(cmd)
			}
			p, _, _, err := dhcpMessage(in, cmd, 4)
			if err != nil {
				return tcl.Empty, err
			}
			return get(p), nil
		})
	}
	addr := func(a netip.Addr) tcl.Value {
		if !a.IsValid() {
			return tcl.Empty
		}
		return tcl.Str(a.Unmap().String())
	}
	v6 := map[string]func(p []byte) tcl.Value{
		"hop_count":      func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.HopCount(p))) },
		"len":            func(p []byte) tcl.Value { return tcl.Int(int64(len(p))) },
		"link_address":   func(p []byte) tcl.Value { return addr(dhcp.LinkAddress(p)) },
		"peer_address":   func(p []byte) tcl.Value { return addr(dhcp.PeerAddress(p)) },
		"msg_type":       func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.MsgTypeV6(p))) },
		"transaction_id": func(p []byte) tcl.Value { return tcl.Int(int64(dhcp.TransactionID(p))) },
	}
	for name, get := range v6 {
		cmd := "DHCPv6::" + name
		t.Register(cmd, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) != 1 {
				return tcl.Empty, tcl.WrongArgs(cmd)
			}
			p, _, _, err := dhcpMessage(in, cmd, 6)
			if err != nil {
				return tcl.Empty, err
			}
			return get(p), nil
		})
	}
	for _, v := range []int{4, 6} {
		ns := "DHCPv" + strconv.Itoa(v) + "::"
		for name, kind := range map[string]DecisionKind{"drop": DecideDiscard, "reject": DecideReject} {
			cmd := ns + name
			t.Register(cmd, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
				if len(args) != 1 {
					return tcl.Empty, tcl.WrongArgs(cmd)
				}
				_, _, c, err := dhcpMessage(in, cmd, v)
				if err != nil {
					return tcl.Empty, err
				}
				return tcl.Empty, tclErr(c.Decide(Decision{Kind: kind}))
			})
		}
		cmd := ns + "option"
		t.Register(cmd, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			return cmdDHCPOption(in, cmd, v, args[1:])
		})
	}
}

// cmdDHCPOption is DHCPv4::option and DHCPv6::option: `id` reads an
// option (empty when absent), `id value` sets it, `delete id` removes it.
func cmdDHCPOption(in *tcl.Interp, cmd string, version int, a []tcl.Value) (tcl.Value, error) {
	usage := cmd + " ?delete? id ?value?"
	del := len(a) == 2 && a[0].String() == "delete"
	if del {
		a = a[1:]
	}
	if len(a) != 1 && len(a) != 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	max := uint64(254)
	if version == 6 {
		max = 65535
	}
	id, err := strconv.ParseUint(a[0].String(), 0, 16)
	if err != nil || id == 0 || id > max {
		return tcl.Empty, tcl.Errorf("%s: option id %q is not a number from 1 to %d", cmd, a[0].String(), max)
	}
	p, s, c, err := dhcpMessage(in, cmd, version)
	if err != nil {
		return tcl.Empty, err
	}
	var out []byte
	switch {
	case del && version == 4:
		out = dhcp.V4DeleteOption(p, uint8(id))
	case del:
		out = dhcp.V6DeleteOption(p, uint16(id))
	case len(a) == 1 && version == 4:
		v, _ := dhcp.V4Option(p, uint8(id))
		return tcl.Bytes(v), nil
	case len(a) == 1:
		v, _ := dhcp.V6Option(p, uint16(id))
		return tcl.Bytes(v), nil
	case version == 4:
		out, err = dhcp.V4SetOption(p, uint8(id), tcl.BytesOf(a[1]))
	default:
		out, err = dhcp.V6SetOption(p, uint16(id), tcl.BytesOf(a[1]))
	}
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", cmd, err)
	}
	return tcl.Empty, tclErr(c.ReplacePayload(s.side, 0, len(c.Payload(s.side)), out))
}

// dhcpSess is the event's session on a DHCP relay virtual.
func dhcpSess(in *tcl.Interp, cmd string) (*ConnState, Conn, error) {
	s, c, err := udpSess(in, cmd)
	if err != nil {
		return s, c, err
	}
	if s.dhcp == 0 {
		return s, c, tcl.Errorf("%s: the virtual server has no dhcpv4 or dhcpv6 profile", cmd)
	}
	if s.event != ClientData && s.event != ServerData {
		return s, c, tcl.Errorf("%s: not valid in %s (valid in CLIENT_DATA, SERVER_DATA)", cmd, s.event)
	}
	return s, c, nil
}

// dhcpMessage is the event's DHCP message of version (4, 6), checked.
func dhcpMessage(in *tcl.Interp, cmd string, version int) ([]byte, *ConnState, Conn, error) {
	s, c, err := dhcpSess(in, cmd)
	if err != nil {
		return nil, s, c, err
	}
	if s.dhcp != version {
		return nil, s, c, tcl.Errorf("%s: the virtual server's profile is dhcpv%d, not dhcpv%d", cmd, s.dhcp, version)
	}
	p := c.Payload(s.side)
	if version == 4 {
		err = dhcp.CheckV4(p)
	} else {
		err = dhcp.CheckV6(p)
	}
	if err != nil {
		return nil, s, c, tcl.Errorf("%s: %v", cmd, err)
	}
	return p, s, c, nil
}
