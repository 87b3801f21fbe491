package mrfsip

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/sipmsg"
)

// The session profile's record-route-mode, service-port and
// allow-unknown-methods.
//
// record-route-mode double: a request that opens a dialog and crosses
// from one side to another -- it leaves on a peer connection of another
// transport (a TCP virtual's request on a UDP peer flow, or the other
// way) or from another address than the virtual's -- gets two
// Record-Route values, the peer side's on top (the address the peer
// connection leaves from, its transport), then the client side's (the
// virtual's), so that each side's later requests of the dialog reach
// the virtual at an address and over a transport of its own side (RFC
// 3486 §6, RFC 5658 §3.2). A request that does not cross gets the one
// Record-Route of single mode [M: F5 names the mode; openltm double
// record-routes only where the sides differ, as RFC 5658 asks, since two
// equal values would send the dialog through the virtual twice; the
// peer side's value carries the virtual's Record-Route port (service-port
// or the listener's), not the peer connection's own port, which no
// listener has].
//
// service-port: the port the virtual's Via and Record-Route name,
// where it is not the listener's (a virtual behind a port translation);
// 0, the default, is the virtual's own port. The daemon puts it in Host
// [M: F5 names the setting; openltm applies it to the inserted Via and
// Record-Route values and to the Route values that name the virtual
// (honor-route-header), not to a UDP peer flow's Via, which names the
// flow's own address so that responses come back to it].
//
// allow-unknown-methods: disabled (the default), a client's request of a
// method the IANA SIP method registry does not hold (ACK, BYE, CANCEL,
// INFO, INVITE, MESSAGE, NOTIFY, OPTIONS, PRACK, PUBLISH, REFER,
// REGISTER, SUBSCRIBE, UPDATE) is answered by the virtual 405 Method Not
// Allowed with an Allow field listing those methods, and is not routed;
// enabled, it is routed as any request (RFC 3261 §16: a proxy forwards
// what it does not know) [M: F5 names the setting, not its answer;
// openltm answers as RFC 3261 §8.2.1 has a UAS refuse a method, the
// Allow field telling the client what goes through]. Method names are
// case-sensitive (RFC 3261 §7.1). A peer's own requests are not checked.

// knownMethods are the methods of the IANA SIP method registry.
var knownMethods = [...]string{"ACK", "BYE", "CANCEL", "INFO", "INVITE", "MESSAGE", "NOTIFY",
	"OPTIONS", "PRACK", "PUBLISH", "REFER", "REGISTER", "SUBSCRIBE", "UPDATE"}

// allowLine is the Allow field of the 405 to an unknown method.
const allowLine = "Allow: ACK, BYE, CANCEL, INFO, INVITE, MESSAGE, NOTIFY, OPTIONS, PRACK, PUBLISH, REFER, REGISTER, SUBSCRIBE, UPDATE\r\n"

// knownMethod says whether meth is one of knownMethods.
func knownMethod(meth []byte) bool {
	for _, k := range knownMethods {
		if string(meth) == k {
			return true
		}
	}
	return false
}

// rejectUnknown is the virtual's 405 to request m, with its Allow field.
func rejectUnknown(m *sipmsg.Message) []byte {
	r := sipmsg.Reject(m, 405, "Method Not Allowed")
	const tail = "Content-Length: 0\r\n\r\n"
	at := len(r) - len(tail)
	out := make([]byte, 0, len(r)+len(allowLine))
	out = append(out, r[:at]...)
	out = append(out, allowLine...)
	return append(out, r[at:]...)
}

// appendRR appends a Record-Route line naming host (address:port) over
// UDP (sip:'s default transport, none named) or TCP.
func appendRR(dst []byte, host string, udp bool) []byte {
	dst = append(dst, "Record-Route: <sip:"...)
	dst = append(dst, host...)
	if !udp {
		dst = append(dst, ";transport=tcp"...)
	}
	return append(dst, ";lr>\r\n"...)
}

// crosses says whether a request leaving on link goes to another side
// than the one the virtual listens on: another transport, or another
// address.
func (s *Session) crosses(link *mrf.Link) bool {
	if link.UDP != s.UDP {
		return true
	}
	return link.Local.IsValid() && s.self.IsValid() && link.Local.Addr().Unmap() != s.self.Addr().Unmap()
}

// peerRR is the Record-Route line of the peer's side of link: the
// address its connection leaves from, at the virtual's Record-Route
// port, over its transport.
func (s *Session) peerRR(link *mrf.Link) []byte {
	a := link.Local.Addr()
	if !a.IsValid() {
		a = s.self.Addr()
	}
	if !a.IsValid() || !s.self.IsValid() {
		return nil
	}
	host := netip.AddrPortFrom(a.Unmap(), s.self.Port()).String()
	return appendRR(nil, host, link.UDP)
}
