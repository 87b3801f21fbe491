package objects

// Nested blocks of the kinds openltm runs, read as structures rather than
// kept as text: tmsh checks each setting where it is typed (with its line
// and column), completes and explains them, lists them one per line as
// BIG-IP does, and a child profile inherits each setting of its parent's
// block on its own.

// block is a TStruct property whose settings are sub.
func block(name, title, h string, sub ...*Prop) *Prop {
	return help(&Prop{Name: name, Type: TStruct, Sub: &Kind{Title: title, Props: sub}}, h)
}

// httpEnforcement is the http profile's enforcement block. The limits are
// enforced; the choices between rejecting and passing through are kept.
func httpEnforcement() *Prop {
	pt := func(name, def string) *Prop {
		return passive(enum(name, def, "allow", "pass-through", "reject"))
	}
	hdr := func(name string) *Prop { return passive(enum(name, "reject", "pass-through", "reject")) }
	return block("enforcement", "Enforcement",
		"max-header-size (32768), max-header-count (64) and max-requests (0: no limit) are enforced; the other settings are kept",
		hdr("excess-client-headers"),
		hdr("excess-server-headers"),
		passive(&Prop{Name: "known-methods", Type: TList, Inline: true, Default: "CONNECT,DELETE,GET,HEAD,LOCK,OPTIONS,POST,PROPFIND,PUT,TRACE,UNLOCK"}),
		help(&Prop{Name: "max-header-count", Type: TInt, Default: "64", Min: 1}, "header fields a request or response may have; one more is answered 400 (requests) or 502 (responses)"),
		help(&Prop{Name: "max-header-size", Type: TInt, Default: "32768", Min: 1}, "bytes a request's or response's header may take"),
		help(num("max-requests", "0"), "requests one client connection may carry (0: no limit)"),
		hdr("oversize-client-headers"),
		hdr("oversize-server-headers"),
		pt("pipeline", "allow"),
		passive(ed("rfc-compliance", "disabled")),
		passive(ed("allow-ws-header-name", "disabled")),
		passive(ed("truncated-redirects", "disabled")),
		pt("unknown-method", "allow"),
	)
}

// httpHSTS is the http profile's hsts block.
func httpHSTS() *Prop {
	return block("hsts", "HSTS",
		"mode enabled adds Strict-Transport-Security (maximum-age, include-subdomains, preload) to every response that has none",
		help(ed("mode", "disabled"), "enabled: add Strict-Transport-Security to responses that have none"),
		help(num("maximum-age", "16070400"), "the header's max-age, in seconds"),
		help(ed("include-subdomains", "enabled"), "add includeSubDomains"),
		help(ed("preload", "disabled"), "add preload"),
	)
}

// httpExplicitProxy is the http profile's explicit-proxy block.
func httpExplicitProxy() *Prop {
	msg := func(name, h string) *Prop { return help(str(name, "none"), h) }
	resolver := help(ref("dns-resolver", "net dns-resolver"), "the net dns-resolver that resolves the origins clients name (required with proxy-type explicit)")
	resolver.Checked = true
	return block("explicit-proxy", "Explicit Proxy",
		"with proxy-type explicit: dns-resolver (required), default-connect-handling allow|deny (CONNECT tunnels), ipv6, host-names (sent to the pool), and the error messages; route-domain, tunnel-name and tunnel-on-any-request are kept",
		msg("bad-request-message", "the error page for a request that cannot be read (none: openltm's)"),
		msg("bad-response-message", "the error page for an origin's answer that cannot be read (none: openltm's)"),
		msg("connect-error-message", "the error page when the origin cannot be reached (none: openltm's)"),
		help(enum("default-connect-handling", "deny", "deny", "allow"), "CONNECT tunnels: allow opens them to any origin, deny refuses them"),
		msg("dns-error-message", "the error page when the origin's name does not resolve (none: openltm's)"),
		resolver,
		msg("gateway-error-message", "the error page of the proxy's 504s (none: the case's own)"),
		help(&Prop{Name: "host-names", Type: TList}, "the proxy's own names: requests naming one go to the virtual's pool, not proxied"),
		help(enum("ipv6", "no", "no", "yes"), "yes: origins may be reached over IPv6 (AAAA answers)"),
		help(passive(str("route-domain", "none")), "kept: openltm has one routing table, so origins are reached from it"),
		msg("service-unavailable-message", "the error page when a request that is not proxied finds no pool member (none: openltm's)"),
		help(passive(str("tunnel-name", "none")), "kept: BIG-IP's http-tunnel (SWG), which openltm does not have"),
		help(passive(enum("tunnel-on-any-request", "no", "no", "yes")), "kept: goes with tunnel-name"),
	)
}

// fqdnBlock is a node's or a pool member's fqdn block.
func fqdnBlock() *Prop {
	return block("fqdn", "FQDN",
		"name the node follows (name, address-family, autopopulate, interval, down-interval)",
		help(enum("address-family", "ipv4", "ipv4", "ipv6"), "the records asked for: ipv4 (A) or ipv6 (AAAA)"),
		help(ed("autopopulate", "disabled"), "enabled: a member for every address the name resolves to; disabled: the first"),
		help(num("down-interval", "5"), "seconds between queries while the name does not resolve"),
		help(str("interval", "3600"), "seconds between queries, or ttl (the answer's)"),
		help(str("name", ""), "the fully qualified domain name"),
	)
}
