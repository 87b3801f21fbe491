package objects

// The words of a local traffic policy's conditions and actions. BIG-IP
// writes each condition and action as a numbered block of words, one per
// line: flags (`http-uri`, `path`, `starts-with`) and a few named values
// (`name X-Tenant`, `values { /api }`, `pool /Common/api`). Each group of
// flags below is one property whose words exclude each other; the
// policy compiler (rules/policy) decides which combinations openltm runs,
// which it keeps without running, and which BIG-IP refuses.

// policyConditionOperands are the things a condition reads.
var policyConditionOperands = []string{
	"http-uri", "http-host", "http-header", "http-cookie", "http-method",
	"http-version", "http-referer", "http-user-agent", "http-status",
	"http-set-cookie", "http-basic-auth", "tcp", "client-ssl", "ssl-extension",
	"ssl-cert", "geoip", "cpu-usage", "l7dos",
}

// policyEvents are the moments a condition is read or an action runs.
var policyEvents = []string{
	"request", "response", "proxy-request", "proxy-response", "proxy-connect",
	"client-accepted", "server-connected", "ssl-client-hello",
	"ssl-server-hello", "ssl-client-serverhello-send", "ssl-server-handshake",
	"ws-request", "ws-response", "classification-detected",
}

var policyConditionSelectors = []string{
	"all", "host", "path", "extension", "query-string", "query-parameter",
	"path-segment", "scheme", "port", "unnamed-query-parameter", "address",
	"route-domain", "vlan", "vlan-id", "mss", "rtt", "major", "minor",
	"protocol", "code", "text", "version", "cipher", "cipher-bits",
	"server-name", "username", "password", "browser-type", "browser-version",
	"device-make", "device-model", "country-code", "country-name",
	"continent", "region-code", "region-name", "org", "isp", "common-name",
	"subject", "issuer", "last-15secs", "last-1min", "last-5mins", "domain",
	"expiry", "user-agent-token", "value",
}

var policyOperators = []string{
	"equals", "starts-with", "ends-with", "contains", "matches", "less",
	"greater", "less-or-equal", "greater-or-equal", "exists", "missing",
}

var policyActionOperands = []string{
	"forward", "http-reply", "http-header", "http-uri", "http-host",
	"http-cookie", "http-set-cookie", "http-referer", "http-basic-auth", "log",
	"tcl", "drop", "shutdown", "persist", "http", "asm", "compress",
	"decompress", "cache", "server-ssl", "client-ssl", "l7dos",
	"request-adapt", "response-adapt", "tcp-nagle", "ltm-policy", "websocket",
	"avr", "classification", "classify", "pem", "wam", "bot-defense",
}

var policyActionVerbs = []string{
	"select", "reset", "redirect", "insert", "remove", "replace", "write",
	"set-variable", "enable", "disable", "connection", "source-address",
	"destination-address", "cookie-insert", "cookie-passive",
	"cookie-rewrite", "cookie-hash", "universal", "hash", "carp", "uie",
	"ssl-session-id", "defer", "pin",
}

func flags(name string, words []string) *Prop {
	return &Prop{Name: name, Type: TFlag, Enum: append([]string{""}, words...)}
}

// policyConditionKind is one numbered condition of a policy rule.
func policyConditionKind() *Kind {
	return &Kind{Title: "Condition", Ordered: true, Props: []*Prop{
		help(flags("operand", policyConditionOperands), "what the condition reads"),
		help(flags("event", policyEvents), "when it is read (request unless said)"),
		help(flags("selector", policyConditionSelectors), "which part of the operand"),
		help(str("name", ""), "the header, cookie or query parameter read"),
		help(num("index", ""), "the path segment read, from 1"),
		help(flags("side", []string{"remote", "local"}), "tcp: the client's side (remote) or the virtual's (local)"),
		passive(flags("place", []string{"external", "internal"})),
		passive(flags("presence", []string{"present"})),
		help(flags("case", []string{"case-insensitive", "case-sensitive"}), "case-insensitive unless said"),
		help(flags("not", []string{"not"}), "the condition holds when the operator does not"),
		help(flags("operator", policyOperators), "equals unless said"),
		help(&Prop{Name: "datagroup", Type: TRef, Ref: []string{"ltm data-group "}}, "data group whose keys are the values"),
		help(&Prop{Name: "values", Type: TList, Inline: true}, "values compared; the condition holds if one does"),
	}}
}

// policyActionKind is one numbered action of a policy rule.
func policyActionKind() *Kind {
	k := &Kind{Title: "Action", Ordered: true, Props: []*Prop{
		help(flags("operand", policyActionOperands), "what the action does"),
		help(flags("event", policyEvents), "when it runs (request unless said)"),
		help(flags("verb", policyActionVerbs), "how"),
		help(&Prop{Name: "pool", Type: TRef, Ref: []string{"ltm pool"}}, "forward select: the pool"),
		help(str("node", ""), "forward select: the node's address"),
		help(str("member", ""), "forward select: a member address:port"),
		help(&Prop{Name: "virtual", Type: TRef, Ref: []string{"ltm virtual"}}, "forward select: another virtual server"),
		help(str("snat", ""), "forward select: a SNAT address"),
		help(&Prop{Name: "snatpool", Type: TRef, Ref: []string{"ltm snatpool"}}, "forward select: a SNAT pool"),
		help(str("location", ""), "http-reply redirect: the Location (tcl: for a Tcl expression)"),
		help(str("name", ""), "the header, cookie or variable"),
		help(str("value", ""), "the new value (tcl: for a Tcl expression)"),
		help(str("path", ""), "http-uri replace: the new path"),
		help(str("query-string", ""), "http-uri replace: the new query string"),
		help(str("message", ""), "log write: the message"),
		help(str("expression", ""), "tcl set-variable: the value"),
		help(num("timeout", ""), "persist: the record's timeout in seconds"),
		passive(str("policy", "")),
		passive(str("facility", "")),
		passive(str("priority", "")),
	}}
	// The other named values of F5's actions, kept for what openltm does
	// not run (persistence, compression, ASM, PEM, ...).
	for _, n := range []string{"application", "category", "clone-pool", "code", "content", "domain", "expiry",
		"expiry-secs", "extension", "from-profile", "host", "ifile", "internal-virtual", "ip-address", "key",
		"length", "netmask", "nexthop", "offset", "port", "profile", "protocol", "rateclass", "scheme",
		"script", "status", "text", "vlan", "vlan-id"} {
		p := passive(str(n, ""))
		if n == "rateclass" { // forward select rateclass runs (rules/policy/actions.go)
			p.Passive, p.Help = false, "forward select: the rate class the connection joins (net rate-shaping class)"
		}
		k.Props = append(k.Props, p)
	}
	return k
}

// policyKind is `ltm policy`: a local traffic policy, drafted in a
// folder's Drafts subfolder, published, and attached to virtual servers.
func policyKind() *Kind {
	rule := &Kind{Title: "Rule", Props: []*Prop{
		help(num("ordinal", "0"), "place of the rule in the policy, lowest first"),
		str("description", "none"),
		help(&Prop{Name: "conditions", Type: TColl, Sub: policyConditionKind()}, "numbered conditions, all of which must hold"),
		help(&Prop{Name: "actions", Type: TColl, Sub: policyActionKind()}, "numbered actions run when the rule matches"),
		passive(str("app-service", "none")),
	}}
	return &Kind{Words: []string{"ltm", "policy"}, Title: "Policy", Help: "Local traffic policy", Props: []*Prop{
		help(&Prop{Name: "controls", Type: TList, Inline: true}, "what the policy's actions control (forwarding, ...)"),
		help(&Prop{Name: "requires", Type: TList, Inline: true}, "the profiles the policy needs on a virtual (http, tcp, ...)"),
		help(&Prop{Name: "strategy", Type: TRef, Default: "/Common/first-match", Ref: []string{"ltm policy-strategy"}}, "which matching rule acts: first-match, all-match or best-match"),
		help(enum("status", "published", "published", "draft", "legacy"), "draft policies are in a Drafts folder and cannot be attached"),
		ro(str("last-modified", "")),
		str("description", "none"),
		help(&Prop{Name: "rules", Type: TColl, Sub: rule}, "the policy's rules"),
		passive(str("app-service", "none")),
		ro(str("reference", "")),
	}}
}
