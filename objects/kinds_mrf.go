package objects

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
`), "F5 ltm message-routing generic protocol: the virtual's stream cut into messages on message-terminator (max-message-size bounds one; no-response: no answers are waited for), each routed by the virtual's generic router profile",
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
`), "F5 ltm message-routing generic router: the virtual's messages routed by its routes (source and destination addresses) to their peers, else to the virtual's pool; max-retries bounds MR::retry; max-pending-messages and max-pending-bytes bound the messages waiting for a peer connection to open",
		"routes", "max-retries", "max-pending-messages", "max-pending-bytes")
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
	peer := actOn(pk(mrfGeneric+"peer", "Peer", "", tmshRef(mrfGeneric+"peer"), `
auto-initialization ed disabled
auto-initialization-interval int 5000
connection-mode enum per-peer per-peer|per-blade|per-tmm|per-client|per-client-per-blade|per-client-per-tmm|per-peer-alternate-tmm|per-client-alternate-tmm
number-connections int 1
pool ref ltm+pool none
ratio int 1
transport-config ref ltm+message-routing+generic+transport-config none
`), "F5 ltm message-routing generic peer: a pool whose members receive routed messages over connections kept per connection-mode (per-peer, per-blade and per-tmm shared by every client connection, per-client owned by one), number-connections of them; with auto-initialization they are opened as the virtual starts and reopened each auto-initialization-interval (ms) where they closed",
		"connection-mode", "number-connections", "pool", "ratio", "transport-config", "auto-initialization", "auto-initialization-interval")
	peer.row("number-connections").Max = 65535
	peer.row("ratio").Max = 65535
	tc := actOn(pk(mrfGeneric+"transport-config", "Transport Config", "", tmshRef(mrfGeneric+"transport-config"), `
ip-protocol enum tcp tcp|udp|sctp
profiles coll
rules reflist ltm+rule
source-address-translation raw
source-port int 0
`), "F5 ltm message-routing generic transport-config: how the connections to the peers naming it are made: from its source-address-translation's address (automap: the virtual's; snat: the snatpool's in turn) with its tcp profile's settings",
		"profiles", "source-address-translation")
	tc.row("rules").Checked = true
	tc.row("source-port").Max = 65535
	return []*Kind{proto, router, route, peer, tc}
}
