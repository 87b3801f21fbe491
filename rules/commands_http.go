package rules

import (
	"encoding/base64"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/rules/tcl"
)

func registerHTTP(t *tcl.Commands) {
	t.Register("HTTP::header", cmdHTTPHeader)
	t.Register("HTTP::cookie", cmdHTTPCookie).Compile = unsupportedHook(1, "HTTP::cookie", "sanitize")
	t.Register("HTTP::host", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		h, err := httpRequestHead(in, args, "HTTP::host")
		if err != nil {
			return tcl.Empty, err
		}
		v, _ := h.Header("host")
		return in.StrBytes(v), nil // a repeated Host allocates nothing
	})
	t.Register("HTTP::method", httpReqGetter("HTTP::method", func(h *HTTPHead) tcl.Value { return tcl.Str(string(h.Method())) }))
	t.Register("HTTP::uri", httpURIPart("HTTP::uri", (*HTTPHead).URI, (*HTTPHead).SetURI))
	t.Register("HTTP::path", httpURIPart("HTTP::path", (*HTTPHead).Path, (*HTTPHead).SetPath))
	t.Register("HTTP::query", httpURIPart("HTTP::query", (*HTTPHead).Query, (*HTTPHead).SetQuery))
	t.Register("HTTP::version", cmdHTTPVersion)
	t.Register("HTTP::proxy", cmdHTTPProxy) // commands_httpproxy.go
	t.Register("HTTP::hsts", cmdHTTPHSTS)   // commands_hsts.go
	t.Register("HTTP::status", httpGetter("HTTP::status", true, func(h *HTTPHead) tcl.Value { return tcl.Int(int64(h.Status())) }))
	t.Register("HTTP::is_keepalive", httpGetter("HTTP::is_keepalive", false, func(h *HTTPHead) tcl.Value { return tcl.Bool(h.KeepAlive()) }))
	t.Register("HTTP::is_redirect", httpGetter("HTTP::is_redirect", true, func(h *HTTPHead) tcl.Value { return tcl.Bool(isRedirect(h.Status())) }))
	t.Register("HTTP::request", httpReqGetter("HTTP::request", func(h *HTTPHead) tcl.Value { return tcl.Str(h.String()) }))
	t.Register("HTTP::username", httpReqGetter("HTTP::username", func(h *HTTPHead) tcl.Value { u, _ := basicAuth(h); return tcl.Str(u) }))
	t.Register("HTTP::password", httpReqGetter("HTTP::password", func(h *HTTPHead) tcl.Value { _, p := basicAuth(h); return tcl.Str(p) }))
	t.Register("HTTP::request_num", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, hc, err := httpConn(in, "HTTP::request_num")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(hc.HTTPRequestNum())), nil
	})
	t.Register("HTTP::has_responded", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, hc, err := httpConn(in, "HTTP::has_responded")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Bool(s.respondedTo != 0 && s.respondedTo == hc.HTTPRequestNum()), nil
	})
	t.Register("HTTP::respond", cmdHTTPRespond)
	t.Register("HTTP::redirect", cmdHTTPRedirect)
	t.Register("HTTP::close", httpAction("HTTP::close", HTTPClose))
	t.Register("HTTP::release", httpAction("HTTP::release", HTTPRelease))
	t.Register("HTTP::enable", httpAction("HTTP::enable", HTTPEnable))
	t.Register("HTTP::disable", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, hc, err := httpConn(in, "HTTP::disable")
		if err != nil {
			return tcl.Empty, err
		}
		discard := len(args) == 2 && args[1].String() == "discard"
		if len(args) > 2 || (len(args) == 2 && !discard) {
			return tcl.Empty, tcl.WrongArgs("HTTP::disable ?discard?")
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: HTTPDisable, Enable: discard}))
	})
	t.Register("HTTP::collect", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, hc, err := httpConn(in, "HTTP::collect")
		if err != nil {
			return tcl.Empty, err
		}
		n := int64(-1)
		if len(args) == 2 {
			if n, err = args[1].Int64(); err != nil || n < 0 {
				return tcl.Empty, tcl.Errorf("HTTP::collect: bad length %q: expected a byte count", args[1].String())
			}
		} else if len(args) > 2 {
			return tcl.Empty, tcl.WrongArgs("HTTP::collect ?length?")
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: HTTPCollect, Length: int(n), Response: s.responseEvent()}))
	})
	t.Register("HTTP::payload", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, _, err := httpConn(in, "HTTP::payload")
		if err != nil {
			return tcl.Empty, err
		}
		side := ClientSide
		if s.responseEvent() {
			side = ServerSide
		}
		return payloadCmd(s.conn, side, "HTTP::payload", args)
	})
	t.Register("HTTP::retry", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, hc, err := httpConn(in, "HTTP::retry")
		if err != nil {
			return tcl.Empty, err
		}
		a := args[1:]
		reset := len(a) > 0 && a[0].String() == "-reset"
		if reset {
			a = a[1:]
		}
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("HTTP::retry ?-reset? request")
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: HTTPRetry, Data: tcl.BytesOf(a[0]), Reset: reset}))
	})
	t.Register("HTTP::fallback", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, hc, err := httpConn(in, "HTTP::fallback")
		if err != nil {
			return tcl.Empty, err
		}
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("HTTP::fallback host")
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: HTTPFallback, Text: args[1].String()}))
	})
	onOff := func(name string, k HTTPActionKind) {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			_, hc, err := httpConn(in, name)
			if err != nil {
				return tcl.Empty, err
			}
			if len(args) != 2 || (args[1].String() != "enable" && args[1].String() != "disable") {
				return tcl.Empty, tcl.WrongArgs(name + " enable|disable")
			}
			return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: k, Enable: args[1].String() == "enable"}))
		})
	}
	for _, on := range []bool{true, false} {
		name := map[bool]string{true: "NTLM::enable", false: "NTLM::disable"}[on]
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			_, hc, err := httpConn(in, name)
			if err != nil {
				return tcl.Empty, err
			}
			if len(args) != 1 {
				return tcl.Empty, tcl.WrongArgs(name)
			}
			return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: NTLMSwitch, Enable: on}))
		})
	}
	onOff("ONECONNECT::detach", OneConnectDetach)
	onOff("ONECONNECT::reuse", OneConnectReuse)
	t.Register("ONECONNECT::label", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		a := args[1:]
		if len(a) == 2 && a[0].String() == "update" {
			a = a[1:]
		}
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("ONECONNECT::label ?update? label")
		}
		if k, ok := oneConnectKeyer(in); ok {
			return tcl.Empty, tclErr(k.OneConnectLabel(a[0].String()))
		}
		_, hc, err := httpConn(in, "ONECONNECT::label")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: OneConnectLabel, Text: a[0].String()}))
	})
	t.Register("ONECONNECT::select", cmdOneConnectSelect) // commands_oneconnect.go
}

// httpConn returns the session and its HTTP connection, refusing HTTP::
// commands on a virtual server without an http profile.
func httpConn(in *tcl.Interp, cmd string) (*ConnState, HTTPConn, error) {
	s, c, err := sess(in, cmd)
	if err != nil {
		return nil, nil, err
	}
	hc, ok := c.(HTTPConn)
	if !ok {
		return nil, nil, tcl.Errorf("%s: the virtual server has no http profile", cmd)
	}
	return s, hc, nil
}

// responseEvent reports whether the running event is about the response,
// whose head HTTP:: commands then read and edit.
func (s *ConnState) responseEvent() bool {
	switch s.event {
	case HTTPResponse, HTTPResponseData, HTTPResponseContinue, HTTPResponseRelease,
		CacheResponse, CacheUpdate, // the cached answer, the member's answer to store
		HTTPProxyResponse,                         // the answer to a CONNECT
		AdaptResponseHeaders, AdaptResponseResult, // the member's answer after RESPMOD
		JSONResponse, JSONResponseMissing, JSONResponseError,
		HTMLTagMatched, HTMLCommentMatched,
		RewriteResponse, RewriteResponseDone: // the member's answer, mapped or about to be
		return true
	case ICAPRequest, ICAPResponse: // the encapsulated message: a response when there is one
		return s.icap != nil && s.icap.HTTPResponse != nil
	}
	return false
}

// httpHead finds the message an HTTP:: command works on: the response in
// response events, the request otherwise; wantResponse asks for the
// response even in request-side events that follow one.
func httpHead(in *tcl.Interp, cmd string, wantResponse bool) (*ConnState, HTTPConn, *HTTPHead, error) {
	s, hc, err := httpConn(in, cmd)
	if err != nil {
		return nil, nil, nil, err
	}
	var h *HTTPHead
	if wantResponse || s.responseEvent() {
		h = hc.HTTPResponse()
		if h == nil {
			return nil, nil, nil, tcl.Errorf("%s: there is no HTTP response in %s", cmd, s.event)
		}
	} else {
		h = hc.HTTPRequest()
		if h == nil {
			return nil, nil, nil, tcl.Errorf("%s: there is no HTTP request in %s", cmd, s.event)
		}
	}
	return s, hc, h, nil
}

func httpGetter(name string, response bool, get func(*HTTPHead) tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		_, _, h, err := httpHead(in, name, response)
		if err != nil {
			return tcl.Empty, err
		}
		return get(h), nil
	}
}

// httpReqGetter reads the request whatever the event.
func httpReqGetter(name string, get func(*HTTPHead) tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		h, err := httpRequestHead(in, args, name)
		if err != nil {
			return tcl.Empty, err
		}
		return get(h), nil
	}
}

// httpRequestHead is the request head a getter without arguments reads.
func httpRequestHead(in *tcl.Interp, args []tcl.Value, name string) (*HTTPHead, error) {
	if len(args) != 1 {
		return nil, tcl.WrongArgs(name)
	}
	_, hc, err := httpConn(in, name)
	if err != nil {
		return nil, err
	}
	h := hc.HTTPRequest()
	if h == nil {
		return nil, tcl.Errorf("%s: there is no HTTP request yet", name)
	}
	return h, nil
}

func httpAction(name string, k HTTPActionKind) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		_, hc, err := httpConn(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(hc.HTTPDo(HTTPAction{Kind: k}))
	}
}

// httpURIPart implements HTTP::uri, HTTP::path and HTTP::query: read,
// -normalized, or set (request events only).
func httpURIPart(name string, get func(*HTTPHead) []byte, set func(*HTTPHead, string)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, hc, err := httpConn(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		h := hc.HTTPRequest()
		if h == nil {
			return tcl.Empty, tcl.Errorf("%s: there is no HTTP request yet", name)
		}
		switch {
		case len(args) == 1:
			return in.StrBytes(get(h)), nil // a repeated path allocates nothing
		case len(args) == 2 && args[1].String() == "-normalized":
			return tcl.Str(normalizeHTTPTarget(string(get(h)))), nil
		case len(args) == 2:
			set(h, args[1].String())
			return tcl.Empty, nil
		}
		return tcl.Empty, tcl.WrongArgs(name + " ?-normalized | value?")
	}
}

// normalizeHTTPTarget decodes percent-encoded unreserved characters and
// removes dot segments from the path, as BIG-IP's -normalized forms do.
func normalizeHTTPTarget(u string) string {
	path, query, hasQ := strings.Cut(u, "?")
	var b strings.Builder
	for i := 0; i < len(path); i++ {
		if path[i] == '%' && i+2 < len(path) {
			hi, ok1 := unhex(path[i+1])
			lo, ok2 := unhex(path[i+2])
			c := hi<<4 | lo
			if ok1 && ok2 && (c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~') {
				b.WriteByte(c)
				i += 2
				continue
			}
		}
		b.WriteByte(path[i])
	}
	var out []string
	segs := strings.Split(b.String(), "/")
	for i, seg := range segs {
		switch seg {
		case ".":
			if i == len(segs)-1 {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if i == len(segs)-1 {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	p := strings.Join(out, "/")
	if strings.HasPrefix(u, "/") && !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	if hasQ {
		return p + "?" + query
	}
	return p
}

// HTTPClientVersion is implemented by an HTTPConn whose client speaks
// another HTTP version than the head the rules read says: an HTTP/2
// client, whose streams reach the rules as HTTP/1.1 requests through
// the http2 profile's gateway ("2.0"), or an HTTP/3 client through the
// http3 profile's ("3.0"). HTTP::version answers it for requests ("" for
// none).
type HTTPClientVersion interface {
	HTTPClientVersion() string
}

func cmdHTTPVersion(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, hc, h, err := httpHead(in, "HTTP::version", false)
	if err != nil {
		return tcl.Empty, err
	}
	switch len(args) {
	case 1:
		if cv, ok := hc.(HTTPClientVersion); ok && !h.IsResponse() {
			if v := cv.HTTPClientVersion(); v != "" {
				return tcl.Str(v), nil
			}
		}
		return tcl.Str(string(h.Version())), nil
	case 2:
		v := args[1].String()
		if v != "1.0" && v != "1.1" {
			return tcl.Empty, tcl.Errorf("HTTP::version: bad version %q: must be 1.0 or 1.1", v)
		}
		h.SetVersion(v)
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs("HTTP::version ?1.0|1.1?")
}

func isRedirect(code int) bool {
	switch code {
	case 301, 302, 303, 305, 307, 308:
		return true
	}
	return false
}

// basicAuth reads the user and password of an Authorization: Basic header.
func basicAuth(h *HTTPHead) (user, pass string) {
	v, ok := h.Header("authorization")
	if !ok || len(v) < 6 || !foldEq(v[:6], "basic ") {
		return "", ""
	}
	dec, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(v[6:])))
	if err != nil {
		return "", ""
	}
	user, pass, _ = strings.Cut(string(dec), ":")
	return user, pass
}

// cmdHTTPHeader implements HTTP::header in all of F5's forms.
func cmdHTTPHeader(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::header ?value? name | values name | names | count ?name? | at index | exists name | insert ?lws? name value ... | replace name ?value? | remove name | sanitize ?name ...? | is_keepalive | is_redirect")
	}
	sub := args[1].String()
	if sub == "insert_modssl_fields" {
		return tcl.Empty, tcl.Errorf("HTTP::header insert_modssl_fields: not supported: openltm has no client SSL session to take the mod_ssl fields from")
	}
	_, _, h, err := httpHead(in, "HTTP::header", false)
	if err != nil {
		return tcl.Empty, err
	}
	a := args[2:]
	need := func(n int, usage string) error {
		if len(a) != n {
			return tcl.WrongArgs("HTTP::header " + usage)
		}
		return nil
	}
	switch sub {
	case "value":
		if err := need(1, "value name"); err != nil {
			return tcl.Empty, err
		}
		v, _ := h.Header(a[0].String())
		return tcl.Str(string(v)), nil
	case "values":
		if err := need(1, "values name"); err != nil {
			return tcl.Empty, err
		}
		name := a[0].String()
		var out []tcl.Value
		for i := 0; i < h.NumFields(); i++ {
			if n, v, ok := h.Field(i); ok && foldEq(n, name) {
				out = append(out, tcl.Str(string(v)))
			}
		}
		return tcl.List(out...), nil
	case "names":
		if err := need(0, "names"); err != nil {
			return tcl.Empty, err
		}
		out := make([]tcl.Value, 0, h.NumFields())
		for i := 0; i < h.NumFields(); i++ {
			if n, _, ok := h.Field(i); ok {
				out = append(out, tcl.Str(string(n)))
			}
		}
		return tcl.List(out...), nil
	case "count":
		if len(a) > 1 {
			return tcl.Empty, tcl.WrongArgs("HTTP::header count ?name?")
		}
		name := ""
		if len(a) == 1 {
			name = a[0].String()
		}
		return tcl.Int(int64(h.HeaderCount(name))), nil
	case "at":
		if err := need(1, "at index"); err != nil {
			return tcl.Empty, err
		}
		idx, err := a[0].Int64()
		if err != nil {
			return tcl.Empty, err
		}
		for i, k := 0, int64(0); i < h.NumFields(); i++ {
			if n, _, ok := h.Field(i); ok {
				if k == idx {
					return tcl.Str(string(n)), nil
				}
				k++
			}
		}
		return tcl.Empty, nil
	case "exists":
		if err := need(1, "exists name"); err != nil {
			return tcl.Empty, err
		}
		_, ok := h.Header(a[0].String())
		return tcl.Bool(ok), nil
	case "insert":
		if len(a) > 0 && a[0].String() == "lws" {
			a = a[1:] // line folding is obsolete (RFC 9112): values stay on one line
		}
		if len(a) == 1 {
			l, err := tcl.AsList(a[0])
			if err != nil {
				return tcl.Empty, err
			}
			a = l
		}
		if len(a) == 0 || len(a)%2 != 0 {
			return tcl.Empty, tcl.WrongArgs("HTTP::header insert ?lws? name value ?name value ...?")
		}
		for i := 0; i < len(a); i += 2 {
			if err := checkHeader(a[i].String(), a[i+1].String()); err != nil {
				return tcl.Empty, err
			}
		}
		for i := 0; i < len(a); i += 2 {
			h.InsertHeader(a[i].String(), a[i+1].String())
		}
		return tcl.Empty, nil
	case "replace":
		if len(a) != 1 && len(a) != 2 {
			return tcl.Empty, tcl.WrongArgs("HTTP::header replace name ?value?")
		}
		v := ""
		if len(a) == 2 {
			v = a[1].String()
		}
		if err := checkHeader(a[0].String(), v); err != nil {
			return tcl.Empty, err
		}
		h.ReplaceHeader(a[0].String(), v)
		return tcl.Empty, nil
	case "remove":
		if err := need(1, "remove name"); err != nil {
			return tcl.Empty, err
		}
		h.RemoveHeader(a[0].String())
		return tcl.Empty, nil
	case "sanitize":
		keep := make([]string, len(a))
		for i, v := range a {
			keep[i] = v.String()
		}
		h.Sanitize(keep)
		return tcl.Empty, nil
	case "is_keepalive":
		return tcl.Bool(h.KeepAlive()), nil
	case "is_redirect":
		return tcl.Bool(isRedirect(h.Status())), nil
	}
	if len(a) != 0 {
		return tcl.Empty, tcl.Errorf("bad HTTP::header option %q: must be value, values, names, count, at, exists, insert, replace, remove, sanitize, is_keepalive, is_redirect or a header name", sub)
	}
	v, _ := h.Header(sub)
	return tcl.Str(string(v)), nil
}

// checkHeader refuses a header a peer would misread: a name that is not
// a token, or a value with a line break (header injection).
func checkHeader(name, value string) error {
	if name == "" {
		return tcl.Errorf("HTTP::header: empty header name")
	}
	if !httpx.IsToken(name) {
		return tcl.Errorf("HTTP::header: bad header name %q: must be an HTTP token", name)
	}
	if strings.ContainsAny(value, "\r\n\x00") {
		return tcl.Errorf("HTTP::header: the value of %s holds a line break", name)
	}
	return nil
}

// cmdHTTPCookie implements HTTP::cookie: names, count, exists, value,
// insert, remove, and the Set-Cookie attributes of a response.
func cmdHTTPCookie(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::cookie ?value? name ?value? | names | count | exists name | insert name N value V ?path P? ?domain D? ?version V? | remove name | path|domain|version|expires|secure|httponly|maxage|comment|commenturl name ?value?")
	}
	_, _, h, err := httpHead(in, "HTTP::cookie", false)
	if err != nil {
		return tcl.Empty, err
	}
	sub := args[1].String()
	a := args[2:]
	switch sub {
	case "names":
		names := h.CookieNames()
		out := make([]tcl.Value, len(names))
		for i, n := range names {
			out[i] = tcl.Str(n)
		}
		return tcl.List(out...), nil
	case "count":
		return tcl.Int(int64(len(h.CookieNames()))), nil
	case "exists":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("HTTP::cookie exists name")
		}
		_, ok := h.Cookie(a[0].String())
		return tcl.Bool(ok), nil
	case "remove":
		if len(a) != 1 {
			return tcl.Empty, tcl.WrongArgs("HTTP::cookie remove name")
		}
		h.RemoveCookie(a[0].String())
		return tcl.Empty, nil
	case "insert":
		return tcl.Empty, cookieInsert(h, a)
	case "encrypt", "decrypt":
		return cookieCrypt(h, sub, a) // http_cookie_crypt.go
	case "sanitize":
		return tcl.Empty, tcl.Errorf("HTTP::cookie %s: not implemented yet", sub)
	case "attribute":
		return cookieAttribute(h, a)
	case "value":
		if len(a) == 0 || len(a) > 2 {
			return tcl.Empty, tcl.WrongArgs("HTTP::cookie value name ?value?")
		}
		return cookieValue(h, a)
	case "path", "domain", "version", "expires", "maxage", "comment", "commenturl", "secure", "httponly", "ports":
		if !h.IsResponse() {
			if sub == "version" && len(a) == 1 {
				if _, ok := h.Cookie(a[0].String()); ok {
					return tcl.Int(0), nil
				}
				return tcl.Empty, nil
			}
			return tcl.Empty, tcl.Errorf("HTTP::cookie %s: cookie attributes are only in responses (Set-Cookie)", sub)
		}
		return cookieAttr(h, sub, a)
	}
	if len(a) > 1 {
		return tcl.Empty, tcl.Errorf("bad HTTP::cookie option %q: must be names, count, exists, value, insert, remove, path, domain, version, expires, maxage, comment, commenturl, secure, httponly or a cookie name", sub)
	}
	return cookieValue(h, args[1:])
}

// cookieAttribute: HTTP::cookie attribute NAME names | value ATTR |
// exists ATTR | insert ATTR ?VALUE? | remove ATTR, on Set-Cookie fields.
func cookieAttribute(h *HTTPHead, a []tcl.Value) (tcl.Value, error) {
	usage := "HTTP::cookie attribute name names | value attr | exists attr | insert attr ?value? | remove attr"
	if len(a) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	if !h.IsResponse() {
		return tcl.Empty, tcl.Errorf("HTTP::cookie attribute: cookie attributes are only in responses (Set-Cookie)")
	}
	name, op := a[0].String(), a[1].String()
	switch {
	case op == "names" && len(a) == 2:
		names, _ := h.CookieAttrNames(name)
		out := make([]tcl.Value, len(names))
		for i, n := range names {
			out[i] = tcl.Str(n)
		}
		return tcl.List(out...), nil
	case op == "value" && len(a) == 3:
		v, _, _ := h.CookieAttr(name, a[2].String())
		return tcl.Str(v), nil
	case op == "exists" && len(a) == 3:
		_, present, _ := h.CookieAttr(name, a[2].String())
		return tcl.Bool(present), nil
	case op == "remove" && len(a) == 3:
		h.SetCookieAttr(name, a[2].String(), "", false, true)
		return tcl.Empty, nil
	case op == "insert" && (len(a) == 3 || len(a) == 4):
		attr := a[2].String()
		v := ""
		if len(a) == 4 {
			v = a[3].String()
		}
		if attr == "" || strings.ContainsAny(attr, "\r\n;= ") || strings.ContainsAny(v, "\r\n;") {
			return tcl.Empty, tcl.Errorf("HTTP::cookie attribute insert: bad attribute %q", attr+"="+v)
		}
		h.AddCookieAttr(name, attr, v, len(a) == 3)
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

func cookieValue(h *HTTPHead, a []tcl.Value) (tcl.Value, error) {
	if len(a) == 2 {
		h.SetCookieValue(a[0].String(), a[1].String())
		return tcl.Empty, nil
	}
	v, _ := h.Cookie(a[0].String())
	return tcl.Str(v), nil
}

func cookieInsert(h *HTTPHead, a []tcl.Value) error {
	if len(a)%2 != 0 {
		return tcl.WrongArgs("HTTP::cookie insert name N value V ?path P? ?domain D? ?version V?")
	}
	var name, value string
	var attrs []cookiePair
	hasName, hasValue := false, false
	for i := 0; i < len(a); i += 2 {
		v := a[i+1].String()
		if strings.ContainsAny(v, "\r\n;") && a[i].String() != "value" {
			return tcl.Errorf("HTTP::cookie insert: bad %s %q", a[i].String(), v)
		}
		switch k := a[i].String(); k {
		case "name":
			name, hasName = v, true
		case "value":
			if strings.ContainsAny(v, "\r\n") {
				return tcl.Errorf("HTTP::cookie insert: the value holds a line break")
			}
			value, hasValue = v, true
		case "path":
			attrs = append(attrs, cookiePair{"path", v})
		case "domain":
			attrs = append(attrs, cookiePair{"domain", v})
		case "version":
			if v != "0" && v != "1" && v != "2" {
				return tcl.Errorf("HTTP::cookie insert: bad version %q: must be 0, 1 or 2", v)
			}
			if v != "0" {
				attrs = append(attrs, cookiePair{"Version", v})
			}
		default:
			return tcl.Errorf("HTTP::cookie insert: bad option %q: must be name, value, path, domain or version", k)
		}
	}
	if !hasName || !hasValue || name == "" {
		return tcl.WrongArgs("HTTP::cookie insert name N value V ?path P? ?domain D? ?version V?")
	}
	h.insertCookie(name, value, attrs)
	return nil
}

// cookieAttr reads or sets one Set-Cookie attribute.
func cookieAttr(h *HTTPHead, attr string, a []tcl.Value) (tcl.Value, error) {
	if len(a) == 0 || len(a) > 3 {
		return tcl.Empty, tcl.WrongArgs("HTTP::cookie " + attr + " name ?value?")
	}
	name := a[0].String()
	key := map[string]string{"maxage": "Max-Age", "commenturl": "CommentURL", "ports": "Port", "httponly": "HttpOnly", "secure": "Secure",
		"path": "Path", "domain": "Domain", "version": "Version", "expires": "Expires", "comment": "Comment"}[attr]
	if len(a) == 1 {
		v, present, _ := h.CookieAttr(name, key)
		switch attr {
		case "secure", "httponly":
			if present {
				return tcl.Str("enable"), nil
			}
			return tcl.Str("disable"), nil
		case "version":
			if !present {
				return tcl.Int(0), nil
			}
		}
		return tcl.Str(v), nil
	}
	v := a[1].String()
	switch attr {
	case "secure", "httponly":
		if v != "enable" && v != "disable" {
			return tcl.Empty, tcl.Errorf("HTTP::cookie %s: must be enable or disable", attr)
		}
		h.SetCookieAttr(name, key, "", true, v == "disable")
	case "expires":
		secs, err := a[1].Int64()
		if err != nil {
			return tcl.Empty, tcl.Errorf("HTTP::cookie expires: bad time %q: expected seconds", v)
		}
		abs := len(a) == 3 && a[2].String() == "absolute"
		if len(a) == 3 && !abs && a[2].String() != "relative" {
			return tcl.Empty, tcl.Errorf("HTTP::cookie expires: must be absolute or relative")
		}
		at := tcl.Now().Unix() + secs
		if abs {
			at = secs
		}
		h.SetCookieAttr(name, key, httpDate(at), false, false)
	default:
		if strings.ContainsAny(v, "\r\n;") {
			return tcl.Empty, tcl.Errorf("HTTP::cookie %s: bad value %q", attr, v)
		}
		h.SetCookieAttr(name, key, v, false, attr == "version" && v == "0")
	}
	return tcl.Empty, nil
}

func httpDate(unix int64) string { return time.Unix(unix, 0).UTC().Format(http.TimeFormat) }

// cmdHTTPRespond: HTTP::respond ?-reset? status ?-version 1.0|1.1|auto?
// ?content body? ?noserver? ?header value ...?
func cmdHTTPRespond(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, hc, err := httpConn(in, "HTTP::respond")
	if err != nil {
		return tcl.Empty, err
	}
	a := args[1:]
	r := respondSpec{}
	if len(a) > 0 && a[0].String() == "-reset" {
		r.reset = true
		a = a[1:]
	}
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs("HTTP::respond ?-reset? status ?-version 1.0|1.1|auto? ?content body? ?noserver? ?header value ...?")
	}
	code, err := a[0].Int64()
	if err != nil || code < 100 || code > 999 {
		return tcl.Empty, tcl.Errorf("HTTP::respond: bad status %q: expected a code from 100 to 999", a[0].String())
	}
	r.status = int(code)
	a = a[1:]
	for len(a) > 0 {
		switch a[0].String() {
		case "-version":
			if len(a) < 2 {
				return tcl.Empty, tcl.Errorf("HTTP::respond: -version needs 1.0, 1.1 or auto")
			}
			switch v := a[1].String(); v {
			case "1.0", "1.1", "auto":
				r.version = v
			default:
				return tcl.Empty, tcl.Errorf("HTTP::respond: bad version %q: must be 1.0, 1.1 or auto", v)
			}
			a = a[2:]
			continue
		case "content":
			if len(a) < 2 {
				return tcl.Empty, tcl.Errorf("HTTP::respond: content needs a body")
			}
			r.body = tcl.BytesOf(a[1])
			a = a[2:]
			continue
		case "noserver":
			r.noserver = true
			a = a[1:]
			continue
		}
		if len(a) == 1 {
			// One list of header/value pairs, as rules build them.
			l, err := tcl.AsList(a[0])
			if err != nil || len(l)%2 != 0 {
				return tcl.Empty, tcl.Errorf("HTTP::respond: header %q has no value", a[0].String())
			}
			a = l
			if len(a) == 0 {
				break
			}
		}
		if err := checkHeader(a[0].String(), a[1].String()); err != nil {
			return tcl.Empty, err
		}
		r.headers = append(r.headers, a[0].String(), a[1].String())
		a = a[2:]
	}
	return tcl.Empty, respond(s, hc, r)
}

// cmdHTTPRedirect: HTTP::redirect url sends a 302 with Location.
func cmdHTTPRedirect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, hc, err := httpConn(in, "HTTP::redirect")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("HTTP::redirect url")
	}
	if err := checkHeader("Location", args[1].String()); err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, respond(s, hc, respondSpec{status: 302, headers: []string{"Location", args[1].String()}})
}

type respondSpec struct {
	status   int
	version  string
	body     []byte
	noserver bool
	reset    bool
	headers  []string
}

// appendQuoted appends s as the inside of an HTTP quoted-string: a
// quote or a backslash gets a backslash before it.
func appendQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] == '"' || s[i] == '\\' {
			b = append(b, '\\')
		}
		b = append(b, s[i])
	}
	return b
}

// respond builds the response a rule sends and hands it over, as F5
// documents HTTP::respond: HTTP/1.0 unless -version says otherwise (auto:
// the request's version); "Server: BigIP" unless noserver; a Content-Length
// computed from the content, replacing one the rule gives; a 401 without
// WWW-Authenticate gets `Basic realm="REALM"`, REALM the http profile's
// basic-auth-realm (empty by default). The client connection stays open
// when the request is keep-alive and the rule sends no Connection: close
// (Connection: Keep-Alive then tells an HTTP/1.0 client so), and is closed
// after the response otherwise. A second response to one request is an
// error, as on BIG-IP.
func respond(s *ConnState, hc HTTPConn, r respondSpec) error {
	num := hc.HTTPRequestNum()
	if s.respondedTo != 0 && s.respondedTo == num {
		return tcl.Errorf("Operation not supported. Multiple redirect/respond invocations not supported")
	}
	req := hc.HTTPRequest()
	keep := req != nil && req.KeepAlive()
	version := "1.0"
	switch r.version {
	case "1.1":
		version = "1.1"
	case "auto":
		if req != nil {
			version = string(req.Version())
		}
	}
	hasConn, hasAuth := false, false
	for i := 0; i < len(r.headers); i += 2 {
		switch strings.ToLower(r.headers[i]) {
		case "connection":
			hasConn = true
			if strings.Contains(strings.ToLower(r.headers[i+1]), "close") {
				keep = false
			}
		case "www-authenticate":
			hasAuth = true
		}
	}
	b := make([]byte, 0, 128+len(r.body))
	b = append(b, "HTTP/"...)
	b = append(b, version...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(r.status), 10)
	b = append(b, ' ')
	b = append(b, http.StatusText(r.status)...)
	b = append(b, "\r\n"...)
	for i := 0; i < len(r.headers); i += 2 {
		if strings.EqualFold(r.headers[i], "content-length") {
			continue
		}
		b = append(b, r.headers[i]...)
		b = append(b, ": "...)
		b = append(b, r.headers[i+1]...)
		b = append(b, "\r\n"...)
	}
	if r.status == 401 && !hasAuth {
		b = append(b, "WWW-Authenticate: Basic realm=\""...)
		if ar, ok := hc.(HTTPBasicAuthRealm); ok {
			b = appendQuoted(b, ar.HTTPBasicAuthRealm())
		}
		b = append(b, "\"\r\n"...)
	}
	if !r.noserver {
		agent := "BigIP"
		if sa, ok := hc.(HTTPServerAgent); ok {
			agent = sa.HTTPServerAgent()
		}
		if agent != "" {
			b = append(b, "Server: "...)
			b = append(b, agent...)
			b = append(b, "\r\n"...)
		}
	}
	if !hasConn {
		if keep {
			b = append(b, "Connection: Keep-Alive\r\n"...)
		} else {
			b = append(b, "Connection: close\r\n"...)
		}
	}
	b = append(b, "Content-Length: "...)
	b = strconv.AppendInt(b, int64(len(r.body)), 10)
	b = append(b, "\r\n"...)
	b = append(b, "\r\n"...)
	if req == nil || !req.Head().IsHead() || s.responseEvent() {
		// The answer to HEAD has the Content-Length of the body it would
		// carry, and no body.
		b = append(b, r.body...)
	}
	if err := hc.HTTPDo(HTTPAction{Kind: HTTPRespond, Status: r.status, Data: b, KeepAlive: keep && !r.reset, Reset: r.reset}); err != nil {
		return tclErr(err)
	}
	s.respondedTo = num
	return nil
}
