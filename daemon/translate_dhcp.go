package daemon

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/dhcp"
	"github.com/openltm/openltm/objects"
)

// The dhcpv4 and dhcpv6 profiles as UDP virtuals apply them
// (dataplane/internal/udp/dhcp.go).
var (
	profileDHCPv4 = schema.MustKind("ltm profile dhcpv4")
	profileDHCPv6 = schema.MustKind("ltm profile dhcpv6")
)

// dhcpIndefinite is idle-timeout indefinite: a flow that lives as long as
// the relay does [M: a year].
const dhcpIndefinite = 365 * 24 * time.Hour

// dhcp makes a UDP virtual with a dhcpv4 or dhcpv6 profile a DHCP relay.
// BIG-IP takes the profiles on UDP virtuals only, one of them, and not
// beside another UDP application profile (sip, radius, tftp) [M: the
// messages are openltm's].
func (t *translator) dhcp(o *objects.Object, v *dataplane.Virtual, dp *objects.Object, v6 bool) bool {
	kind := "dhcpv4"
	if v6 {
		kind = "dhcpv6"
	}
	if !v.IsUDP() {
		return t.refuse("profile %s (%s) requires a udp profile on the virtual server (%s); DHCP runs over UDP", dp.Name, kind, o.Name)
	}
	if v6 {
		if p := t.profile(o, profileDHCPv4); p != nil {
			return t.refuse("profile %s (dhcpv6) cannot be used with dhcpv4 profile %s on the virtual server (%s)", dp.Name, p.Name, o.Name)
		}
	}
	for _, other := range []struct {
		k    *objects.Kind
		name string
	}{{profileSIP, "sip"}, {profileRADIUS, "radius"}, {profileTFTP, "tftp"}} {
		if p := t.profile(o, other.k); p != nil {
			return t.refuse("profile %s (%s) cannot be used with %s profile %s on the virtual server (%s)", dp.Name, kind, other.name, p.Name, o.Name)
		}
	}
	dc, err := dhcpSettings(t.cfg, dp, v6)
	if err != nil {
		return t.refuse("profile %s (%s): %v (virtual server %s)", dp.Name, kind, err, o.Name)
	}
	v.DHCP = dc
	return true
}

// dhcpSettings reads a dhcpv4 (v6 false) or dhcpv6 profile as the
// dataplane applies it.
func dhcpSettings(cfg *objects.Config, dp *objects.Object, v6 bool) (*dataplane.DHCPProfile, error) {
	e := func(name string) string { return cfg.EffectiveStr(dp, name) }
	dc := &dataplane.DHCPProfile{V6: v6, Forwarding: e("mode") == "forwarding"}
	switch s := e("idle-timeout"); s {
	case "", "immediate":
	case "indefinite":
		dc.Idle = dhcpIndefinite
	default:
		n, err := strconv.ParseUint(s, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("idle-timeout %q is not a number of seconds or indefinite", s)
		}
		dc.Idle = time.Duration(n) * time.Second
	}
	if v6 {
		if f := subSettings(cfg.Effective(dp, "remote-id-option")); f["add"] == "true" {
			en, err := strconv.ParseUint(f["enterprise-number"], 10, 32)
			if err != nil && f["enterprise-number"] != "" {
				return nil, fmt.Errorf("remote-id-option enterprise-number %q is not a number", f["enterprise-number"])
			}
			d := binary.BigEndian.AppendUint32(nil, uint32(en))
			d = append(d, noneEmpty(f["value"])...)
			dc.V6Options = append(dc.V6Options, dataplane.DHCPv6Option{Code: dhcp.OptRemoteID, Data: d})
		}
		if f := subSettings(cfg.Effective(dp, "subscriber-id-option")); f["add"] == "true" {
			dc.V6Options = append(dc.V6Options, dataplane.DHCPv6Option{Code: dhcp.OptSubscriberID, Data: []byte(noneEmpty(f["value"]))})
		}
		return dc, nil
	}
	n, err := strconv.Atoi(e("max-hops"))
	if err != nil || n < 0 || n > 255 {
		return nil, fmt.Errorf("max-hops %q is not a number from 0 to 255", e("max-hops"))
	}
	dc.MaxHops = uint8(n)
	ra := cfg.Effective(dp, "relay-agent-id")
	f := subSettings(ra)
	dc.StripAgentInfo = f["remove"] == "true"
	if f["add"] == "true" {
		sub := map[string]string{"id1": "1", "id2": "0", "value1": "2", "value2": "none"} // F5's defaults
		if ra != nil && ra.Sub != nil {
			for k, v := range subSettings(ra.Sub.Props["suboption"]) {
				sub[k] = v
			}
		}
		var subs []dhcp.Suboption
		for _, i := range []string{"1", "2"} {
			id, err := strconv.ParseUint(sub["id"+i], 10, 8)
			if err != nil {
				return nil, fmt.Errorf("relay-agent-id suboption id%s %q is not a number from 0 to 255", i, sub["id"+i])
			}
			val := noneEmpty(sub["value"+i])
			if id == 0 || i == "2" && val == "" {
				continue
			}
			if len(val) > 255 {
				return nil, fmt.Errorf("relay-agent-id suboption value%s is %d bytes long; a suboption holds at most 255", i, len(val))
			}
			subs = append(subs, dhcp.Suboption{Code: uint8(id), Value: []byte(val)})
		}
		dc.AgentInfo = dhcp.RelayAgentInfo(subs)
		if dc.AgentInfo == nil {
			dc.AgentInfo = []byte{}
		}
		if len(dc.AgentInfo) > 255 {
			return nil, fmt.Errorf("relay-agent-id suboptions make %d bytes; option 82 holds at most 255", len(dc.AgentInfo))
		}
	}
	return dc, nil
}

// dhcpProfile is the virtual's dhcpv4 or dhcpv6 profile, nil for none.
func (t *translator) dhcpProfile(o *objects.Object) (p *objects.Object, v6 bool) {
	if p := t.profile(o, profileDHCPv6); p != nil {
		return p, true
	}
	return t.profile(o, profileDHCPv4), false
}
