package rules

import "github.com/openltm/openltm/rules/tcl"

// unbackedMore are more F5 commands whose underlying thing openltm
// lacks, each with its reason (registerUnsupported): a rule naming one
// is kept with a warning that says why, and not run.
var unbackedMore = map[string]string{
	"relate_client": "openltm's related flows are listeners on its own addresses (listen, FLOW::create_related); a pre-established flow to and from addresses not its own, started from either end, needs a forwarding data plane openltm does not have",
	"relate_server": "openltm's related flows are listeners on its own addresses (listen, FLOW::create_related); a pre-established flow to and from addresses not its own, started from either end, needs a forwarding data plane openltm does not have",

	"DECOMPRESS::enable":  "openltm has no decompression filter (BIG-IP's inflates a compressed body for the filters after it); a rule can remove Accept-Encoding so that members send plain bodies",
	"DECOMPRESS::disable": "openltm has no decompression filter (BIG-IP's inflates a compressed body for the filters after it); a rule can remove Accept-Encoding so that members send plain bodies",
	"HTTPLOG::enable":     "F5 documents neither what HTTPLOG switches nor its profile; openltm's request logging is the request-log profile, which has no per-request switch",
	"HTTPLOG::disable":    "F5 documents neither what HTTPLOG switches nor its profile; openltm's request logging is the request-log profile, which has no per-request switch",
	"SMTP::enable":        "the smtp profile these act on (BIG-IP's mail security) is not in openltm; SMTPS::enable and SMTPS::disable switch the smtps profile's STARTTLS offload",
	"SMTP::disable":       "the smtp profile these act on (BIG-IP's mail security) is not in openltm; SMTPS::enable and SMTPS::disable switch the smtps profile's STARTTLS offload",

	"FTP::enforce_tls_session_reuse": "openltm passes FTPS through without terminating it, so it sees no data connection's TLS session to compare",
	"BIGTCP::release_flow":           "openltm's TCP proxy has no passthrough mode a flow could be released into; a rule that wants no more events can stop collecting (TCP::release)",
	"LINE::get":                      "F5 documents neither its form nor the profile it reads",
	"LINE::set":                      "F5 documents neither its form nor the profile it changes",

	"DATAGRAM::dns": "openltm's sockets do not give a rule the headers of the packets under a flow; DNS:: reads the message",
	"DATAGRAM::ip":  "openltm's sockets do not give a rule the IP headers of the packets under a flow; IP::tos and IP::ttl read the socket's",
	"DATAGRAM::ip6": "openltm's sockets do not give a rule the IPv6 headers of the packets under a flow",
	"DATAGRAM::l2":  "openltm's sockets do not give a rule the layer-2 headers of the frames under a flow",
	"DATAGRAM::tcp": "openltm's sockets do not give a rule the TCP headers of the segments under a flow; TCP::option reads the SYN's options",
	"DATAGRAM::udp": "openltm's sockets do not give a rule the UDP headers of the datagrams under a flow",

	"TCP::analytics":         "openltm has no TCP analytics profile to report to",
	"CACHE::statskey":        "openltm's web cache keeps no statistics by key (BIG-IP's AAM does)",
	"CACHE::trace":           "openltm's web cache has no trace log",
	"WS::payload_ivs":        "openltm sends no WebSocket payload to an internal virtual server (BIG-IP's ASM and ICAP inspection of frames)",
	"WS::payload_processing": "openltm sends no WebSocket payload to an internal virtual server (BIG-IP's ASM and ICAP inspection of frames)",
}

// registerMissing adds HTTP::response and the unbacked commands.
func registerMissing(t *tcl.Commands) {
	registerUnsupported(t, unbackedMore)
	// HTTP::response is the response's raw header block, as
	// HTTP::request is the request's.
	t.Register("HTTP::response", httpGetter("HTTP::response", true, func(h *HTTPHead) tcl.Value { return tcl.Str(h.String()) }))
}
