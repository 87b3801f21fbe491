// Package rewrite is the rewrite profile's uri-translation mode: a
// reverse proxy that shows clients one URI space (the uri-rules' client
// URIs) for another (their server URIs). Requests are mapped client to
// server (request target, Host, Referer, Origin); responses server to
// client (Location, Content-Location, Refresh, Set-Cookie, and the links
// of HTML, CSS and JavaScript bodies). The package works on bytes only:
// the HTTP path (dataplane/mblb) calls it with heads and whole bodies.
package rewrite

import (
	"fmt"
	"strconv"
	"strings"
)

// URI is one side of a uri-rule: where it matches and what it becomes.
type URI struct {
	Scheme string // http or https
	Host   string // lower case
	Port   int    // 0: the scheme's own
	Path   string // begins and ends with /
}

// ParseURI reads an absolute URI ending in / (http://host[:port]/path/),
// the text form of a uri-rule's side; BIG-IP refuses any other.
func ParseURI(s string) (URI, error) {
	var u URI
	i := strings.Index(s, "://")
	if i <= 0 {
		return u, fmt.Errorf("%q is not an absolute URI (scheme://host/path/)", s)
	}
	rest := s[i+3:]
	slash := strings.IndexByte(rest, '/')
	if slash < 0 {
		return u, fmt.Errorf("%q must end in /", s)
	}
	port := ""
	host := rest[:slash]
	if c := strings.LastIndexByte(host, ':'); c >= 0 && !strings.HasSuffix(host, "]") {
		host, port = host[:c], host[c+1:]
	}
	return Make(s[:i], host, port, rest[slash:])
}

// Make builds a URI from the settings of a rule's client or server block
// (port "" or "none": the scheme's), checking each as BIG-IP does.
func Make(scheme, host, port, path string) (URI, error) {
	u := URI{Scheme: strings.ToLower(scheme), Host: strings.ToLower(host), Path: path}
	if u.Scheme != "http" && u.Scheme != "https" {
		return u, fmt.Errorf("scheme %q must be http or https", scheme)
	}
	if u.Host == "" || u.Host == "none" || strings.ContainsAny(u.Host, "/?#@ ") {
		return u, fmt.Errorf("host %q must be a host name or address", host)
	}
	if port != "" && port != "none" && port != "0" {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return u, fmt.Errorf("port %q must be 1 to 65535", port)
		}
		if n != defaultPort(u.Scheme) {
			u.Port = n
		}
	}
	if u.Path == "" || u.Path == "none" {
		u.Path = "/"
	}
	if !strings.HasPrefix(u.Path, "/") || !strings.HasSuffix(u.Path, "/") || strings.ContainsAny(u.Path, "?# ") {
		return u, fmt.Errorf("path %q must begin and end with /", path)
	}
	return u, nil
}

func defaultPort(scheme string) int {
	if scheme == "https" {
		return 443
	}
	return 80
}

// Authority is host[:port] as a Host field carries it.
func (u URI) Authority() string {
	if u.Port == 0 {
		return u.Host
	}
	return u.Host + ":" + strconv.Itoa(u.Port)
}

// String is the URI's absolute form.
func (u URI) String() string { return u.Scheme + "://" + u.Authority() + u.Path }

// Rule is one uri-rule.
type Rule struct {
	Name           string
	Client, Server URI
	// Request and Response: the directions the rule maps (type request,
	// response or both).
	Request, Response bool
}

// CookieRule is one set-cookie-rule: a Set-Cookie whose Domain and Path
// are the server's get the client's. An empty domain or path matches any
// and is left as it is.
type CookieRule struct {
	Name                     string
	ClientDomain, ClientPath string
	ServerDomain, ServerPath string
}

// Profile is a rewrite profile in uri-translation mode, compiled once at
// commit and shared, read-only, by every connection of its virtuals.
type Profile struct {
	Name    string
	Rules   []Rule
	Cookies []CookieRule
	// Bypass: absolute URIs (prefixes) never rewritten (bypass-list).
	Bypass []string
	// Request block.
	XFF, XFHost, XFProto, RequestHeaders bool
	// Response block.
	Content, ResponseHeaders bool
}

// Check refuses a profile BIG-IP would: two request rules for the same
// client URI (which one applies would be undecided) [M].
func (p *Profile) Check() error {
	seen := map[string]string{}
	for _, r := range p.Rules {
		if !r.Request {
			continue
		}
		k := r.Client.String()
		if o, ok := seen[k]; ok {
			return fmt.Errorf("uri-rules %s and %s both map client URI %s", o, r.Name, k)
		}
		seen[k] = r.Name
	}
	return nil
}

// hostPort splits a Host field's value (lower-cased) into host and port,
// 0 for the scheme's own.
func hostPort(v, scheme string) (string, int) {
	v = strings.ToLower(strings.TrimSpace(v))
	port := 0
	if c := strings.LastIndexByte(v, ':'); c >= 0 && !strings.HasSuffix(v, "]") {
		n, err := strconv.Atoi(v[c+1:])
		if err == nil {
			port = n
		}
		v = v[:c]
	}
	if port == defaultPort(scheme) {
		port = 0
	}
	return v, port
}

// underPath says whether path is at or below prefix (which ends in /):
// "/app" is under "/app/" as well as "/app/x".
func underPath(path, prefix string) bool {
	return strings.HasPrefix(path, prefix) || path+"/" == prefix
}

// rest is what follows prefix in path ("" for "/app" under "/app/").
func rest(path, prefix string) string {
	if len(path) < len(prefix) {
		return ""
	}
	return path[len(prefix):]
}

// MatchRequest is the request rule for a request with this scheme, Host
// value and path (the query stripped), -1 when none applies: the longest
// client path wins.
func (p *Profile) MatchRequest(scheme, host, path string) int {
	h, port := hostPort(host, scheme)
	best, blen := -1, -1
	for i := range p.Rules {
		r := &p.Rules[i]
		c := &r.Client
		if !r.Request || c.Scheme != scheme || c.Host != h || c.Port != port || !underPath(path, c.Path) {
			continue
		}
		if len(c.Path) > blen {
			best, blen = i, len(c.Path)
		}
	}
	return best
}

// bypassed says whether the absolute URI u is on the bypass-list.
func (p *Profile) bypassed(u string) bool {
	for _, b := range p.Bypass {
		if len(u) >= len(b) && strings.EqualFold(u[:len(b)], b) {
			return true
		}
	}
	return false
}

// splitAbs reads an absolute or scheme-relative URL: scheme ("" for
// //host), host, port (0: the scheme's, or unknown for "" scheme), the
// path with what follows it, and whether it is one.
func splitAbs(u string) (scheme, host string, port int, tail string, ok bool) {
	var rest string
	switch {
	case strings.HasPrefix(u, "//"):
		rest = u[2:]
	default:
		i := strings.Index(u, "://")
		if i <= 0 || i > 5 {
			return "", "", 0, "", false
		}
		scheme = strings.ToLower(u[:i])
		if scheme != "http" && scheme != "https" {
			return "", "", 0, "", false
		}
		rest = u[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	auth := rest
	tail = ""
	if end >= 0 {
		auth, tail = rest[:end], rest[end:]
	}
	if auth == "" {
		return "", "", 0, "", false
	}
	host, port = hostPort(auth, scheme)
	if scheme == "" && port != 0 && (port == 80 || port == 443) {
		port = 0
	}
	if tail == "" || tail[0] != '/' {
		tail = "/" + tail
	}
	return scheme, host, port, tail, true
}

// pathOf is the path part of a path with query or fragment.
func pathOf(tail string) (string, string) {
	if i := strings.IndexAny(tail, "?#"); i >= 0 {
		return tail[:i], tail[i:]
	}
	return tail, ""
}

// ToServer maps a URL the client sent (a Referer, an Origin) to the
// server's URI space; ok false when no request rule covers it.
func (p *Profile) ToServer(u string) (string, bool) {
	scheme, host, port, tail, ok := splitAbs(u)
	if !ok || scheme == "" || p.bypassed(u) {
		return "", false
	}
	path, q := pathOf(tail)
	for i := range p.Rules {
		r := &p.Rules[i]
		c := &r.Client
		if r.Request && c.Scheme == scheme && c.Host == host && c.Port == port && underPath(path, c.Path) {
			if !strings.HasPrefix(path, c.Path) && u[len(u)-1] != '/' && tail == path {
				// Origin: scheme://host, no path to map.
				return r.Server.Scheme + "://" + r.Server.Authority(), true
			}
			return r.Server.Scheme + "://" + r.Server.Authority() + r.Server.Path + rest(path, c.Path) + q, true
		}
	}
	return "", false
}

// ToClient maps a URL a server sent to the client's URI space. cur is
// the rule the request matched (-1: none): a root-relative path ("/x")
// is mapped by it alone, an absolute URL by any response rule whose
// server URI covers it (the longest server path wins).
func (p *Profile) ToClient(u string, cur int) (string, bool) {
	if u == "" {
		return "", false
	}
	if u[0] == '/' && (len(u) == 1 || u[1] != '/') {
		if cur < 0 || cur >= len(p.Rules) || !p.Rules[cur].Response {
			return "", false
		}
		r := &p.Rules[cur]
		path, q := pathOf(u)
		if !strings.HasPrefix(path, r.Server.Path) || r.Server.Path == r.Client.Path {
			return "", false
		}
		if p.bypassed(r.Server.Scheme + "://" + r.Server.Authority() + u) {
			return "", false
		}
		return r.Client.Path + rest(path, r.Server.Path) + q, true
	}
	scheme, host, port, tail, ok := splitAbs(u)
	if !ok || p.bypassed(u) {
		return "", false
	}
	path, q := pathOf(tail)
	best, blen := -1, -1
	for i := range p.Rules {
		r := &p.Rules[i]
		s := &r.Server
		if !r.Response || s.Host != host || (scheme != "" && s.Scheme != scheme) || (scheme != "" && s.Port != port) || !underPath(path, s.Path) {
			continue
		}
		if len(s.Path) > blen {
			best, blen = i, len(s.Path)
		}
	}
	if best < 0 {
		return "", false
	}
	r := &p.Rules[best]
	prefix := r.Client.Scheme + "://"
	if scheme == "" {
		prefix = "//"
	}
	if !strings.HasPrefix(path, r.Server.Path) {
		// scheme://host without the path's trailing slash
		return prefix + r.Client.Authority() + strings.TrimSuffix(r.Client.Path, "/") + q, true
	}
	return prefix + r.Client.Authority() + r.Client.Path + rest(path, r.Server.Path) + q, true
}
