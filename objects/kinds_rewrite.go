package objects

// rewriteProfileKind is `ltm profile rewrite` (parents /Common/rewrite,
// /Common/rewrite-uri-translation and /Common/rewrite-portal), with the
// properties BIG-IP lists for it [M: rows and defaults as BIG-IP 14-17
// lists them, not read from a system]. openltm acts on the
// uri-translation mode: uri-rules (client and server URIs given by
// scheme, host, port and path), set-cookie-rules, the request and
// response blocks, rewrite-list and bypass-list; the portal mode is
// BIG-IP APM's and is kept with a warning (daemon), as are the Java
// signing and client caching settings.
func rewriteProfileKind() *Kind {
	k := actOn(profileKind("rewrite", "rewrite", `
bypass-list list -
client-caching-type enum cache-css-js cache-all|cache-css-js|cache-img-css-js|no-cache
java-ca-file str ca-bundle
java-crl str none
java-sign-key str default
java-sign-key-passphrase str none
java-signer str default
location-specific tf false
rewrite-list list -
rewrite-mode enum portal portal|uri-translation
split-tunneling tf false
`), "F5 ltm profile rewrite: rewrite-mode uri-translation makes the virtual a reverse proxy that maps client URIs to server URIs (uri-rules) in requests, redirects, cookies and HTML, CSS and JavaScript bodies",
		"bypass-list", "rewrite-mode", "uri-rules", "set-cookie-rules", "request", "response")
	uri := func(side string) *Prop {
		return block(side, "URI", "the "+side+"-side URI: scheme (http|https), host, port (none: the scheme's) and path (ending in /)",
			help(str("scheme", "none"), "http or https"),
			help(str("host", "none"), "the host name or address"),
			help(str("port", "none"), "the port, none for the scheme's own"),
			help(str("path", "/"), "the path prefix, beginning and ending with /"),
		)
	}
	cookie := func(side string) *Prop {
		return block(side, "Cookie", "the "+side+"-side cookie Domain and Path",
			help(str("domain", "none"), "the cookie's Domain (none: any)"),
			help(str("path", "none"), "the cookie's Path prefix (none: any)"),
		)
	}
	uriRules := help(&Prop{Name: "uri-rules", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "URI Rule", Props: []*Prop{
		help(enum("type", "both", "both", "request", "response"), "request: client to server only; response: server to client only; both"),
		uri("client"), uri("server"),
	}}}, "{ NAME { type both|request|response client { scheme host port path } server { ... } } }: requests for the client URI go to the server URI; the server URI in responses becomes the client URI")
	cookieRules := help(&Prop{Name: "set-cookie-rules", Type: TColl, Items: ItemPlain, Sub: &Kind{Title: "Set-Cookie Rule", Props: []*Prop{
		cookie("client"), cookie("server"),
	}}}, "{ NAME { client { domain path } server { domain path } }: the server's Set-Cookie Domain and Path become the client's")
	request := block("request", "Request", "insert-xfwd-for, insert-xfwd-host, insert-xfwd-protocol add X-Forwarded- fields; rewrite-headers rewrites Referer and Origin",
		help(ed("insert-xfwd-for", "enabled"), "add X-Forwarded-For with the client's address"),
		help(ed("insert-xfwd-host", "disabled"), "add X-Forwarded-Host with the client's Host"),
		help(ed("insert-xfwd-protocol", "enabled"), "add X-Forwarded-Proto with the client's scheme"),
		help(ed("rewrite-headers", "enabled"), "map the Referer and Origin the client sends to the server URI"),
	)
	response := block("response", "Response", "rewrite-content rewrites links in HTML, CSS and JavaScript; rewrite-headers rewrites Location, Content-Location, Refresh and Set-Cookie",
		help(ed("rewrite-content", "enabled"), "rewrite links in HTML, CSS and JavaScript bodies"),
		help(ed("rewrite-headers", "enabled"), "rewrite Location, Content-Location, Refresh and Set-Cookie"),
	)
	k.Props = append(k.Props, uriRules, cookieRules, request, response)
	return k
}
