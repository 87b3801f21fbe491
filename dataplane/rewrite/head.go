package rewrite

import (
	"bytes"
	"net/netip"
	"strings"
)

// fields splits a head (start line, fields, blank line) into its start
// line and field lines, without their CRLFs; continuation lines stay
// part of the field before them.
func fields(head []byte) (start []byte, lines [][]byte) {
	h := bytes.TrimRight(head, "\r\n")
	for i := 0; len(h) > 0; i++ {
		j := bytes.IndexByte(h, '\n')
		var l []byte
		if j < 0 {
			l, h = h, nil
		} else {
			l, h = h[:j], h[j+1:]
		}
		l = bytes.TrimSuffix(l, []byte("\r"))
		switch {
		case i == 0:
			start = l
		case len(l) > 0 && (l[0] == ' ' || l[0] == '\t') && len(lines) > 0:
			lines[len(lines)-1] = append(append(append([]byte(nil), lines[len(lines)-1]...), ' '), bytes.TrimSpace(l)...)
		default:
			lines = append(lines, l)
		}
	}
	return start, lines
}

// field splits a field line into its lower-cased name and its value.
func field(l []byte) (string, string) {
	c := bytes.IndexByte(l, ':')
	if c < 0 {
		return "", ""
	}
	return strings.ToLower(string(bytes.TrimSpace(l[:c]))), string(bytes.TrimSpace(l[c+1:]))
}

// Request is the outcome of a request's rewriting.
type Request struct {
	// Head is the new head, nil when nothing changed.
	Head []byte
	// Rule is the uri-rule the request matched, -1 for none; the
	// response to it is mapped back with it.
	Rule int
}

// RewriteRequest maps a request head (request line, fields, blank line)
// that came to a virtual whose scheme is scheme (http or https) from
// client: the request target and Host by the rule the request matches,
// Referer and Origin (rewrite-headers), the X-Forwarded- fields, and no
// Accept-Encoding when bodies are rewritten (the server must answer in
// identity to be read). Only the rare, configured path: it allocates.
func (p *Profile) RewriteRequest(head []byte, scheme string, client netip.Addr) Request {
	start, lines := fields(head)
	sp := bytes.Fields(start)
	if len(sp) != 3 {
		return Request{Rule: -1}
	}
	method, target, proto := string(sp[0]), string(sp[1]), string(sp[2])
	host := ""
	for _, l := range lines {
		if n, v := field(l); n == "host" {
			host = v
			break
		}
	}
	path := target
	if s, h, port, tail, ok := splitAbs(target); ok && s != "" {
		// absolute-form: its authority is the host
		host, path = h, tail
		if port != 0 {
			host += ":" + itoa(port)
		}
	}
	pth, q := pathOf(path)
	rule := p.MatchRequest(scheme, host, pth)
	var out bytes.Buffer
	out.Grow(len(head) + 128)
	if rule >= 0 {
		r := &p.Rules[rule]
		target = r.Server.Path + rest(pth, r.Client.Path) + q
	}
	out.WriteString(method + " " + target + " " + proto + "\r\n")
	for _, l := range lines {
		n, v := field(l)
		switch {
		case n == "host" && rule >= 0:
			out.WriteString("Host: " + p.Rules[rule].Server.Authority() + "\r\n")
			continue
		case (n == "referer" || n == "origin") && p.RequestHeaders:
			if nv, ok := p.ToServer(v); ok {
				if n == "origin" {
					nv = originOf(nv)
				}
				out.WriteString(headerName(l) + ": " + nv + "\r\n")
				continue
			}
		case n == "accept-encoding" && p.Content:
			continue
		case n == "x-forwarded-for" && p.XFF, n == "x-forwarded-host" && p.XFHost, n == "x-forwarded-proto" && p.XFProto:
			// replaced below [M: BIG-IP's insert-xfwd-* replace
			// what the client sent]
			continue
		}
		out.Write(l)
		out.WriteString("\r\n")
	}
	if p.XFF && client.IsValid() {
		out.WriteString("X-Forwarded-For: " + client.Unmap().String() + "\r\n")
	}
	if p.XFHost && host != "" {
		out.WriteString("X-Forwarded-Host: " + host + "\r\n")
	}
	if p.XFProto {
		out.WriteString("X-Forwarded-Proto: " + scheme + "\r\n")
	}
	out.WriteString("\r\n")
	return Request{Head: out.Bytes(), Rule: rule}
}

func originOf(u string) string {
	if i := strings.Index(u, "://"); i > 0 {
		if j := strings.IndexByte(u[i+3:], '/'); j >= 0 {
			return u[:i+3+j]
		}
	}
	return u
}

func headerName(l []byte) string {
	c := bytes.IndexByte(l, ':')
	return string(bytes.TrimSpace(l[:c]))
}

func itoa(n int) string {
	var b [8]byte
	i := len(b)
	for n > 0 || i == len(b) {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// BodyKind is what a response body is, for its links.
type BodyKind uint8

// The bodies uri-translation reads.
const (
	BodyNone BodyKind = iota
	BodyHTML
	BodyCSS
	BodyJS
)

// Response is the outcome of a response head's rewriting.
type Response struct {
	// Head is the new head, nil when nothing changed.
	Head []byte
	// Body is how the body is to be rewritten (BodyNone: passed as
	// it is).
	Body BodyKind
}

// RewriteResponse maps a response head back to the client's URI space
// (rule: Request.Rule of its request): Location, Content-Location and
// Refresh, Set-Cookie's Domain and Path (set-cookie-rules, else the
// rule's hosts and paths [M]), when rewrite-headers is on; and says
// whether the body is HTML, CSS or JavaScript to be rewritten
// (rewrite-content, identity-encoded only).
func (p *Profile) RewriteResponse(head []byte, rule int) Response {
	start, lines := fields(head)
	var res Response
	changed := false
	var out bytes.Buffer
	out.Grow(len(head) + 64)
	out.Write(start)
	out.WriteString("\r\n")
	ctype, encoded := "", false
	for _, l := range lines {
		n, v := field(l)
		nv, ok := "", false
		switch n {
		case "content-type":
			ctype = strings.ToLower(v)
		case "content-encoding":
			encoded = !strings.EqualFold(v, "identity") && v != ""
		case "location", "content-location":
			if p.ResponseHeaders {
				nv, ok = p.ToClient(v, rule)
			}
		case "refresh":
			if p.ResponseHeaders {
				nv, ok = p.refresh(v, rule)
			}
		case "set-cookie":
			if p.ResponseHeaders {
				nv, ok = p.setCookie(v, rule)
			}
		}
		if ok {
			changed = true
			out.WriteString(headerName(l) + ": " + nv + "\r\n")
			continue
		}
		out.Write(l)
		out.WriteString("\r\n")
	}
	out.WriteString("\r\n")
	if changed {
		res.Head = out.Bytes()
	}
	if p.Content && !encoded {
		res.Body = kindOf(ctype)
	}
	return res
}

// kindOf reads a Content-Type.
func kindOf(ct string) BodyKind {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	switch strings.TrimSpace(ct) {
	case "text/html", "application/xhtml+xml":
		return BodyHTML
	case "text/css":
		return BodyCSS
	case "application/javascript", "text/javascript", "application/x-javascript", "application/ecmascript", "text/ecmascript":
		return BodyJS
	}
	return BodyNone
}

// refresh maps the url= of a Refresh value ("5; url=/x").
func (p *Profile) refresh(v string, rule int) (string, bool) {
	i := strings.Index(strings.ToLower(v), "url=")
	if i < 0 {
		return "", false
	}
	u := strings.Trim(v[i+4:], `'" `)
	nu, ok := p.ToClient(u, rule)
	if !ok {
		return "", false
	}
	return v[:i+4] + nu, true
}

// setCookie maps a Set-Cookie's Domain and Path attributes.
func (p *Profile) setCookie(v string, rule int) (string, bool) {
	parts := strings.Split(v, ";")
	domain, path := -1, -1
	for i, a := range parts {
		k, _, _ := strings.Cut(strings.TrimSpace(a), "=")
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "domain":
			domain = i
		case "path":
			path = i
		}
	}
	val := func(i int) string {
		if i < 0 {
			return ""
		}
		_, x, _ := strings.Cut(parts[i], "=")
		return strings.TrimSpace(x)
	}
	d, pa := val(domain), val(path)
	nd, np := "", ""
	if len(p.Cookies) > 0 {
		for _, c := range p.Cookies {
			dm := c.ServerDomain == "" || domain >= 0 && strings.EqualFold(strings.TrimPrefix(d, "."), strings.TrimPrefix(c.ServerDomain, "."))
			pm := c.ServerPath == "" || path >= 0 && strings.HasPrefix(pa, c.ServerPath)
			if !dm || !pm {
				continue
			}
			if c.ServerDomain != "" && c.ClientDomain != "" {
				nd = c.ClientDomain
			}
			if c.ServerPath != "" && c.ClientPath != "" {
				np = c.ClientPath + pa[len(c.ServerPath):]
			}
			break
		}
	} else if rule >= 0 && rule < len(p.Rules) && p.Rules[rule].Response {
		r := &p.Rules[rule]
		if domain >= 0 && strings.EqualFold(strings.TrimPrefix(d, "."), r.Server.Host) {
			nd = r.Client.Host
		}
		if path >= 0 && underPath(pa, r.Server.Path) && r.Server.Path != r.Client.Path {
			np = r.Client.Path + rest(pa, r.Server.Path)
		}
	}
	if nd == "" && np == "" {
		return "", false
	}
	if nd != "" {
		parts[domain] = " Domain=" + nd
	}
	if np != "" {
		parts[path] = " Path=" + np
	}
	return strings.Join(parts, ";"), true
}
