package objects

import (
	"math"
	"strings"
)

// The generic message-routing framework (MRF): `ltm message-routing
// generic protocol` and `generic router` are profiles a TCP virtual
// carries beside tcp; `generic route`, `generic peer` and `generic
// transport-config` are the static routes, the peers they send to and how
// connections to those peers are made. openltm cuts the stream into
// messages on message-terminator and routes each one
// (dataplane/mrf). [M: the rows and defaults are the tmsh reference's
// options with the defaults F5's documents and openltm's vocabulary
// notes give (genericmsg: disable-parser no, max-egress-buffer 32768,
// max-message-size 32768, no-response no; messagerouter:
// max-pending-bytes 32768, max-pending-messages 64, max-retries 1,
// use-local-connection enabled); message-terminator has no default in
// F5's documents and is none here: the stream is not cut, each read is a
// message.]

const mrfGeneric = "ltm message-routing generic "

func mrfKinds() []*Kind {
	proto := actOn(pk(mrfGeneric+"protocol", "Protocol", "/Common/genericmsg", tmshRef(mrfGeneric+"protocol"), `
defaults-from ref ltm+message-routing+generic+protocol
disable-parser yn no
max-egress-buffer int 32768
max-message-size int 32768
message-terminator str none
no-response yn no
`), "F5 ltm message-routing generic protocol: the virtual's stream cut into messages on message-terminator (max-message-size bounds one; no-response: no answers are waited for), each routed by the virtual's generic router profile; with disable-parser the stream is not cut and each client's bytes pass through a peer connection of its own, both ways",
		"message-terminator", "max-message-size", "no-response", "disable-parser")
	proto.Lower = "profile"
	router := actOn(pk(mrfGeneric+"router", "Router", "/Common/messagerouter", tmshRef(mrfGeneric+"router"), `
defaults-from ref ltm+message-routing+generic+router
ignore-client-port yn no
inherited-traffic-group tf false
max-pending-bytes int 32768
max-pending-messages int 64
max-retries int 1
mirror ed disabled
mirrored-message-sweeper-interval int 1000
routes reflist ltm+message-routing+generic+route
traffic-group str /Common/traffic-group-1
use-local-connection ed enabled
`), "F5 ltm message-routing generic router: the virtual's messages routed by its routes (source and destination addresses) to their peers, else to the virtual's pool; max-retries bounds MR::retry; max-pending-messages and max-pending-bytes bound the messages waiting for a peer connection to open; ignore-client-port: a message routed to a host may use an open connection to the host's address on another port (MR::ignore_peer_port's default)",
		"routes", "max-retries", "max-pending-messages", "max-pending-bytes", "ignore-client-port")
	router.Lower = "profile"
	router.row("routes").Checked = true
	router.row("max-retries").Max = 255
	httpRouterBounds(router)
	route := actOn(pk(mrfGeneric+"route", "Route", "", tmshRef(mrfGeneric+"route"), `
destination-address str -
peer-selection-mode enum sequential sequential|ratio
peers reflist ltm+message-routing+generic+peer
source-address str -
`), "F5 ltm message-routing generic route: messages whose source-address and destination-address match (unset: any) go to one of its peers (sequential: the first that can be connected; ratio: by the peers' ratio)",
		"destination-address", "peer-selection-mode", "peers", "source-address")
	route.row("peers").Checked = true
	peer, tc := mrfPeerKinds(mrfGeneric)
	return []*Kind{proto, router, route, peer, tc}
}

// mrfPeerKinds are the peer and transport-config kinds of a message
// protocol (prefix "ltm message-routing generic " and so on): the same
// rows for every protocol, peers naming their protocol's
// transport-configs.
func mrfPeerKinds(prefix string) (*Kind, *Kind) {
	tcRef := strings.ReplaceAll(prefix, " ", "+") + "transport-config"
	peer := actOn(pk(prefix+"peer", "Peer", "", tmshRef(prefix+"peer"), `
auto-initialization ed disabled
auto-initialization-interval int 5000
connection-mode enum per-peer per-peer|per-blade|per-tmm|per-client|per-client-per-blade|per-client-per-tmm|per-peer-alternate-tmm|per-client-alternate-tmm
number-connections int 1
pool ref ltm+pool none
ratio int 1
transport-config ref `+tcRef+` none
`), "F5 "+prefix+"peer: a pool whose members receive routed messages over connections kept per connection-mode (per-peer, per-blade and per-tmm shared by every client connection, per-client owned by one), number-connections of them; with auto-initialization they are opened as the virtual starts and reopened each auto-initialization-interval (ms) where they closed",
		"connection-mode", "number-connections", "pool", "ratio", "transport-config", "auto-initialization", "auto-initialization-interval")
	peer.row("number-connections").Max = 65535
	peer.row("ratio").Max = 65535
	tc := actOn(pk(prefix+"transport-config", "Transport Config", "", tmshRef(prefix+"transport-config"), `
ip-protocol enum tcp tcp|udp|sctp
profiles coll
rules reflist ltm+rule
source-address-translation raw
source-port int 0
`), "F5 "+prefix+"transport-config: how the connections to the peers naming it are made: from its source-address-translation's address (automap: the virtual's; snat: the snatpool's in turn; lsn: a translation of the lsn pool for the client whose message opens it; none: the virtual's lsn pool when it has one) with its tcp profile's settings; its rules run on each of those connections (CLIENT_ACCEPTED as it opens; MR_EGRESS and the protocol's send event over each message leaving on it -- MQTT_SERVER_EGRESS for MQTT; the protocol's event and MR_INGRESS over each message the peer sends -- MQTT_SERVER_INGRESS and MQTT_SERVER_DATA for MQTT; CLIENT_CLOSED)",
		"profiles", "source-address-translation", "rules")
	tc.row("rules").Checked = true
	tc.row("source-port").Max = 65535
	return peer, tc
}

// mrfRouterRows are the router profile's rows every message protocol
// shares.
const mrfRouterRows = `
ignore-client-port yn no
inherited-traffic-group tf false
max-pending-bytes int 32768
max-pending-messages int 64
max-retries int 1
mirror ed disabled
mirrored-message-sweeper-interval int 1000
traffic-group str /Common/traffic-group-1
use-local-connection ed enabled
`

const (
	mrfSIP      = "ltm message-routing sip "
	mrfDiameter = "ltm message-routing diameter "
)

// mrfSIPKinds are SIP over the message-routing framework: `sip profile
// session` and `sip profile router` on a TCP or UDP virtual (built-ins
// sipsession and siprouter), routes matched on from-uri, to-uri and
// request-uri, peers and transport-configs as the generic protocol's
// (dataplane/mrfsip). [M: the session profile's defaults are F5's
// documented behaviour (a Via inserted, Max-Forwards checked, no
// Record-Route) and the tmsh reference's options; the sizes are
// openltm's.]
func mrfSIPKinds() []*Kind {
	sess := actOn(pk(mrfSIP+"profile session", "Session", "/Common/sipsession", tmshRef(mrfSIP+"profile session"), `
defaults-from ref ltm+message-routing+sip+profile+session
allow-unknown-methods ed disabled
custom-via str none
do-not-connect-back ed disabled
enable-sip-firewall yn no
generate-response-on-failure ed disabled
honor-route-header ed disabled
honor-route-mode enum loose loose|strict
honor-via ed enabled
insert-record-route-header ed disabled
insert-via-header ed enabled
loop-detection ed disabled
loop-detection-mode enum loose loose|strict|Loose|Strict
maintenance-mode ed disabled
max-forwards-check ed enabled
max-msg-header-count int 64
max-msg-header-size int 8192
max-msg-size int 65536
passthru-mode ed disabled
persistence raw
record-route-mode enum single single|double
service-port int 0
`), "F5 ltm message-routing sip profile session: SIP messages cut on Content-Length; each request forwarded with the virtual's Via (insert-via-header, custom-via), Record-Route (insert-record-route-header) and Max-Forwards one less (max-forwards-check: 0 is answered 483); responses back to the requester by the Via's branch; a request no peer takes answered 503 with generate-response-on-failure; persistence { persist-type session persist-key Call-ID|Src-Addr|Custom persist-timeout SECONDS }: a call's requests (or a client address's) go to the member its first went to; honor-via disabled: responses go back by the router's record of the transaction (Call-ID, CSeq); loop-detection: a request carrying the virtual's own Via answered 482; maintenance-mode: requests that begin something new answered 503; on a TCP or a UDP virtual (each datagram one message); do-not-connect-back disabled: an answer due to a client whose flow ended still goes to its address (UDP) or over a connection back to the address its top Via names (TCP); loop-detection-mode strict: only a request that comes back unchanged is a loop, a spiralling one is routed again; honor-route-header: a request goes to the hop its Route fields name (the virtual's own Route value taken off; honor-route-mode strict: the hop's URI becomes the Request-URI); passthru-mode: a datagram that is no SIP message is forwarded as it is rather than dropped; max-msg-header-count: a message with more header fields is dropped; record-route-mode double: a request that opens a dialog and leaves on another transport or from another address than the virtual's gets two Record-Route values, its peer side's and the virtual's; service-port: the port the virtual's Via and Record-Route name (0: its own); allow-unknown-methods disabled: a client's request of a method SIP does not define is answered 405 Method Not Allowed",
		"record-route-mode", "service-port", "allow-unknown-methods",
		"insert-via-header", "custom-via", "insert-record-route-header", "max-forwards-check", "generate-response-on-failure", "max-msg-size", "max-msg-header-size", "max-msg-header-count", "honor-via", "persistence",
		"loop-detection", "maintenance-mode", "do-not-connect-back", "loop-detection-mode", "honor-route-header", "honor-route-mode", "passthru-mode")
	sess.Lower = "profile"
	sess.row("max-msg-size").Max = 1 << 24
	sess.row("service-port").Max = 65535
	router := actOn(pk(mrfSIP+"profile router", "Router", "/Common/siprouter", tmshRef(mrfSIP+"profile router"), `
defaults-from ref ltm+message-routing+sip+profile+router
operation-mode enum load-balancing load-balancing|application-level-gateway
routes reflist ltm+message-routing+sip+route
session raw
`+mrfRouterRows), "F5 ltm message-routing sip profile router: the virtual's SIP requests routed by its routes (from-uri, to-uri, request-uri) to their peers, else to the virtual's pool; max-retries bounds MR::retry; max-pending-messages and max-pending-bytes bound the messages waiting for a peer connection to open",
		"routes", "max-retries", "max-pending-messages", "max-pending-bytes", "operation-mode")
	router.Lower = "profile"
	router.row("routes").Checked = true
	router.row("max-retries").Max = 255
	httpRouterBounds(router)
	route := actOn(pk(mrfSIP+"route", "Route", "", tmshRef(mrfSIP+"route"), `
from-uri str -
peer-selection-mode enum sequential sequential|ratio
peers reflist ltm+message-routing+sip+peer
request-uri str -
to-uri str -
virtual-server ref ltm+virtual none
`), "F5 ltm message-routing sip route: requests whose from-uri, to-uri and request-uri match (unset: any; a value without a scheme matches the URI's user@host or host) go to one of its peers; with virtual-server, only those of that virtual",
		"from-uri", "peer-selection-mode", "peers", "request-uri", "to-uri", "virtual-server")
	route.row("peers").Checked = true
	peer, tc := mrfPeerKinds(mrfSIP)
	return []*Kind{sess, router, route, peer, tc}
}

// mrfDiameterKinds are Diameter over the message-routing framework:
// `diameter profile session` and `diameter profile router` on a TCP
// virtual (built-ins diametersession and diameterrouter), routes matched
// on destination-realm, application-id and origin-realm, peers and
// transport-configs as the generic protocol's (dataplane/mrfdiam). [M:
// the defaults are the tmsh reference's options with openltm's values
// where F5's documents give none: no origin-host or origin-realm (the
// virtual then speaks as "openltm" of realm "openltm"), vendor-id 3375
// (F5's enterprise number).]
func mrfDiameterKinds() []*Kind {
	sess := actOn(pk(mrfDiameter+"profile session", "Session", "/Common/diametersession", tmshRef(mrfDiameter+"profile session"), `
defaults-from ref ltm+message-routing+diameter+profile+session
acct-application-id int 0
array-acct-application-id list -
array-auth-application-id list -
array-retransmission-result-codes list -
auth-application-id int 0
dest-host-rewrite str none
dest-realm-rewrite str none
disconnect-peer-action enum none none|disable|force-offline
discard-unroutable ed disabled
dynamic-route-insertion ed disabled
dynamic-route-lookup ed disabled
dynamic-route-timeout int 300
egress-critical-message-rate-limit int 0
egress-major-message-rate-limit int 0
handshake-timeout int 10
host-ip-address ed enabled
ingress-critical-message-rate-limit int 0
ingress-major-message-rate-limit int 0
loop-detection ed enabled
max-message-size int 0
max-retransmissions int 1
max-watchdog-failures int 1
origin-host str none
origin-host-rewrite str none
origin-realm str none
origin-realm-rewrite str none
persist-avp str none
persist-timeout int 180
persist-type enum none avp|custom|none
product-name str none
reset-on-timeout ed enabled
respond-unroutable ed enabled
retransmission-action enum disabled disabled|busy|unable|retransmit
vendor-id int 3375
watchdog-timeout int 0
`), "F5 ltm message-routing diameter profile session: the virtual answers its clients' capabilities exchange, watchdogs and disconnects as origin-host of origin-realm (product-name, vendor-id, the clients' applications) and opens its peer connections with its own CER (auth-application-id, acct-application-id); origin-host-rewrite, origin-realm-rewrite, dest-host-rewrite and dest-realm-rewrite rewrite the forwarded messages; a request no peer takes is answered DIAMETER_UNABLE_TO_DELIVER; a request whose peer connection closes before its answer is routed again up to max-retransmissions times (retransmission-action retransmit) or answered DIAMETER_TOO_BUSY (busy) or DIAMETER_UNABLE_TO_DELIVER (unable); a request whose Destination-Host is a connected peer's Origin-Host goes to that peer; a peer connection quiet for watchdog-timeout seconds is sent a DWR and closed after max-watchdog-failures unanswered ones, its requests handled as retransmission-action says; handshake-timeout bounds a peer's CEA; persist-type avp keeps the requests of one persist-avp value (Session-Id by default) on the peer connection the first went on for persist-timeout seconds (custom: only DIAMETER::persist's key); discard-unroutable drops a request no peer takes rather than answering it; with retransmission-action retransmit, an answer whose Result-Code is in array-retransmission-result-codes sends its request to another peer; dynamic-route-insertion makes each client connection a route by its CER's Origin-Host and Origin-Realm (for dynamic-route-timeout seconds after the client last sent anything; 0: while it is connected), and dynamic-route-lookup sends a request whose Destination-Host, else Destination-Realm, one of those routes has to that client before the static routes; disconnect-peer-action disable or force-offline takes the pool member of a peer that sends a DPR out of load balancing (disabled, or marked down as LB::down does); ingress-major-message-rate-limit and ingress-critical-message-rate-limit bound each client connection's requests a second (past major: answered DIAMETER_TOO_BUSY; past critical: dropped), egress-major-message-rate-limit and egress-critical-message-rate-limit each peer connection's; host-ip-address disabled leaves Host-IP-Address out of the virtual's CER and CEA; loop-detection adds to each forwarded request the Route-Record of the peer it came from and answers a request whose Route-Records hold the virtual's origin-host DIAMETER_LOOP_DETECTED",
		"origin-host", "origin-realm", "origin-host-rewrite", "origin-realm-rewrite", "dest-host-rewrite", "dest-realm-rewrite", "product-name", "vendor-id", "auth-application-id", "acct-application-id", "max-message-size", "respond-unroutable", "retransmission-action", "max-retransmissions",
		"watchdog-timeout", "max-watchdog-failures", "handshake-timeout", "persist-type", "persist-avp", "persist-timeout", "discard-unroutable", "array-retransmission-result-codes",
		"dynamic-route-insertion", "dynamic-route-lookup", "dynamic-route-timeout", "disconnect-peer-action",
		"ingress-major-message-rate-limit", "ingress-critical-message-rate-limit", "egress-major-message-rate-limit", "egress-critical-message-rate-limit",
		"host-ip-address", "loop-detection", "array-auth-application-id", "array-acct-application-id")
	sess.Lower = "profile"
	sess.row("vendor-id").Max = math.MaxUint32
	sess.row("auth-application-id").Max = math.MaxUint32
	sess.row("acct-application-id").Max = math.MaxUint32
	sess.row("max-message-size").Max = 1 << 24
	router := actOn(pk(mrfDiameter+"profile router", "Router", "/Common/diameterrouter", tmshRef(mrfDiameter+"profile router"), `
defaults-from ref ltm+message-routing+diameter+profile+router
routes reflist ltm+message-routing+diameter+route
`+mrfRouterRows), "F5 ltm message-routing diameter profile router: the virtual's Diameter requests routed by its routes (destination-realm, application-id, origin-realm) to their peers, else to the virtual's pool, answers back by hop-by-hop identifier; max-retries bounds MR::retry; max-pending-messages and max-pending-bytes bound the messages waiting for a peer connection to open; ignore-client-port: a message routed to a host may use an open connection to the host's address on another port (MR::ignore_peer_port's default)",
		"routes", "max-retries", "max-pending-messages", "max-pending-bytes", "ignore-client-port")
	router.Lower = "profile"
	router.row("routes").Checked = true
	router.row("max-retries").Max = 255
	httpRouterBounds(router)
	route := actOn(pk(mrfDiameter+"route", "Route", "", tmshRef(mrfDiameter+"route"), `
application-id str -
destination-realm str -
origin-realm str -
peer-selection-mode enum sequential sequential|ratio
peers reflist ltm+message-routing+diameter+peer
virtual-server ref ltm+virtual none
`), "F5 ltm message-routing diameter route: requests whose destination-realm, application-id and origin-realm match (unset: any; the most specific route wins) go to one of its peers; with virtual-server, only those of that virtual",
		"application-id", "destination-realm", "origin-realm", "peer-selection-mode", "peers", "virtual-server")
	route.row("peers").Checked = true
	peer, tc := mrfPeerKinds(mrfDiameter)
	return []*Kind{sess, router, route, peer, tc}
}

const mrfMQTT = "ltm message-routing mqtt "

// mrfMQTTKinds are MQTT over the message-routing framework: `mqtt
// profile session` and `mqtt profile router` on a TCP virtual (built-ins
// mqttsession and mqttrouter), routes matched on the CONNECT's client-id
// and username, peers and transport-configs as the generic protocol's
// (dataplane/mrfmqtt). [M: F5's documents give the kinds and built-ins
// but not the session profile's or the route's options; openltm's are
// max-message-size (one packet's remaining length, the codec's bound by
// default) and, for routes, client-id and username glob patterns, since
// an MQTT session stays with the broker its CONNECT reached.]
func mrfMQTTKinds() []*Kind {
	sess := actOn(pk(mrfMQTT+"profile session", "Session", "/Common/mqttsession", tmshRef(mrfMQTT+"profile session"), `
defaults-from ref ltm+message-routing+mqtt+profile+session
max-message-size int 0
`), "F5 ltm message-routing mqtt profile session: the virtual's MQTT packets framed on their remaining length (max-message-size bounds one; 0: the codec's bound); each client's CONNECT picks its broker and its later packets follow it, acknowledgements matched back by type and packet id, the broker's PUBLISHes for the client's subscriptions delivered to it; a CONNECT no broker takes is answered CONNACK server unavailable",
		"max-message-size")
	sess.Lower = "profile"
	sess.row("max-message-size").Max = 1 << 28
	router := actOn(pk(mrfMQTT+"profile router", "Router", "/Common/mqttrouter", tmshRef(mrfMQTT+"profile router"), `
defaults-from ref ltm+message-routing+mqtt+profile+router
routes reflist ltm+message-routing+mqtt+route
`+mrfRouterRows), "F5 ltm message-routing mqtt profile router: the virtual's MQTT sessions routed at CONNECT by its routes (client-id, username) to their peers, else to the virtual's pool, over a connection of the client's own; max-retries bounds MR::retry; max-pending-messages and max-pending-bytes bound the packets waiting for the broker connection to open",
		"routes", "max-retries", "max-pending-messages", "max-pending-bytes")
	router.Lower = "profile"
	router.row("routes").Checked = true
	router.row("max-retries").Max = 255
	httpRouterBounds(router)
	route := actOn(pk(mrfMQTT+"route", "Route", "", tmshRef(mrfMQTT+"route"), `
client-id str -
peer-selection-mode enum sequential sequential|ratio
peers reflist ltm+message-routing+mqtt+peer
username str -
virtual-server ref ltm+virtual none
`), "F5 ltm message-routing mqtt route: sessions whose CONNECT's client-id and username match (glob patterns; unset: any; the most specific route wins) go to one of its peers; with virtual-server, only those of that virtual",
		"client-id", "peer-selection-mode", "peers", "username", "virtual-server")
	route.row("peers").Checked = true
	peer, tc := mrfPeerKinds(mrfMQTT)
	return []*Kind{sess, router, route, peer, tc}
}
