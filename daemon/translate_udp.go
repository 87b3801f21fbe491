package daemon

import (
	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/objects"
)

// The udp profile as a UDP virtual applies it.
var (
	profileUDP     = schema.MustKind("ltm profile udp")
	udpIdleTimeout = profileUDP.MustProp("idle-timeout")
	udpDatagramLB  = profileUDP.MustProp("datagram-load-balancing")
	udpBufPackets  = profileUDP.MustProp("buffer-max-packets")
	udpBufBytes    = profileUDP.MustProp("buffer-max-bytes")
)

// udp fills in an `ip-protocol udp` virtual's protocol, idle timeout,
// datagram-load-balancing and UDP::hold's bounds (buffer-max-packets,
// buffer-max-bytes) from its udp profile (a fastL4 profile's idle
// timeout when it has that instead, as a virtual created without profiles
// has; else the built-in udp profile's values),
// and refuses the profiles a datagram path cannot carry; a tcp virtual
// may not have a udp profile. It reports whether the virtual is kept.
func (t *translator) udp(o *objects.Object, v *dataplane.Virtual) bool {
	prof := t.profile(o, profileUDP)
	if virtualIPProtocol.Effective(t.cfg, o) != "udp" {
		if prof != nil {
			t.skip(o, "profile %s is a udp profile, which needs ip-protocol udp (this virtual is %s)", prof.Name, virtualIPProtocol.Effective(t.cfg, o))
			return false
		}
		return true
	}
	h3 := t.hasHTTP3(o) // HTTP/3: the http profile runs over QUIC (translate_http3.go)
	for _, k := range []*objects.Kind{profileTCP, profileHTTP, profileMBLB, profileOneConnect} {
		if h3 && (k == profileHTTP || k == profileOneConnect) {
			continue
		}
		if p := t.profile(o, k); p != nil {
			t.skip(o, "profile %s (%s) needs ip-protocol tcp; a udp virtual server takes a udp profile", p.Name, k.Key())
			return false
		}
	}
	v.Protocol = dataplane.ProtoUDP
	if prof == nil && t.profile(o, profileFastL4) != nil {
		return true // fastL4 (a virtual's default profile) gave the idle timeout
	}
	v.IdleTimeout = 0
	if prof == nil {
		prof = t.cfg.Lookup(t.s, []string{profileUDP.Key()}, "/Common/udp")
	}
	if prof == nil {
		return true
	}
	switch it := udpIdleTimeout.Effective(t.cfg, prof); it {
	case "indefinite":
		v.IdleTimeout = -1
	case "immediate":
		v.IdleTimeout = 1
	default:
		v.IdleTimeout = seconds(it)
		if v.IdleTimeout == 0 {
			v.IdleTimeout = 1 // 0 is BIG-IP's immediate: the flow ends as soon as it idles
		}
	}
	v.DatagramLB = udpDatagramLB.Effective(t.cfg, prof) == "enabled"
	v.HoldPackets, v.HoldBytes = atoi(udpBufPackets.Effective(t.cfg, prof)), atoi(udpBufBytes.Effective(t.cfg, prof))
	v.ClientTCP, v.ServerTCP = t.udpSides(prof) // translate_sockopts.go
	v.AllowNoPayload = t.eff(prof, "allow-no-payload") == "enabled"
	return true
}
