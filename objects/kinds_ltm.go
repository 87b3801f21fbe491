package objects

var enabledDisabled = []string{"enabled", "disabled"}

func ed(name, def string) *Prop { return enum(name, def, enabledDisabled...) }

var lbModes = []string{
	"round-robin", "ratio-member", "ratio-node", "ratio-session",
	"ratio-least-connections-member", "ratio-least-connections-node",
	"least-connections-member", "least-connections-node",
	"weighted-least-connections-member", "weighted-least-connections-node",
	"fastest-node", "fastest-app-response", "observed-member", "observed-node",
	"predictive-member", "predictive-node", "dynamic-ratio-member",
	"dynamic-ratio-node", "least-sessions",
}

// memberKind is the schema of one pool member.
func memberKind() *Kind {
	return &Kind{Title: "Pool Member", Props: []*Prop{
		help(str("address", ""), "IP address of the member's node"),
		num("connection-limit", "0"),
		str("description", "none"),
		num("dynamic-ratio", "1"),
		passive(ed("inherit-profile", "enabled")),
		help(ed("logging", "disabled"), "enabled: every probe of the member's monitors is written to the log"),
		help(&Prop{Name: "monitor", Type: TMonitor, Default: "default", Ref: []string{"ltm monitor "}}, "member-specific health monitor rule"),
		num("priority-group", "0"),
		help(num("rate-limit", "disabled"), "new connections per second: disabled (0) or a number"),
		num("ratio", "1"),
		help(enum("session", "user-enabled", "user-enabled", "user-disabled", "monitor-enabled"), "user-disabled: no new connections (disabled)"),
		help(enum("state", "user-up", "user-up", "user-down", "up", "down", "checking", "unchecked"), "user-down: forced offline"),
		fqdnBlock(),
		passive(raw("profiles")),
		passive(raw("metadata")),
		passive(str("app-service", "none")),
	}}
}

func ltmKinds() []*Kind {
	virtual := &Kind{Words: []string{"ltm", "virtual"}, Title: "Virtual Server", Lower: "virtual server", Help: "Virtual server configuration", Props: []*Prop{
		help(str("destination", ""), "address:port the virtual server listens on"),
		str("description", "none"),
		help(&Prop{Name: "enabled", Type: TFlag, Enum: []string{"enabled", "disabled"}}, "disabled: new connections are reset"),
		help(enum("ip-protocol", "tcp", "tcp", "udp", "sctp", "any", "icmp", "icmpv6", "igmp", "gre", "esp", "ah", "ipip", "ipv6", "ospf", "pim", "l2tp"), "tcp, udp, sctp, any, another IP protocol by name, or its number"),
		str("mask", "255.255.255.255"),
		help(ref("pool", "ltm pool"), "default pool"),
		help(ref("bwc-policy", "net bwc policy"), "bandwidth controller the virtual server's flows share (dataplane/bwc)"),
		help(ref("flow-eviction-policy", "ltm eviction-policy"), "eviction policy: at its high-water percent of connection-limit, connections it chooses are reset so that new clients get in (dataplane/evict)"),
		help(ref("service-policy", "net service-policy"), "service policy whose timer policy gives the virtual server's flows idle timeouts by protocol and destination port (dataplane/timerpol)"),
		help(&Prop{Name: "profiles", Type: TColl, Items: ItemRef, Ref: []string{"ltm profile ", "ltm message-routing generic protocol", "ltm message-routing generic router", "ltm message-routing sip profile session", "ltm message-routing sip profile router", "ltm message-routing diameter profile session", "ltm message-routing diameter profile router", "ltm message-routing mqtt profile session", "ltm message-routing mqtt profile router", "pem profile radius-aaa"}, Sub: &Kind{Title: "Profile", Props: []*Prop{
			enum("context", "all", "all", "clientside", "serverside"),
		}}}, "profiles attached to the virtual server"),
		help(&Prop{Name: "persist", Type: TColl, Items: ItemRef, Ref: []string{"ltm persistence "}, Sub: &Kind{Title: "Persistence", Props: []*Prop{
			enum("default", "no", "yes", "no"),
		}}}, "persistence profiles"),
		ref("fallback-persistence", "ltm persistence "),
		help(&Prop{Name: "rules", Type: TList, Ref: []string{"ltm rule"}}, "iRules, run in list order"),
		help(&Prop{Name: "auth", Type: TList, Ref: []string{"ltm auth profile"}}, "auth profiles: each authenticates the clients (HTTP basic credentials, or the client certificate) through its rule before the request goes on"),
		str("source", "0.0.0.0/0"),
		help(&Prop{Name: "source-address-translation", Type: TStruct, Sub: &Kind{Title: "SNAT", Props: []*Prop{
			enum("type", "none", "none", "automap", "snat", "lsn"),
			ref("pool", "ltm snatpool", "ltm lsn-pool"),
		}}}, "SNAT: none, automap, a snatpool (type snat) or an lsn pool (type lsn)"),
		enum("source-port", "preserve", "preserve", "preserve-strict", "change"),
		ed("translate-address", "enabled"),
		ed("translate-port", "enabled"),
		num("connection-limit", "0"),
		ref("traffic-matching-criteria", "ltm traffic-matching-criteria"),
		help(&Prop{Name: "vlans", Type: TList, Ref: []string{"net vlan"}}, "VLANs (their interfaces: Linux interface names) that vlans-enabled listens on only, or vlans-disabled not"),
		&Prop{Name: "vlans-disabled", Type: TFlag, Enum: []string{"vlans-disabled", "vlans-enabled"}},
		passive(str("auto-lasthop", "default")),
		passive(enum("mirror", "disabled", "disabled", "enabled", "none")),
		help(num("rate-limit", "disabled"), "new client connections per second: disabled (0) or a number"),
		help(enum("rate-limit-mode", "object", "object", "object-source", "object-destination", "object-source-destination", "destination", "source", "source-destination"), "what rate-limit counts: the whole virtual (object), or per source and/or destination address"),
		help(num("rate-limit-src-mask", "0"), "bits of the source address rate-limit-mode keys on (0: all)"),
		help(num("rate-limit-dst-mask", "0"), "bits of the destination address rate-limit-mode keys on (0: all)"),
		passive(ed("nat64", "disabled")),
		passive(str("cmp-enabled", "yes")),
		passive(str("address-status", "yes")),
		passive(num("gtm-score", "0")),
		help(enum("service-down-immediate-action", "none", "none", "drop", "reset"), "reset or drop: a new connection while every member of the pool is down is refused at once, before a byte is read"),
		help(ed("serverssl-use-sni", "disabled"), "the server-ssl handshake sends the server name the client sent (when the server-ssl profile names no server-name)"),
		passive(str("app-service", "none")),
		help(&Prop{Name: "policies", Type: TColl, Items: ItemRef, Ref: []string{"ltm policy"}, Sub: &Kind{Title: "Policy"}}, "local traffic policies, evaluated before the iRules"),
		passive(raw("security-log-profiles")),
		passive(raw("metadata")),
		help(&Prop{Name: "clone-pools", Type: TColl, Items: ItemRef, Ref: []string{"ltm pool"}, Sub: &Kind{Title: "Clone Pool", Props: []*Prop{
			enum("context", "clientside", "clientside", "serverside"),
		}}}, "pools that get a copy of the clients' traffic: context clientside (as received) or serverside (as sent to the member)"),
		passive(raw("related-rules")),
		passive(str("last-hop-pool", "none")),
		passive(str("http-class", "none")),
		help(acts(bare("internal")), "an internal virtual server: it listens nowhere; request-adapt and response-adapt profiles send HTTP through its pool (ICAP, with an icap profile)"),
		help(acts(bare("reject")), "a reject virtual server: every connection is reset, every datagram dropped (no pool)"),
		help(acts(bare("ip-forward")), "a forwarding (IP) virtual server: each connection goes on to the address and port the client asked for (no pool); on every port of its address (destination ADDR:any)"),
		bare("l2-forward"),
		bare("stateless"),
		bare("dhcp-relay"),
		passive(str("per-flow-request-access-policy", "none")),
		help(ref("rate-class", "net rate-shaping class"), "the rate class the virtual's connections are shaped by (net rate-shaping class), or none"),
		passive(str("fw-enforced-policy", "none")),
		ro(str("creation-time", "")),
		ro(str("last-modified-time", "")),
		ro(num("vs-index", "")),
	}}

	pool := &Kind{Words: []string{"ltm", "pool"}, Title: "Pool", Lower: "pool", Help: "Load balancing pool configuration", Props: []*Prop{
		str("description", "none"),
		help(enum("load-balancing-mode", "round-robin", lbModes...), "how a member is chosen (default round-robin)"),
		help(&Prop{Name: "members", Type: TColl, Items: ItemMember, Sub: memberKind()}, "pool members (node:port)"),
		help(&Prop{Name: "monitor", Type: TMonitor, Default: "none", Ref: []string{"ltm monitor "}}, "health monitor rule: a, a and b, min N of { a b }"),
		help(num("min-active-members", "0"), "priority groups: use lower groups when fewer members are available"),
		help(num("min-up-members", "0"), "with min-up-members-checking: fewer members up than this fires min-up-members-action"),
		help(enum("min-up-members-action", "failover", "failover", "reboot", "restart-all"), "failover: this device gives up its traffic groups; reboot and restart-all are logged only"),
		help(ed("min-up-members-checking", "disabled"), "watch min-up-members"),
		help(enum("service-down-action", "none", "none", "reset", "drop", "reselect"), "what happens to open flows when a member goes down"),
		help(num("slow-ramp-time", "10"), "seconds over which a member coming up ramps to its full share"),
		help(num("reselect-tries", "0"), "other members tried when connecting to one fails"),
		help(ed("queue-on-connection-limit", "disabled"), "hold new connections in a queue while every member is at its connection limit"),
		help(u32(num("queue-depth-limit", "0")), "connections the queue holds at most (0: unlimited)"),
		help(u32(num("queue-time-limit", "0")), "milliseconds a connection waits in the queue at most (0: unlimited)"),
		help(enum("allow-nat", "yes", "yes", "no"), "no: connections to the pool are not given an ltm nat's translation address as their source"),
		help(enum("allow-snat", "yes", "yes", "no"), "no: connections to the pool keep the client's address, whatever the virtual's source-address-translation"),
		passive(ed("ignore-persisted-weight", "disabled")),
		help(str("ip-tos-to-client", "pass-through"), "pass-through, mimic (kept, acted on as pass-through) or 0-255: the IP ToS of the client's packets (the virtual's default pool)"),
		help(str("ip-tos-to-server", "pass-through"), "pass-through, mimic (kept, acted on as pass-through) or 0-255: the IP ToS of the member connections' packets"),
		passive(str("link-qos-to-client", "pass-through")),
		passive(str("link-qos-to-server", "pass-through")),
		passive(str("app-service", "none")),
		passive(raw("metadata")),
		passive(raw("profiles")),
	}}

	node := &Kind{Words: []string{"ltm", "node"}, Title: "Node", Lower: "node", Help: "Node specific pool member configuration", Props: []*Prop{
		str("address", ""),
		num("connection-limit", "0"),
		str("description", "none"),
		num("dynamic-ratio", "1"),
		help(ed("logging", "disabled"), "enabled: every probe of the node's monitors is written to the log"),
		&Prop{Name: "monitor", Type: TMonitor, Default: "default", Ref: []string{"ltm monitor "}},
		help(num("rate-limit", "disabled"), "new connections per second: disabled (0) or a number"),
		num("ratio", "1"),
		enum("session", "user-enabled", "user-enabled", "user-disabled", "monitor-enabled"),
		enum("state", "user-up", "user-up", "user-down", "up", "down", "checking", "unchecked"),
		fqdnBlock(),
		passive(str("app-service", "none")),
		passive(raw("metadata")),
	}}

	monitorCommon := func() []*Prop {
		return []*Prop{
			ref("defaults-from", "ltm monitor "),
			str("description", "none"),
			str("destination", "*:*"),
			num("interval", "5"),
			num("timeout", "16"),
			num("time-until-up", "0"),
			num("up-interval", "0"),
			ed("manual-resume", "disabled"),
			help(bounded(num("ip-dscp", "0"), 0, 63), "DSCP (0-63) of the probes' packets: IP_TOS, or the IPv6 traffic class, dscp<<2"),
			help(ed("adaptive", "disabled"), "enabled fails a probe whose response time exceeds adaptive-limit or diverges from the mean"),
			help(num("adaptive-limit", "200"), "milliseconds no probe's response time may exceed (adaptive enabled)"),
			passive(num("sampling-timeframe", "300")),
			help(num("adaptive-sampling-timespan", "300"), "seconds of probes whose mean response time adaptive monitoring compares with"),
			help(enum("adaptive-divergence-type", "relative", "relative", "absolute"), "adaptive-divergence-value in percent of the mean (relative) or milliseconds (absolute)"),
			help(num("adaptive-divergence-value", "25"), "how far above the mean response time a probe may be (adaptive enabled)"),
			passive(str("app-service", "none")),
		}
	}
	withSendRecv := func(ps []*Prop) []*Prop {
		return append(ps,
			str("send", "none"), str("recv", "none"), str("recv-disable", "none"),
			ed("reverse", "disabled"), ed("transparent", "disabled"),
			passive(str("username", "none")), passive(str("password", "none")))
	}
	monTCP := &Kind{Words: []string{"ltm", "monitor", "tcp"}, Title: "Monitor", Help: "TCP monitor", Parent: "/Common/tcp", Props: withSendRecv(monitorCommon())}
	monHalf := &Kind{Words: []string{"ltm", "monitor", "tcp-half-open"}, Title: "Monitor", Help: "TCP half-open monitor", Parent: "/Common/tcp_half_open", Props: append(monitorCommon(), ed("transparent", "disabled"))}
	monHTTP := &Kind{Words: []string{"ltm", "monitor", "http"}, Title: "Monitor", Help: "HTTP monitor", Parent: "/Common/http", Props: withSendRecv(monitorCommon())}
	monICMP := &Kind{Words: []string{"ltm", "monitor", "gateway-icmp"}, Title: "Monitor", Help: "Gateway ICMP monitor", Parent: "/Common/gateway_icmp", Props: append(monitorCommon(), ed("transparent", "disabled"))}
	for _, p := range monHTTP.Props {
		if p.Name == "username" || p.Name == "password" {
			p.Passive = false // sent as Basic authorization
		}
	}
	for _, k := range []*Kind{monTCP, monHalf, monHTTP, monICMP} {
		k.Lower = "monitor"
		for _, p := range k.Props {
			if p.Name == "defaults-from" {
				p.Ref = []string{k.Key()}
			}
		}
	}

	profTCP := &Kind{Words: []string{"ltm", "profile", "tcp"}, Title: "Profile", Lower: "profile", Help: "TCP profile", Parent: "/Common/tcp", Props: []*Prop{
		ref("defaults-from", "ltm profile tcp"),
		str("description", "none"),
		help(num("idle-timeout", "300"), "seconds an idle flow is kept before both sides are reset"),
		help(enum("nagle", "disabled", "enabled", "disabled", "auto"), "enabled holds small writes while data is unacknowledged (TCP_NODELAY off); disabled and auto send at once"),
		help(ed("delayed-acks", "enabled"), "disabled sets TCP_QUICKACK when a connection starts (Linux drops back to delayed ACKs on its own later)"),
		passive(num("proxy-buffer-high", "49152")),
		passive(num("proxy-buffer-low", "32768")),
		help(bounded(num("receive-window-size", "65535"), 0, 1<<30), "bytes of SO_RCVBUF (Linux reports and uses twice that, up to net.core.rmem_max); left at the default, Linux autotunes"),
		help(bounded(num("send-buffer-size", "65535"), 0, 1<<30), "bytes of SO_SNDBUF (Linux reports and uses twice that, up to net.core.wmem_max); left at the default, Linux autotunes"),
		help(enum("congestion-control", "high-speed", "bbr", "cdg", "chd", "cubic", "high-speed", "illinois", "new-reno", "none", "reno", "scalable", "vegas", "westwood", "woodside"), "the Linux congestion control of the same algorithm, when the kernel has it loaded; left at the default, the system's"),
		help(ed("reset-on-timeout", "enabled"), "enabled resets both sides of an idle flow; disabled closes both with a FIN"),
		passive(str("app-service", "none")),
	}}
	profFastL4 := &Kind{Words: []string{"ltm", "profile", "fastl4"}, Title: "Profile", Lower: "profile", Help: "Fast L4 profile", Parent: "/Common/fastL4", Props: []*Prop{
		ref("defaults-from", "ltm profile fastl4"),
		str("description", "none"),
		num("idle-timeout", "300"),
		help(ed("reset-on-timeout", "enabled"), "enabled resets both sides of an idle flow; disabled closes both with a FIN"),
		passive(ed("loose-close", "disabled")),
		passive(ed("loose-initialization", "disabled")),
		passive(str("app-service", "none")),
	}}
	profHTTP := &Kind{Words: []string{"ltm", "profile", "http"}, Title: "Profile", Lower: "profile", Help: "HTTP profile", Parent: "/Common/http", Props: []*Prop{
		ref("defaults-from", "ltm profile http"),
		str("description", "none"),
		ed("insert-xforwarded-for", "disabled"),
		ed("accept-xff", "disabled"),
		help(&Prop{Name: "xff-alternative-names", Type: TList}, "with accept-xff, the headers read for the client address before X-Forwarded-For, in order"),
		ed("oneconnect-transformations", "enabled"),
		str("oneconnect-status-reuse", "200 206"),
		help(enum("proxy-type", "reverse", "reverse", "explicit", "transparent"), "explicit makes the virtual a forward proxy for clients that name the origin in each request, resolved with explicit-proxy's dns-resolver (no pool is used); transparent is served as reverse"),
		httpExplicitProxy(),
		help(str("server-agent-name", "BigIP"), "the Server header of the answers the system makes itself (HTTP::respond, fallback redirects); none sends none"),
		help(enum("request-chunking", "preserve", "preserve", "selective", "sustain", "rechunk", "unchunk"), "request bodies as they go to members: preserve, selective and sustain keep the client's framing (a changed body that came chunked stays chunked), rechunk sends them chunked, unchunk with a Content-Length"),
		help(enum("response-chunking", "selective", "preserve", "selective", "sustain", "rechunk", "unchunk"), "response bodies as they go to clients: preserve, selective and sustain keep the member's framing (a changed body that came chunked stays chunked), rechunk sends them chunked (HTTP/1.1 clients), unchunk with a Content-Length or ended by the close"),
		help(enum("redirect-rewrite", "none", "none", "all", "matching", "nodes"), "rewrite members' redirects: all, matching (the request's host) or nodes (a member's address, to the virtual's)"),
		help(str("fallback-host", "none"), "where a request no member can serve is redirected"),
		help(&Prop{Name: "fallback-status-codes", Type: TList, Inline: true}, "members' response codes (500, 502-504) answered with a redirect to fallback-host instead"),
		httpEnforcement(),
		help(str("header-insert", "none"), "a header (Name: value; several separated by \\r\\n) inserted into every request sent to a member"),
		help(str("header-erase", "none"), "a header removed from every request sent to a member"),
		help(str("lws-separator", "none"), `folds header-insert lines longer than lws-width at their spaces: a line end and spaces or tabs ("\r\n\t"), or none`),
		help(num("lws-width", "80"), "the columns a header-insert line may take before lws-separator folds it"),
		help(enum("via-request", "preserve", "preserve", "append", "remove"), "Via in requests to members: preserve, append (the proxy's own, with via-host-name) or remove"),
		help(enum("via-response", "preserve", "preserve", "append", "remove"), "Via in responses to clients: preserve, append or remove"),
		help(str("via-host-name", "none"), "the name in the Via fields the proxy appends (none: the system's host name)"),
		help(&Prop{Name: "response-headers-permitted", Type: TList, Inline: true}, "the only header fields a response keeps (none: all); the framing fields always stay"),
		help(&Prop{Name: "encrypt-cookies", Type: TList, Inline: true}, "cookies encrypted in the members' Set-Cookie and decrypted in the clients' Cookie"),
		help(str("encrypt-cookie-secret", "none"), "the pass phrase of encrypt-cookies (none: a random one per ltmd process)"),
		httpHSTS(),
		httpSFlow(), // kinds_sflow.go
		passive(str("app-service", "none")),
	}}
	profOC := &Kind{Words: []string{"ltm", "profile", "one-connect"}, Title: "Profile", Lower: "profile", Help: "OneConnect profile: server-side connection reuse", Parent: "/Common/oneconnect", Props: []*Prop{
		ref("defaults-from", "ltm profile one-connect"),
		str("description", "none"),
		help(str("idle-timeout-override", "disabled"), "seconds an idle pooled server connection is kept: disabled (the tcp profile's idle timeout), a number, or indefinite"),
		help(enum("limit-type", "none", "none", "idle", "strict"), "how pooled connections count toward a member's connection-limit: none (only busy ones), idle (all; an idle one is closed to make room), strict (all)"),
		help(num("max-age", "86400"), "seconds after which a server connection leaves the pool"),
		help(num("max-reuse", "1000"), "messages one server connection carries before it is retired"),
		help(num("max-size", "10000"), "server connections per member (openltm caps all of them, not only the idle ones)"),
		passive(ed("share-pools", "disabled")),
		help(str("source-mask", "any"), "clients whose server-side source addresses agree under this mask share connections; any: all clients"),
		passive(str("app-service", "none")),
	}}
	profMBLB := &Kind{Words: []string{"ltm", "profile", "mblb"}, Title: "Profile", Lower: "profile", Help: "Message-based load balancing profile", Parent: "/Common/mblb", Props: []*Prop{
		ref("defaults-from", "ltm profile mblb"),
		str("description", "none"),
		help(num("egress-high", "50"), "requests queued for one member connection above which the clients sending to it are no longer read; 0: no limit"),
		help(num("egress-low", "5"), "requests queued for that connection at or below which those clients are read again"),
		help(num("ingress-high", "50"), "one client's requests queued for members above which the client is no longer read; 0: no limit"),
		help(num("ingress-low", "5"), "the client's queued requests at or below which it is read again"),
		help(ed("isolate-abort", "enabled"), "enabled keeps a reset to its side (a member's reset sends its requests elsewhere); disabled passes it on: a member's reset resets the clients it carried, a client's its own member connections"),
		help(ed("isolate-client", "disabled"), "disabled passes a client's FIN on: its own member connections close with it; enabled keeps them open until they expire idle or the member closes them"),
		help(ed("isolate-expire", "enabled"), "enabled lets each side expire alone; disabled passes an idle expiry on: a client's closes its own member connections at once, such a connection's ends its client"),
		help(ed("isolate-server", "enabled"), "enabled keeps a member's FIN to the server side; disabled passes it on: the clients the connection carried are closed in order once answered (within shutdown-timeout)"),
		help(num("min-conn", "0"), "member connections kept open to each member of the default pool, opened ahead of need: shared with a one-connect profile (of source-mask any), else each taken by a client as its own"),
		help(num("shutdown-timeout", "5"), "seconds a member connection stays open for the answers still owed on it after its client has gone, or after a commit disabled or removed its member; 0 closes it at once"),
		passive(num("tag-ttl", "60")),
		passive(str("app-service", "none")),
		// openltm extension: how messages are found without an iRule, and
		// the engine's limits. BIG-IP frames only through TCP::notify.
		help(enum("framing", "rule", "rule", "per-read", "length", "delimiter"), "openltm extension: rule (the iRules' TCP::notify; one read per message without a CLIENT_DATA rule), per-read, length (a length field) or delimiter"),
		help(num("length-offset", "0"), "openltm extension: where the length field starts (framing length)"),
		help(enum("length-size", "4", "1", "2", "4", "8"), "openltm extension: bytes in the length field"),
		help(enum("length-byte-order", "big", "big", "little"), "openltm extension: the length field's byte order"),
		help(str("length-adjust", "0"), "openltm extension: added to the length field's value (may be negative)"),
		help(ed("length-includes-header", "disabled"), "openltm extension: enabled when the length counts the whole message, disabled when it counts the bytes after the field"),
		help(str("delimiter", "none"), "openltm extension: message terminator for framing delimiter, with \\n, \\r, \\t and \\xHH escapes"),
		help(num("max-message-size", "1048576"), "openltm extension: a larger message resets the client"),
		help(num("max-in-flight", "64"), "openltm extension: unanswered requests per client before it is no longer read"),
		help(ed("retry", "enabled"), "openltm extension: re-send a failed member's unanswered messages to another member; disable for requests that must never run twice"),
		help(num("response-timeout", "0"), "openltm extension: seconds without an answer before a member connection is failed; 0 waits"),
	}}

	persistCommon := func(parent string) []*Prop {
		return []*Prop{
			str("description", "none"),
			num("timeout", "180"),
			ed("match-across-pools", "disabled"),
			ed("match-across-services", "disabled"),
			ed("match-across-virtuals", "disabled"),
			ed("mirror", "disabled"),
			ed("override-connection-limit", "disabled"),
			passive(str("app-service", "none")),
		}
	}
	persSrc := &Kind{Words: []string{"ltm", "persistence", "source-addr"}, Title: "Persistence", Lower: "persistence", Help: "Source address persistence", Parent: "/Common/source_addr", Props: append(persistCommon(""),
		ref("defaults-from", "ltm persistence source-addr"),
		str("mask", "none"),
		enum("hash-algorithm", "default", "default", "carp"),
		help(ed("map-proxies", "enabled"), "clients in map-proxy-class persist as one"),
		help(str("map-proxy-address", "none"), "the key clients in map-proxy-class persist on (none: their network's address)"),
		help(ref("map-proxy-class", "ltm data-group internal"), "an address data group of proxy networks"),
	)}
	persCookie := &Kind{Words: []string{"ltm", "persistence", "cookie"}, Title: "Persistence", Lower: "persistence", Help: "Cookie persistence", Parent: "/Common/cookie", Props: append(persistCommon(""),
		ref("defaults-from", "ltm persistence cookie"),
		enum("method", "insert", "insert", "rewrite", "passive", "hash"),
		str("cookie-name", "none"),
		str("expiration", "0"),
		ed("httponly", "enabled"),
		ed("secure", "enabled"),
		ed("always-send", "disabled"),
		enum("cookie-encryption", "disabled", "disabled", "preferred", "required"),
		str("cookie-encryption-passphrase", "none"),
		ed("encrypt-cookie-poolname", "disabled"),
		num("hash-offset", "0"),
		num("hash-length", "0"),
	)}
	persUni := &Kind{Words: []string{"ltm", "persistence", "universal"}, Title: "Persistence", Lower: "persistence", Help: "Universal (iRule key) persistence", Parent: "/Common/universal", Props: append(persistCommon(""),
		ref("defaults-from", "ltm persistence universal"),
		ref("rule", "ltm rule"),
	)}

	rule := &Kind{Words: []string{"ltm", "rule"}, Title: "iRule", Lower: "iRule", Help: "iRules configuration", Props: []*Prop{
		{Name: "definition", Type: TTcl, Help: "the rule's Tcl body"},
	}}
	snatpool := &Kind{Words: []string{"ltm", "snatpool"}, Title: "SNAT Pool", Lower: "snatpool", Help: "Collections of SNAT translation addresses", Props: []*Prop{
		str("description", "none"),
		// A member is a translation address, or the name of an ltm
		// snat-translation standing for its address (BIG-IP allows both).
		{Name: "members", Type: TList, Format: "ip", Ref: []string{"ltm snat-translation"}, Help: "translation addresses, or names of ltm snat-translation objects"},
		passive(str("app-service", "none")),
	}}
	dg := &Kind{Words: []string{"ltm", "data-group", "internal"}, Title: "value list", Lower: "value list", Help: "Internal data group", Props: []*Prop{
		str("description", "none"),
		{Name: "records", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Record", Props: []*Prop{str("data", "")}}},
		enum("type", "string", "string", "ip", "integer"),
		passive(str("app-service", "none")),
	}}
	tmc := &Kind{Words: []string{"ltm", "traffic-matching-criteria"}, Title: "Traffic Matching Criteria", Lower: "traffic matching criteria", Help: "Traffic matching criteria (the addresses and ports a virtual server matches)", Props: []*Prop{
		str("description", "none"),
		str("destination-address-inline", "any"),
		ref("destination-address-list", "net address-list"),
		str("destination-port-inline", "any"),
		ref("destination-port-list", "net port-list"),
		str("source-address-inline", "0.0.0.0"),
		ref("source-address-list", "net address-list"),
		str("source-port-inline", "0"),
		ref("source-port-list", "net port-list"),
		enum("protocol", "tcp", "tcp", "udp", "any"),
		str("route-domain", "any"),
		passive(str("app-service", "none")),
	}}
	vaddr := &Kind{Words: []string{"ltm", "virtual-address"}, Title: "Virtual Address", Lower: "virtual address", Help: "Virtual server IP address configuration", Props: []*Prop{
		str("address", ""),
		passive(ed("arp", "enabled")),
		passive(str("mask", "255.255.255.255")),
		passive(str("route-advertisement", "disabled")),
		str("traffic-group", "/Common/traffic-group-1"),
		passive(str("icmp-echo", "enabled")),
		enum("auto-delete", "true", "true", "false"),
		enum("enabled", "yes", "yes", "no"),
		passive(ed("spanning", "disabled")),
		passive(str("server-scope", "any")),
		// The folder's traffic group, followed (CompleteTrafficGroups).
		enum("inherited-traffic-group", "false", "true", "false"),
		num("connection-limit", "0"),
		passive(str("floating", "enabled")),
		passive(str("app-service", "none")),
		passive(str("description", "none")),
	}}
	defNodeMon := &Kind{Words: []string{"ltm", "default-node-monitor"}, Title: "Default Node Monitor", Singleton: true, Help: "Monitor rule used by nodes with `monitor default`", Props: []*Prop{
		{Name: "rule", Type: TMonitor, Default: "none", Ref: []string{"ltm monitor "}},
	}}
	return []*Kind{virtual, pool, node, monTCP, monHalf, monHTTP, monICMP, profTCP, profFastL4, profHTTP, profOC, profMBLB, persSrc, persCookie, persUni, rule, snatpool, dg, tmc, vaddr, defNodeMon}
}
