package rules

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// Event is an iRules event. Events are small integers so that dispatch is
// an array index, not a map lookup.
type Event uint8

// The events rules can handle. HTTP and persistence events are parsed now
// so that rules using them load; the dataplane raises them as it grows.
const (
	RuleInit Event = iota
	ClientAccepted
	ClientData
	LBSelected
	LBFailed
	ServerConnected
	ServerData
	ClientClosed
	ServerClosed
	HTTPRequest
	HTTPResponse
	HTTPRequestData
	HTTPResponseData
	PersistDown
	UserRequest
	UserResponse
	ClientSSLHandshake
	ServerSSLHandshake
	HTTPRequestSend
	HTTPResponseContinue
	HTTPRequestRelease
	HTTPResponseRelease
	DNSRequest
	DNSResponse
	ClientSSLClientCert
	// FlowInit runs once per flow before its first other event (ConnState.Run).
	FlowInit
	// StreamMatched runs for each match of the stream filter
	// (ConnState.RunStreamMatched).
	StreamMatched
	// ClientSSLClientHello runs when a client's TLS hello is in, before
	// the server answers it; ServerSSLClientHelloSend just before the
	// proxy's own hello leaves for a member.
	ClientSSLClientHello
	ServerSSLClientHelloSend
	// The websocket profile's events (commands_ws.go).
	WSRequest
	WSResponse
	WSClientFrame
	WSClientData
	WSClientFrameDone
	WSServerFrame
	WSServerData
	WSServerFrameDone
	// The web-acceleration profile's events (commands_cache.go):
	// CacheRequest before a request is answered from the cache,
	// CacheResponse before that answer leaves, CacheUpdate before a
	// member's answer is stored.
	CacheRequest
	CacheResponse
	CacheUpdate
	// LBQueued runs when a connection joins its pool's connection queue
	// (queue-on-connection-limit).
	LBQueued
	// SIPRequest and SIPResponse run for each SIP message of a virtual
	// with the sip profile (commands_sip.go).
	SIPRequest
	SIPResponse
	// HTTPProxyRequest and HTTPProxyConnect run on an explicit forward
	// proxy once it knows where a request (a CONNECT) goes, before it
	// connects there (HTTP::proxy addr and port).
	HTTPProxyRequest
	HTTPProxyConnect
	// HTTPProxyResponse runs on an explicit forward proxy over the answer
	// to a CONNECT (the tunnel's "200 Connection established", or what a
	// proxy of the virtual's pool answered), before the client gets it.
	HTTPProxyResponse
	// The request-adapt and response-adapt profiles' events
	// (commands_adapt.go): *Headers when the ICAP server sent the
	// message back modified, *Result after every exchange.
	AdaptRequestHeaders
	AdaptRequestResult
	AdaptResponseHeaders
	AdaptResponseResult
	// ICAPRequest and ICAPResponse run the internal virtual server's
	// rules (the one with the icap profile) over each ICAP request just
	// before it goes to the ICAP server, and over the answer's head when
	// it arrived (commands_icap.go).
	ICAPRequest
	ICAPResponse
	// The sip profile's send and done events (commands_sip.go):
	// SIPRequestSend and SIPResponseSend run as a message is about to
	// leave for its peer (a request of the client after balancing, its
	// member known), SIPRequestDone and SIPResponseDone once it has left.
	SIPRequestSend
	SIPRequestDone
	SIPResponseSend
	SIPResponseDone
	// ClientSSLData and ServerSSLData run when the decrypted bytes a
	// rule asked for with SSL::collect are in (commands_ssldata.go).
	ClientSSLData
	ServerSSLData
	// The json profile's events (commands_json.go): JSONRequest and
	// JSONResponse when a JSON body parsed, *Missing when a message with
	// a JSON content type has no body, *Error when it does not parse or
	// passes the profile's maximums.
	JSONRequest
	JSONRequestMissing
	JSONRequestError
	JSONResponse
	JSONResponseMissing
	JSONResponseError
	// The html profile's events (commands_html.go): HTMLTagMatched for
	// each tag a tag-raise-event rule matches in a response body,
	// HTMLCommentMatched for each comment when a comment-raise-event
	// rule is there.
	HTMLTagMatched
	HTMLCommentMatched
	// SOCKSRequest runs when a client of a socks profile's virtual has
	// named its destination, before it is resolved and connected
	// (commands_socks.go).
	SOCKSRequest
	// The mqtt profile's events (commands_mqtt.go): each packet from
	// either end (INGRESS), each about to leave for one (EGRESS), the
	// payload MQTT::collect asked for (DATA), and a client's close.
	MQTTClientIngress
	MQTTClientEgress
	MQTTServerIngress
	MQTTServerEgress
	MQTTClientData
	MQTTServerData
	MQTTClientShutdown
	// The fix profile's events (commands_fix.go), over each message of
	// the client, and of the member with response-parsing (then on the
	// server side): FIXHeader once its header is read, FIXMessage once
	// the whole message is.
	FIXHeader
	FIXMessage
	// The rewrite profile's events (commands_rewrite.go): REWRITE_REQUEST
	// and REWRITE_RESPONSE just before the profile maps a message,
	// REWRITE_REQUEST_DONE once a request is mapped, and
	// REWRITE_RESPONSE_DONE once a response is, when REWRITE::post_process
	// asked for it.
	RewriteRequest
	RewriteRequestDone
	RewriteResponse
	RewriteResponseDone
	// The rtsp profile's events (commands_rtsp.go): RTSPRequest over each
	// request of the client's control connection, RTSPResponse over each
	// answer of the member, and the *Data events over a message's body
	// once RTSP::collect asked for it.
	RTSPRequest
	RTSPRequestData
	RTSPResponse
	RTSPResponseData
	// The diameter profile's events (commands_diameter.go), over each
	// Diameter message: DiameterIngress as it arrives from either side,
	// DiameterEgress as it leaves toward the other.
	DiameterIngress
	DiameterEgress
	// The gtp profile's events (commands_gtp.go), over each GTP message
	// of a UDP virtual: the *Ingress ones as it arrives from either side,
	// the *Egress ones as it leaves toward the other; GPDU for GTP-U's
	// G-PDUs, Prime for GTP' messages, Signalling for the others.
	GTPGPDUIngress
	GTPGPDUEgress
	GTPPrimeIngress
	GTPPrimeEgress
	GTPSignallingIngress
	GTPSignallingEgress
	// HTTPDisabled runs when a client's HTTP filter stops parsing and
	// passes the bytes through (HTTP::disable, a CONNECT or Upgrade the
	// member accepted: HTTP::passthrough_reason says which);
	// HTTPReject when the filter rejects a client's request it cannot
	// take (HTTP::reject_reason says why), before the client is
	// answered or reset. ServerInit runs once a member is chosen, just
	// before the connection to it is opened (a standard virtual's SYN,
	// each member connection of an http or message-based virtual, each
	// server-side flow of a UDP one), while its source (snat, snatpool)
	// may still change.
	HTTPDisabled
	HTTPReject
	ServerInit
	// NameResolved runs when the answer to a rule's NAME::lookup is in
	// (commands_name.go), right after the event that asked, on that
	// event's side and with its message still in hand.
	NameResolved
	// The generic message-routing framework's events (commands_mrf.go),
	// over each message of a virtual with a generic protocol and router
	// profile: GenericMessageIngress then MRIngress as it arrives from
	// the client, MREgress then GenericMessageEgress as a message leaves
	// toward it, MRFailed when it could not be delivered; MRData is the
	// payload MR::collect waits for (generic messages arrive whole, so
	// it never runs).
	GenericMessageIngress
	GenericMessageEgress
	MRIngress
	MREgress
	MRFailed
	MRData
	// DiameterRetransmission runs over a client's request the diameter
	// profile is about to send again to another member, and over the
	// answer it makes itself when the request cannot be delivered
	// (commands_diameter_retx.go).
	DiameterRetransmission
	// The TLS handshake's middle (commands_sslhello.go): the virtual's
	// ServerHello about to leave for the client (CLIENTSSL_SERVERHELLO_SEND),
	// a client-ssl virtual letting a client through in plaintext
	// (CLIENTSSL_PASSTHROUGH: allow-non-ssl, or the SSL forward proxy's
	// bypass), the member's ServerHello in (SERVERSSL_SERVERHELLO) and its
	// certificate chain checked (SERVERSSL_SERVERCERT).
	ClientSSLServerHelloSend
	ClientSSLPassthrough
	ServerSSLServerHello
	ServerSSLServerCert
	// XMLContentBasedRouting runs when an xml profile's XPath query
	// matched a request's XML body, after HTTP_REQUEST (and
	// HTTP_REQUEST_DATA) and before the request is balanced; XML_count,
	// XML_queries and XML_values say what matched (commands_xml.go).
	XMLContentBasedRouting
	// The auth profiles' events (commands_auth.go): AuthResult runs over
	// each answer to an AUTH::authenticate, right after the event that
	// asked and with its message still in hand; then the older event of
	// the answer's kind (AUTH_SUCCESS, AUTH_FAILURE, AUTH_ERROR,
	// AUTH_WANTCREDENTIAL), which F5 keeps for rules written before
	// AUTH_RESULT.
	AuthResult
	AuthSuccess
	AuthFailure
	AuthError
	AuthWantCredential
	// The xml profile's parser events (commands_xml_events.go), over a
	// request's XML document in document order: XMLBeginDocument once,
	// XMLBeginElement and XMLEndElement at each element's tags, XMLCData
	// over its character data, XMLEndDocument once; XMLEvent after each
	// of them, for a rule that handles them all in one place.
	XMLBeginDocument
	XMLBeginElement
	XMLCData
	XMLEndElement
	XMLEndDocument
	XMLEvent
	// The RADIUS AAA events (commands_aaa.go) run on an internal virtual
	// server with a radius-aaa profile, over the RADIUS request an
	// AAA::auth_send or AAA::acct_send is about to send, then over the
	// server's answer.
	RADIUSAAAAuthRequest
	RADIUSAAAAuthResponse
	RADIUSAAAAcctRequest
	RADIUSAAAAcctResponse
	// The pcp profile's events (commands_pcp.go) run in an lsn pool's
	// PCP server: PCPRequest over a well-formed request before it is
	// acted on (PCP::reject refuses it), PCPResponse over every answer
	// about to leave, successful or not.
	PCPRequest
	PCPResponse
	// SAPicked runs when a flow's source translation is picked, before
	// its server side connects: on a standard virtual with an lsn pool,
	// once the pool gave the translation XLAT::src_addr and
	// XLAT::src_port read (commands_xlat.go).
	SAPicked
	// SSEResponse runs for each event of a text/event-stream response
	// on a virtual with an sse profile, as the event passes
	// (commands_sse.go).
	SSEResponse
	numEvents
)

var eventNames = [numEvents]string{
	"RULE_INIT", "CLIENT_ACCEPTED", "CLIENT_DATA", "LB_SELECTED", "LB_FAILED",
	"SERVER_CONNECTED", "SERVER_DATA", "CLIENT_CLOSED", "SERVER_CLOSED",
	"HTTP_REQUEST", "HTTP_RESPONSE", "HTTP_REQUEST_DATA", "HTTP_RESPONSE_DATA",
	"PERSIST_DOWN", "USER_REQUEST", "USER_RESPONSE", "CLIENTSSL_HANDSHAKE", "SERVERSSL_HANDSHAKE",
	"HTTP_REQUEST_SEND", "HTTP_RESPONSE_CONTINUE", "HTTP_REQUEST_RELEASE", "HTTP_RESPONSE_RELEASE",
	"DNS_REQUEST", "DNS_RESPONSE", "CLIENTSSL_CLIENTCERT", "FLOW_INIT", "STREAM_MATCHED",
	"CLIENTSSL_CLIENTHELLO", "SERVERSSL_CLIENTHELLO_SEND",
	"WS_REQUEST", "WS_RESPONSE", "WS_CLIENT_FRAME", "WS_CLIENT_DATA", "WS_CLIENT_FRAME_DONE",
	"WS_SERVER_FRAME", "WS_SERVER_DATA", "WS_SERVER_FRAME_DONE",
	"CACHE_REQUEST", "CACHE_RESPONSE", "CACHE_UPDATE",
	"LB_QUEUED",
	"SIP_REQUEST", "SIP_RESPONSE",
	"HTTP_PROXY_REQUEST", "HTTP_PROXY_CONNECT", "HTTP_PROXY_RESPONSE",
	"ADAPT_REQUEST_HEADERS", "ADAPT_REQUEST_RESULT", "ADAPT_RESPONSE_HEADERS", "ADAPT_RESPONSE_RESULT",
	"ICAP_REQUEST", "ICAP_RESPONSE",
	"SIP_REQUEST_SEND", "SIP_REQUEST_DONE", "SIP_RESPONSE_SEND", "SIP_RESPONSE_DONE",
	"CLIENTSSL_DATA", "SERVERSSL_DATA",
	"JSON_REQUEST", "JSON_REQUEST_MISSING", "JSON_REQUEST_ERROR",
	"JSON_RESPONSE", "JSON_RESPONSE_MISSING", "JSON_RESPONSE_ERROR",
	"HTML_TAG_MATCHED", "HTML_COMMENT_MATCHED",
	"SOCKS_REQUEST",
	"MQTT_CLIENT_INGRESS", "MQTT_CLIENT_EGRESS", "MQTT_SERVER_INGRESS", "MQTT_SERVER_EGRESS",
	"MQTT_CLIENT_DATA", "MQTT_SERVER_DATA", "MQTT_CLIENT_SHUTDOWN",
	"FIX_HEADER", "FIX_MESSAGE",
	"REWRITE_REQUEST", "REWRITE_REQUEST_DONE", "REWRITE_RESPONSE", "REWRITE_RESPONSE_DONE",
	"RTSP_REQUEST", "RTSP_REQUEST_DATA", "RTSP_RESPONSE", "RTSP_RESPONSE_DATA",
	"DIAMETER_INGRESS", "DIAMETER_EGRESS",
	"GTP_GPDU_INGRESS", "GTP_GPDU_EGRESS", "GTP_PRIME_INGRESS", "GTP_PRIME_EGRESS",
	"GTP_SIGNALLING_INGRESS", "GTP_SIGNALLING_EGRESS",
	"HTTP_DISABLED", "HTTP_REJECT", "SERVER_INIT",
	"NAME_RESOLVED",
	"GENERICMESSAGE_INGRESS", "GENERICMESSAGE_EGRESS", "MR_INGRESS", "MR_EGRESS", "MR_FAILED", "MR_DATA",
	"DIAMETER_RETRANSMISSION",
	"CLIENTSSL_SERVERHELLO_SEND", "CLIENTSSL_PASSTHROUGH", "SERVERSSL_SERVERHELLO", "SERVERSSL_SERVERCERT",
	"XML_CONTENT_BASED_ROUTING",
	"AUTH_RESULT", "AUTH_SUCCESS", "AUTH_FAILURE", "AUTH_ERROR", "AUTH_WANTCREDENTIAL",
	"XML_BEGIN_DOCUMENT", "XML_BEGIN_ELEMENT", "XML_CDATA", "XML_END_ELEMENT", "XML_END_DOCUMENT", "XML_EVENT",
	"RADIUS_AAA_AUTH_REQUEST", "RADIUS_AAA_AUTH_RESPONSE", "RADIUS_AAA_ACCT_REQUEST", "RADIUS_AAA_ACCT_RESPONSE",
	"PCP_REQUEST", "PCP_RESPONSE", "SA_PICKED", "SSE_RESPONSE",
}

func (e Event) String() string {
	if e < numEvents {
		return eventNames[e]
	}
	return "UNKNOWN_EVENT"
}

// ParseEvent maps an event name to its Event.
func ParseEvent(name string) (Event, bool) {
	for i, n := range eventNames {
		if n == name {
			return Event(i), true
		}
	}
	return 0, false
}

// Side is the side an event runs on, as F5 gives it, which TCP:: and IP::
// commands act on: HTTP_REQUEST_SEND and HTTP_REQUEST_RELEASE run on the
// server side, just before the request leaves for the member (HTTP::
// commands there still see the request); HTTP_RESPONSE_RELEASE runs just
// before the response leaves for the client, after every other rule.
func (e Event) Side() Side { return e.side() }

func (e Event) side() Side {
	switch e {
	case ServerConnected, ServerData, ServerClosed, HTTPResponse, HTTPResponseData, ServerSSLHandshake, UserResponse,
		HTTPRequestSend, HTTPResponseContinue, HTTPRequestRelease, HTTPResponseRelease, StreamMatched,
		ServerSSLClientHelloSend, WSResponse, WSServerFrame, WSServerData, WSServerFrameDone,
		CacheUpdate, SIPResponse, HTTPProxyResponse, AdaptResponseHeaders, AdaptResponseResult,
		ICAPRequest, ICAPResponse,
		SIPRequestSend, SIPRequestDone, ServerSSLData,
		JSONResponse, JSONResponseMissing, JSONResponseError,
		HTMLTagMatched, HTMLCommentMatched, SSEResponse,
		MQTTServerIngress, MQTTServerEgress, MQTTServerData,
		RewriteResponse, RewriteResponseDone,
		RTSPResponse, RTSPResponseData,
		ServerSSLServerHello, ServerSSLServerCert:
		// (CACHE_UPDATE runs over a member's answer, on the server
		// connection that brought it [M]; CACHE_REQUEST and
		// CACHE_RESPONSE answer the client without a member.)
		return ServerSide
	}
	return ClientSide
}

// DefaultPriority is the priority of a when block that names none.
const DefaultPriority = 500

// Handler is one compiled `when` block.
type Handler struct {
	Event    Event
	Priority int
	Line     int
	body     *tcl.Script
	rule     *Rule
	// stats counts the executions of the rule's handlers of Event; a
	// rule's handlers of one event share it, and first marks the one
	// that reports it.
	stats *eventCounters
	first bool
}

// Ref is a literal reference from a rule to a configuration object, so the
// configuration layer can refuse a rule naming a pool that does not exist.
type Ref struct {
	Kind string // pool, snatpool, class, node
	Name string
	Line int
	Col  int
}

// Rule is a compiled iRule. It is immutable and shared by every virtual
// server and connection that uses it.
type Rule struct {
	// Name is the full path, /Common/name unless a partition was given.
	Name        string
	handlers    []*Handler
	procs       map[string]*tcl.Proc
	refs        []Ref
	unsupported []Unsupported
	// clones: the rule has a clone pool command (Clones); cloneEvents the
	// events a clone pool is written in (CloneEvents); cloneNexthop: a
	// clone nexthop (CloneNexthop).
	clones       bool
	cloneEvents  []Event
	cloneNexthop bool
	// steersLSN: the rule has an LSN:: steering command (SteersLSN).
	steersLSN bool
	// ipfix counts what the rule's IPFIX:: commands did (show sys ipfix
	// irules); nil for a rule that names none.
	ipfix *ipfixCounters
	// httpNeeds are the commands in when blocks that need an http
	// profile; inEvent and inWhen say, while compiling, which when block
	// the compiler is in.
	httpNeeds []HTTPNeed
	// streamNeeds are the STREAM:: commands in when blocks, which need
	// a stream profile.
	streamNeeds []HTTPNeed
	// rewriteNeeds are the REWRITE:: commands in when blocks, which
	// need a rewrite profile (commands_rewrite.go).
	rewriteNeeds []HTTPNeed
	// compressNeeds are the COMPRESS:: commands in when blocks, which
	// need an http-compression profile; cacheNeeds the CACHE:: ones, a
	// web-acceleration profile.
	compressNeeds, cacheNeeds []HTTPNeed
	// wsNeeds are the WS:: commands in when blocks, which need a
	// websocket profile.
	wsNeeds []HTTPNeed
	// keepsSecrets: the rule reads TLS key material (KeepsSecrets).
	keepsSecrets bool
	// controlsSessions: the rule names SSL::session, SSL::sessionticket
	// or SSL::is_renegotiation_secure (ControlsSessions).
	controlsSessions bool
	// sizesRecords: the rule names SSL::allow_dynamic_record_sizing.
	sizesRecords bool
	// checksPeers: the rule names SSL::authenticate or
	// SSL::secure_renegotiation (Program.ChecksPeers).
	checksPeers bool
	// uncleans: the rule names SSL::unclean_shutdown.
	uncleans bool
	// choosesProfile: the rule says SSL::profile (ChoosesSSLProfile).
	choosesProfile bool
	// readsSYN: the rule reads the client's SYN (ReadsSYN).
	readsSYN bool
	// readsLink: the rule reads the arrival VLAN (ReadsLink).
	readsLink bool
	// switchesH2: the rule has HTTP2::disable or HTTP2::enable
	// (SwitchesHTTP2).
	switchesH2 bool
	// waits: the rule has `after ms` without a script, or a command
	// that waits on the network (Program.Waits).
	waits bool
	// usesAfter: the rule calls after (UsesAfter).
	usesAfter bool
	// usesPolicy: the rule calls a POLICY:: command
	// (UsesPolicyCommands); policy is the policy a policy's rule runs
	// (CompilePolicy).
	usesPolicy bool
	// attachesBWC: the rule calls BWC::policy or IP::ingress_rate_limit
	// (Program.AttachesBWC).
	attachesBWC bool
	policy      *PolicyInfo
	inEvent     Event
	inWhen      bool
}

// HTTPNeed is a use, in a rule, of an event or a command that runs only
// on a virtual server with an http profile: BIG-IP refuses to attach such
// a rule to a virtual server without one (01071912), so the configuration
// layer refuses it before traffic could find the rule half working.
type HTTPNeed struct {
	// Name is the event (HTTP_REQUEST) or the command (HTTP::uri,
	// "persist cookie").
	Name string
	// Event is the when block it is in (the event itself for an event).
	Event     Event
	Line, Col int
}

// IsHTTP reports whether ev is an HTTP event, raised only on a virtual
// server with an http profile.
func (e Event) IsHTTP() bool {
	switch e {
	case HTTPRequest, HTTPResponse, HTTPRequestData, HTTPResponseData,
		HTTPRequestSend, HTTPResponseContinue, HTTPRequestRelease, HTTPResponseRelease,
		HTTPProxyRequest, HTTPProxyConnect, HTTPProxyResponse,
		HTTPDisabled, HTTPReject:
		return true
	}
	return false
}

// HTTPNeeds lists what in the rule needs an http profile on the virtual
// server: its HTTP events, then the HTTP:: commands and `persist cookie`
// written in its other when blocks (inside HTTP events they add nothing),
// in source order. RULE_INIT is left out: nothing there runs on a
// connection.
func (r *Rule) HTTPNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event.IsHTTP() {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	for _, n := range r.httpNeeds {
		if !n.Event.IsHTTP() && n.Event != RuleInit {
			out = append(out, n)
		}
	}
	return out
}

// StreamNeeds lists what in the rule needs a stream profile on the
// virtual server, as BIG-IP refuses the rule without one (01070394): its
// STREAM_MATCHED handlers, then its STREAM:: commands in when blocks, in
// source order.
func (r *Rule) StreamNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == StreamMatched {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return append(out, inEvents(r.streamNeeds)...)
}

// CompressNeeds lists the COMPRESS:: commands in the rule's when blocks,
// in source order: BIG-IP refuses the rule on a virtual server without an
// http-compression profile (01070394).
func (r *Rule) CompressNeeds() []HTTPNeed { return inEvents(r.compressNeeds) }

// CacheNeeds lists what in the rule needs a web-acceleration profile on
// the virtual server, as BIG-IP refuses the rule without one (01070394):
// its CACHE_ events, then the CACHE:: commands in its other when blocks,
// in source order.
func (r *Rule) CacheNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event.IsCache() {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	for _, n := range inEvents(r.cacheNeeds) {
		if !n.Event.IsCache() {
			out = append(out, n)
		}
	}
	return out
}

// IsCache reports a web-acceleration profile's event.
func (e Event) IsCache() bool { return e >= CacheRequest && e <= CacheUpdate }

// WebSocketNeeds lists what in the rule needs a websocket profile on the
// virtual server: its WS_ events, then the WS:: commands in its other
// when blocks, in source order [M: BIG-IP's refusal of such a rule
// without the profile is taken to be 01070394, as for the other
// profile-bound commands].
func (r *Rule) WebSocketNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event.IsWebSocket() {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	for _, n := range inEvents(r.wsNeeds) {
		if !n.Event.IsWebSocket() {
			out = append(out, n)
		}
	}
	return out
}

// JSONNeeds lists the rule's JSON_ event handlers, which need a json
// profile on the virtual server, as BIG-IP refuses the rule without one
// (01070394 [M]). The JSON:: commands need none: over JSON::create and
// JSON::parse caches they work in any event.
func (r *Rule) JSONNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event >= JSONRequest && h.Event <= JSONResponseError {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// HTMLNeeds lists the rule's HTML_ event handlers, which need an html
// profile on the virtual server: BIG-IP refuses the rule without one
// (01070394 [M]).
func (r *Rule) HTMLNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == HTMLTagMatched || h.Event == HTMLCommentMatched {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// SSENeeds lists the rule's SSE_RESPONSE handlers, which need an sse
// profile on the virtual server (01070394 [M], as HTMLNeeds).
func (r *Rule) SSENeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == SSEResponse {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// XMLNeeds lists the rule's XML_CONTENT_BASED_ROUTING and parser event
// (XML_BEGIN_DOCUMENT ... XML_EVENT) handlers, which need an xml profile
// on the virtual server (01070394 [M]). XML:: commands need none:
// outside the events they have no document and fail when run.
func (r *Rule) XMLNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == XMLContentBasedRouting || h.Event.IsXMLParser() {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// MQTTNeeds lists the rule's MQTT_ event handlers, which need an mqtt
// profile on the virtual server, as BIG-IP refuses the rule without one
// (01070394 [M]).
func (r *Rule) MQTTNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event.IsMQTT() {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// FIXNeeds lists the rule's FIX_HEADER and FIX_MESSAGE handlers, which
// need a fix profile on the virtual server (01070394 [M]).
func (r *Rule) FIXNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == FIXHeader || h.Event == FIXMessage {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// RTSPNeeds lists the rule's RTSP_ event handlers, which need an rtsp
// profile on the virtual server (01070394 [M]).
func (r *Rule) RTSPNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event >= RTSPRequest && h.Event <= RTSPResponseData {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// DiameterNeeds lists the rule's DIAMETER_INGRESS, DIAMETER_EGRESS and
// DIAMETER_RETRANSMISSION handlers, which need a diameter profile on the
// virtual server (01070394 [M]).
func (r *Rule) DiameterNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event == DiameterIngress || h.Event == DiameterEgress || h.Event == DiameterRetransmission {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// MRFNeeds lists the rule's GENERICMESSAGE_ and MR_ events, which need
// a generic protocol profile on the virtual server.
func (r *Rule) MRFNeeds() []HTTPNeed {
	var out []HTTPNeed
	for _, h := range r.handlers {
		if h.Event >= GenericMessageIngress && h.Event <= MRData {
			out = append(out, HTTPNeed{Name: h.Event.String(), Event: h.Event, Line: h.Line})
		}
	}
	return out
}

// IsMQTT reports an mqtt profile's event.
func (e Event) IsMQTT() bool { return e >= MQTTClientIngress && e <= MQTTClientShutdown }

// IsWebSocket reports a websocket profile's event.
func (e Event) IsWebSocket() bool { return e >= WSRequest && e <= WSServerFrameDone }

// inEvents is the uses of needs in events a connection raises: RULE_INIT
// runs with no connection, so a command there needs no profile.
func inEvents(needs []HTTPNeed) []HTTPNeed {
	var out []HTTPNeed
	for _, n := range needs {
		if n.Event != RuleInit {
			out = append(out, n)
		}
	}
	return out
}

// noteHTTPNeed records the command at hand (in the when block being
// compiled) as needing an http profile.
func (r *Rule) noteHTTPNeed(name string, c *tcl.Compiler) {
	line, col := c.Pos(0)
	r.httpNeeds = append(r.httpNeeds, HTTPNeed{Name: name, Event: r.inEvent, Line: line, Col: col})
}

// Unsupported is one use of an F5 command or event that openltm does not
// implement yet, with its position.
type Unsupported struct {
	Kind      string // "command" or "event"
	Name      string
	Line, Col int
}

// Unsupported lists the F5 commands and events the rule uses that openltm
// does not implement yet, each name once, in the order they first appear.
// A rule with any is compiled but not acted on: its caller decides whether
// the virtual servers using it carry traffic.
func (r *Rule) Unsupported() []string {
	var out []string
	seen := map[string]bool{}
	for _, u := range r.unsupported {
		if !seen[u.Name] {
			seen[u.Name] = true
			out = append(out, u.Name)
		}
	}
	return out
}

// UnsupportedError is returned by Compile, together with the compiled
// rule, when the rule uses F5 commands or events openltm does not
// implement yet. It is a warning: the rule is valid on BIG-IP.
type UnsupportedError struct {
	Rule string
	Uses []Unsupported
}

func (e *UnsupportedError) Error() string {
	var b strings.Builder
	for i, u := range e.Uses {
		if i > 0 {
			b.WriteString("; ")
		}
		fmt.Fprintf(&b, "%s:%d:%d: %s %q is valid on BIG-IP but not implemented yet", e.Rule, u.Line, u.Col, u.Kind, u.Name)
	}
	return b.String()
}

// Handlers returns the rule's when blocks in source order.
func (r *Rule) Handlers() []*Handler { return r.handlers }

// Refs returns the objects the rule names literally.
func (r *Rule) Refs() []Ref { return r.refs }

// Handles reports whether the rule has a when block for ev.
// ChoosesSSLProfile reports whether the rule says SSL::profile
// (Program.ChoosesSSLProfile), for a virtual whose program is not made
// yet.
func (r *Rule) ChoosesSSLProfile() bool { return r.choosesProfile }

func (r *Rule) Handles(ev Event) bool {
	for _, h := range r.handlers {
		if h.Event == ev {
			return true
		}
	}
	return false
}

// FullName adds the /Common partition to a bare rule name.
func FullName(name string) string {
	if strings.HasPrefix(name, "/") {
		return name
	}
	return "/Common/" + name
}

// CompileError is a rule that cannot be loaded, with its position.
type CompileError struct {
	Rule      string
	Line, Col int
	Msg       string
}

func (e *CompileError) Error() string {
	return fmt.Sprintf("%s:%d:%d: %s", e.Rule, e.Line, e.Col, e.Msg)
}

// Compile parses and compiles a rule body (the text between the braces of
// `ltm rule NAME { ... }`). Every command name is resolved now: disabled
// Tcl commands and names BIG-IP does not have are refused with their line
// and column (a *CompileError), so a bad rule never reaches the dataplane.
// F5 commands and events openltm does not implement yet compile: the rule
// is returned together with an *UnsupportedError listing them, and the
// caller decides what to do with a rule it cannot fully act on.
func Compile(name, body string) (*Rule, error) {
	r := &Rule{Name: FullName(name), procs: map[string]*tcl.Proc{}, keepsSecrets: readsSecrets(body), controlsSessions: controlsSessions(body),
		sizesRecords:   sizesRecords(body),
		checksPeers:    strings.Contains(body, "SSL::authenticate") || strings.Contains(body, "SSL::secure_renegotiation"),
		uncleans:       strings.Contains(body, "SSL::unclean_shutdown"),
		choosesProfile: strings.Contains(body, "SSL::profile")}
	check := func(cmd string, src *tcl.Source, off int) error {
		line, col := src.Pos(off)
		if IsF5Command(cmd) {
			r.unsupported = append(r.unsupported, Unsupported{Kind: "command", Name: strings.TrimPrefix(cmd, "::"), Line: line, Col: col})
			return nil
		}
		return &CompileError{Rule: r.Name, Line: line, Col: col, Msg: unknownCommandMsg(cmd)}
	}
	tbl := commandTable()
	sc, err := compileRule(tbl, check, r, body)
	if err != nil {
		if se, ok := err.(*tcl.SyntaxError); ok {
			return nil, &CompileError{Rule: r.Name, Line: se.Line, Col: se.Col, Msg: se.Msg}
		}
		return nil, err
	}
	rulePriority := DefaultPriority
	for _, c := range sc.TopCommands() {
		fail := func(i int, format string, args ...any) error {
			l, col := c.WordPos(i)
			return &CompileError{Rule: r.Name, Line: l, Col: col, Msg: fmt.Sprintf(format, args...)}
		}
		kw := c.Words[0].String()
		if !c.Literal {
			return nil, fail(0, "a rule's top level holds only when, proc and priority; found a substituted word")
		}
		switch kw {
		case "when":
			h, err := parseWhen(c, rulePriority, fail)
			if err != nil {
				return nil, err
			}
			if h == nil {
				l, col := c.WordPos(1)
				r.unsupported = append(r.unsupported, Unsupported{Kind: "event", Name: c.Words[1].String(), Line: l, Col: col})
				continue
			}
			h.rule = r
			r.handlers = append(r.handlers, h)
		case "timing":
			// A rule-wide `timing on|off` only turns BIG-IP's cycle
			// statistics on or off; openltm accepts it.
			if len(c.Words) != 2 || (c.Words[1].String() != "on" && c.Words[1].String() != "off") {
				return nil, fail(0, "wrong # args: should be \"timing on|off\"")
			}
		case "proc":
			if len(c.Words) == 3 {
				return nil, fail(0, "wrong # args: should be \"proc name args body\": proc %s has a body but no argument list (a proc without arguments is proc %s {} {...})", c.Words[1].String(), c.Words[1].String())
			}
			if len(c.Words) != 4 {
				return nil, fail(0, "wrong # args: should be \"proc name args body\"")
			}
			pname := c.Words[1].String()
			if _, dup := r.procs[pname]; dup {
				return nil, fail(1, "proc %q is defined twice", pname)
			}
			p, err := tcl.NewProc(tbl, check, pname, c.Words[2], c.Words[3])
			if err != nil {
				return nil, fail(2, "%v", err)
			}
			r.procs[pname] = p
		case "priority":
			if len(c.Words) != 2 {
				return nil, fail(0, "wrong # args: should be \"priority N\" with N from 0 to 1000")
			}
			p, err := parsePriority(c.Words[1].String())
			if err != nil {
				return nil, fail(1, "%v", err)
			}
			rulePriority = p
		default:
			return nil, fail(0, "unexpected %q at the top level of a rule: expected when EVENT [priority N] { ... }, proc NAME ARGS BODY, priority N or timing on|off", kw)
		}
	}
	seen := map[Event]*eventCounters{}
	for _, h := range r.handlers {
		if c := seen[h.Event]; c != nil {
			h.stats = c
			continue
		}
		h.stats, h.first = &eventCounters{}, true
		seen[h.Event] = h.stats
	}
	if len(r.unsupported) > 0 {
		sort.SliceStable(r.unsupported, func(i, j int) bool {
			a, b := r.unsupported[i], r.unsupported[j]
			return a.Line < b.Line || (a.Line == b.Line && a.Col < b.Col)
		})
		return r, &UnsupportedError{Rule: r.Name, Uses: r.unsupported}
	}
	return r, nil
}

func parsePriority(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 0 || p > 1000 {
		return 0, fmt.Errorf("bad priority %q: must be an integer from 0 to 1000", s)
	}
	return p, nil
}

// parseWhen reads `when EVENT [timing on|off] [priority N] BODY`. It
// returns a nil handler for an F5 event openltm does not raise yet.
func parseWhen(c tcl.TopCommand, prio int, fail func(int, string, ...any) error) (*Handler, error) {
	w := c.Words
	if len(w) < 3 {
		return nil, fail(0, "wrong # args: should be \"when EVENT ?priority N? { script }\"")
	}
	ev, ok := ParseEvent(w[1].String())
	if !ok && !IsF5Event(w[1].String()) {
		return nil, fail(1, "unknown event %q: BIG-IP has no such iRule event; openltm raises %s", w[1].String(), strings.Join(eventNames[:], ", "))
	}
	h := &Handler{Event: ev, Priority: prio, Line: c.Line}
	i := 2
	for i < len(w)-1 {
		switch w[i].String() {
		case "priority":
			if i+1 >= len(w)-1 {
				return nil, fail(i, "priority needs a value from 0 to 1000")
			}
			p, err := parsePriority(w[i+1].String())
			if err != nil {
				return nil, fail(i+1, "%v", err)
			}
			h.Priority = p
			i += 2
		case "timing":
			if i+1 >= len(w)-1 || (w[i+1].String() != "on" && w[i+1].String() != "off") {
				return nil, fail(i, "timing needs on or off")
			}
			i += 2
		default:
			return nil, fail(i, "unexpected %q in when: expected priority N, timing on|off or the event's script", w[i].String())
		}
	}
	body := tcl.ScriptOf(w[len(w)-1])
	if body == nil {
		return nil, fail(len(w)-1, "the body of when %s must be a braced script", w[1].String())
	}
	if !ok {
		return nil, nil
	}
	h.body = body
	return h, nil
}

// disabledTcl are the Tcl commands BIG-IP removes from iRules. Tcl's
// channel close is not among them: `close` is the sideband command.
var disabledTcl = map[string]bool{}

func init() {
	for _, n := range strings.Fields(`auto_execok auto_import auto_load auto_mkindex auto_mkindex_old
		auto_qualify auto_reset bgerror cd dict eof encoding exec exit fblocked fconfigure fcopy
		file fileevent filename flush gets glob http interp load lrepeat lreverse memory namespace open
		package pid pkg::create pkg_mkIndex pwd rename seek socket source tcl_findLibrary tell time
		unknown update vwait`) {
		disabledTcl[n] = true
	}
}

func unknownCommandMsg(cmd string) string {
	if disabledTcl[strings.TrimPrefix(cmd, "::")] {
		return fmt.Sprintf("command %q is disabled in iRules", cmd)
	}
	switch cmd {
	case "else", "elseif":
		// `}` newline `else {`: the newline ended the if command, so
		// the else became a command of its own. Tcl (and BIG-IP) say
		// only "invalid command name"; say why.
		return fmt.Sprintf("unknown command %q: %s belongs to the if before it and must follow that if's close-brace on the same line (a newline ends the if command)", cmd, cmd)
	case "}":
		return "unknown command \"}\": an extra close-brace; the braces before it are already balanced, so it closes nothing"
	}
	known := commandTable().Names()
	var near []string
	if i := strings.Index(cmd, "::"); i > 0 {
		ns := cmd[:i+2]
		for _, n := range known {
			if strings.HasPrefix(n, ns) {
				near = append(near, n)
			}
		}
	}
	sort.Strings(near)
	if len(near) > 0 {
		return fmt.Sprintf("unknown command %q: BIG-IP has no such iRule command; %s commands available: %s", cmd, strings.TrimSuffix(cmd[:strings.Index(cmd, "::")+2], "::"), strings.Join(near, ", "))
	}
	return fmt.Sprintf("unknown command %q: BIG-IP has no such iRule command (see the supported command list in the rules documentation)", cmd)
}
