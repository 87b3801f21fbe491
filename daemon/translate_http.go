package daemon

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/openltm/openltm/dataplane/cookiecrypt"
	"github.com/openltm/openltm/dataplane/httpx"
	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/objects"
	"github.com/openltm/openltm/rules"
)

// The http profile's settings the HTTP path acts on beyond XFF insertion
// and OneConnect's transformations (those are in translate_mblb.go).
var (
	httpAcceptXFF       = profileHTTP.MustProp("accept-xff")
	httpXFFNames        = profileHTTP.MustProp("xff-alternative-names")
	httpServerAgent     = profileHTTP.MustProp("server-agent-name")
	httpBasicAuthRealm  = profileHTTP.MustProp("basic-auth-realm")
	httpRedirectRewrite = profileHTTP.MustProp("redirect-rewrite")
	httpFallbackHost    = profileHTTP.MustProp("fallback-host")
	httpFallbackStatus  = profileHTTP.MustProp("fallback-status-codes")
	httpEnforcement     = profileHTTP.MustProp("enforcement")
	httpHeaderInsert    = profileHTTP.MustProp("header-insert")
	httpHeaderErase     = profileHTTP.MustProp("header-erase")
	httpLWSSeparator    = profileHTTP.MustProp("lws-separator")
	httpLWSWidth        = profileHTTP.MustProp("lws-width")
	httpHSTS            = profileHTTP.MustProp("hsts")
	httpEncryptCookies  = profileHTTP.MustProp("encrypt-cookies")
	httpCookieSecret    = profileHTTP.MustProp("encrypt-cookie-secret")
	httpViaRequest      = profileHTTP.MustProp("via-request")
	httpViaResponse     = profileHTTP.MustProp("via-response")
	httpViaHost         = profileHTTP.MustProp("via-host-name")
	httpRespPermitted   = profileHTTP.MustProp("response-headers-permitted")
)

// processCookieSecret is encrypt-cookies' pass phrase for a profile
// without encrypt-cookie-secret: random, one per ltmd process [M], so
// that such cookies do not survive a restart nor move to another device
// (a profile meant for a cluster gives a secret).
var processCookieSecret = sync.OnceValue(func() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b)
})

// httpProfileDetails fills what the engine applies of the http profile
// prof on the virtual o: accept-xff and its alternative names,
// server-agent-name, redirect-rewrite (to https behind client SSL),
// fallback-host and the enforcement limits. An unusable value is an
// error naming the setting.
func (t *translator) httpProfileDetails(o, prof *objects.Object, opts *mblb.HTTPOptions) error {
	get := func(p *objects.Prop) string { return p.Effective(t.cfg, prof) }
	opts.AcceptXFF = get(httpAcceptXFF) == "enabled"
	if v := t.cfg.Effective(prof, httpXFFNames.Name); v != nil {
		for _, n := range v.List {
			opts.XFFNames = append(opts.XFFNames, strings.ToLower(n))
		}
		if len(opts.XFFNames) > 0 {
			opts.XFFNames = append(opts.XFFNames, "x-forwarded-for")
		}
	}
	if sa := get(httpServerAgent); sa != "none" {
		opts.ServerAgent = sa
	}
	if realm := get(httpBasicAuthRealm); realm != "none" {
		if strings.ContainsAny(realm, "\r\n") {
			return fmt.Errorf("basic-auth-realm %q: a realm is one line", realm)
		}
		opts.BasicAuthRealm = realm
	}
	rr, ok := httpx.ParseRedirectRewrite(get(httpRedirectRewrite))
	if !ok {
		return fmt.Errorf("redirect-rewrite %q: must be all, matching, nodes or none", get(httpRedirectRewrite))
	}
	opts.RedirectRewrite = rr
	if err := httpChunking(get, opts); err != nil { // translate_http_chunking.go
		return err
	}
	opts.Scheme = "http"
	if t.profile(o, profileClientSSL) != nil {
		opts.Scheme = "https"
	}
	if fb := get(httpFallbackHost); fb != "none" && fb != "" {
		opts.Fallback = fb
	}
	if v := t.cfg.Effective(prof, httpFallbackStatus.Name); v != nil && len(v.List) > 0 {
		rs, err := objects.ParseStatusCodes(v.List)
		if err != nil {
			return err
		}
		opts.FallbackStatus = new(mblb.StatusSet)
		for _, r := range rs {
			opts.FallbackStatus.Add(r.Lo, r.Hi)
		}
	}
	lim, err := enforcementLimits(t.cfg.Effective(prof, httpEnforcement.Name))
	if err != nil {
		return err
	}
	opts.MaxHeaderSize, opts.MaxHeaderCount, opts.MaxRequests = lim.headerSize, lim.headerCount, lim.requests
	if opts.HeaderInsert, err = headerInsert(get(httpHeaderInsert)); err != nil {
		return err
	}
	if opts.HeaderInsert != nil {
		sep, err := objects.ParseLWSSeparator(get(httpLWSSeparator))
		if err != nil {
			return err
		}
		if sep != "" {
			opts.HeaderInsert = foldLines(opts.HeaderInsert, sep, atoi(get(httpLWSWidth)))
		}
	}
	if he := get(httpHeaderErase); he != "none" && he != "" {
		if !httpx.IsToken(he) {
			return fmt.Errorf("header-erase %q: not a header name", he)
		}
		opts.HeaderErase = strings.ToLower(he)
	}
	var hstsOn bool
	if opts.HSTSLine, hstsOn, err = hstsLine(t.cfg.Effective(prof, httpHSTS.Name)); err != nil {
		return err
	}
	if hstsOn {
		opts.HSTS = opts.HSTSLine
	}
	host := get(httpViaHost)
	if host == "none" || host == "" {
		host, _ = os.Hostname()
	}
	if strings.ContainsAny(host, "\r\n") {
		return fmt.Errorf("via-host-name %q: not a host name", host)
	}
	via := "Via: 1.1 " + host + "\r\n"
	switch get(httpViaRequest) {
	case "append":
		opts.HeaderInsert = append(opts.HeaderInsert, via...)
	case "remove":
		opts.DropRequestVia = true
	}
	var rf mblb.ResponseFields
	switch get(httpViaResponse) {
	case "append":
		opts.ResponseVia = []byte(via)
	case "remove":
		rf.DropVia = true
	}
	if v := t.cfg.Effective(prof, httpRespPermitted.Name); v != nil && len(v.List) > 0 {
		rf.Permitted = map[string]bool{}
		for _, n := range v.List {
			rf.Permitted[strings.ToLower(n)] = true
		}
	}
	if rf.DropVia || rf.Permitted != nil {
		opts.ResponseFields = &rf
	}
	if v := t.cfg.Effective(prof, httpEncryptCookies.Name); v != nil && len(v.List) > 0 {
		secret := get(httpCookieSecret)
		if secret == "none" || secret == "" {
			secret = processCookieSecret()
		}
		c, err := cookiecrypt.New(secret, 256)
		if err != nil {
			return err
		}
		for _, n := range v.List {
			if !httpx.IsToken(n) {
				return fmt.Errorf("encrypt-cookies %q: not a cookie name", n)
			}
		}
		opts.CookieCrypt = &mblb.CookieEncryption{Names: v.List, Cipher: c}
	}
	return nil
}

// headerInsert reads header-insert: one header, or several separated by
// CRLF (written \r\n in the configuration), each "Name: value"; the
// lines as they are added to a request. BIG-IP also evaluates iRule
// commands in brackets there; such a value is refused by
// headerInsertNotRun's caller before this runs.
func headerInsert(v string) ([]byte, error) {
	if v == "none" || v == "" {
		return nil, nil
	}
	var out []byte
	for _, line := range strings.Split(strings.ReplaceAll(v, `\r\n`, "\r\n"), "\r\n") {
		if line == "" {
			continue
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !httpx.IsToken(name) || strings.ContainsAny(value, "\r\n") {
			return nil, fmt.Errorf("header-insert %q: %q is not a header (Name: value)", v, line)
		}
		out = append(out, name+": "+strings.TrimSpace(value)+"\r\n"...)
	}
	return out, nil
}

// hstsLine is the Strict-Transport-Security line the hsts block's
// settings make, and whether its mode adds it (HTTP::hsts mode enable
// adds it while the mode is disabled). Its settings were checked as
// typed (enums, an integer), so only the range is left to check.
func hstsLine(v *objects.Value) ([]byte, bool, error) {
	f := subSettings(v)
	on := f["mode"] == "enabled"
	if f["maximum-age"] == "" {
		f["maximum-age"] = "16070400" // BIG-IP's default, for a block not set
	}
	if _, ok := f["include-subdomains"]; !ok {
		f["include-subdomains"] = "enabled"
	}
	age, err := strconv.ParseUint(f["maximum-age"], 10, 32)
	if err != nil {
		return nil, false, fmt.Errorf("hsts maximum-age %q: expected a number of seconds", f["maximum-age"])
	}
	line := "Strict-Transport-Security: max-age=" + strconv.FormatUint(age, 10)
	if f["include-subdomains"] == "enabled" {
		line += "; includeSubDomains"
	}
	if f["preload"] == "enabled" {
		line += "; preload"
	}
	return []byte(line + "\r\n"), on, nil
}

// subSettings are a nested block's settings as words, each as it applies
// (Config.Effective merges a block down the defaults-from chain).
func subSettings(v *objects.Value) map[string]string {
	f := map[string]string{}
	if v == nil || v.Sub == nil {
		return f
	}
	for k, sv := range v.Sub.Props {
		f[k] = sv.Str
	}
	return f
}

// httpLimits are the enforcement block's limits, with F5's defaults.
type httpLimits struct {
	headerSize, headerCount, requests int
}

// enforcementLimits reads max-header-size, max-header-count and
// max-requests from the enforcement block.
func enforcementLimits(v *objects.Value) (httpLimits, error) {
	lim := httpLimits{headerSize: 32768, headerCount: 64, requests: 0}
	f := subSettings(v)
	for _, s := range []struct {
		name string
		dst  *int
		min  int
	}{{"max-header-size", &lim.headerSize, 1}, {"max-header-count", &lim.headerCount, 1}, {"max-requests", &lim.requests, 0}} {
		w, ok := f[s.name]
		if !ok {
			continue
		}
		n, err := strconv.Atoi(w)
		if err != nil || n < s.min {
			return lim, fmt.Errorf("enforcement %s %q: expected a whole number of at least %d", s.name, w, s.min)
		}
		*s.dst = n
	}
	return lim, nil
}

// httpNeeds refuses, as BIG-IP does (01071912), a rule list whose HTTP
// events or commands need an http profile the virtual server lacks: an
// HTTP_REQUEST on a plain TCP virtual would never run, and `persist
// cookie` or `HTTP::uri` in CLIENT_ACCEPTED would fail on every
// connection. BIG-IP reports the first such use; so does this. Unlike
// other skipped virtual servers, a loaded file may not keep it (refused).
func (t *translator) httpNeeds(o *objects.Object, list []*rules.Rule) bool {
	if t.profile(o, profileHTTP) != nil {
		return true
	}
	// A fasthttp profile satisfies the HTTP events and commands.
	fast := t.profile(o, profileFastHTTP) != nil
	for _, r := range list {
		for _, n := range r.HTTPNeeds() {
			var msg string
			switch {
			case n.Name == n.Event.String():
				if fast {
					continue
				}
				msg = fmt.Sprintf("01071912:3: %s event in rule (%s) requires an associated HTTP or FASTHTTP profile on the virtual-server (%s).", n.Name, r.Name, o.Name)
			case strings.HasPrefix(n.Name, "HTTP::"):
				if fast {
					continue
				}
				msg = fmt.Sprintf("01071912:3: %s in rule (%s) requires an associated HTTP or FASTHTTP profile on the virtual-server (%s).", n.Name, r.Name, o.Name)
			default: // persist cookie: fasthttp does no cookie persistence
				msg = fmt.Sprintf("01071912:3: %s in rule (%s) requires an associated HTTP profile on the virtual-server (%s).", n.Name, r.Name, o.Name)
			}
			t.skipped = append(t.skipped, msg)
			t.refused = append(t.refused, msg)
			return false
		}
	}
	return true
}

// foldLines folds each line of lines (header lines ending in CRLF) as
// lws-separator and lws-width say (objects.FoldHeader).
func foldLines(lines []byte, sep string, width int) []byte {
	var out []byte
	for _, l := range strings.SplitAfter(string(lines), "\r\n") {
		if l == "" {
			continue
		}
		out = append(out, objects.FoldHeader(strings.TrimSuffix(l, "\r\n"), sep, width)+"\r\n"...)
	}
	return out
}
