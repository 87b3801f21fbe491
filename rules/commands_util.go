package rules

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"hash/crc32"
	"net/netip"
	"strconv"
	"strings"

	"github.com/openltm/openltm/rules/tcl"
)

// registerUtil adds the encoding, digest, URI, data group and pool
// commands real rules use around HTTP.
func registerUtil(t *tcl.Commands) {
	t.Register("b64encode", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("b64encode string")
		}
		return tcl.Str(base64.StdEncoding.EncodeToString(tcl.BytesOf(args[1]))), nil
	})
	t.Register("b64decode", cmdB64decode)
	digest := func(name string, sum func([]byte) []byte) {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) != 2 {
				return tcl.Empty, tcl.WrongArgs(name + " string")
			}
			return tcl.Bytes(sum(tcl.BytesOf(args[1]))), nil
		})
	}
	digest("md5", func(b []byte) []byte { s := md5.Sum(b); return s[:] })
	digest("sha1", func(b []byte) []byte { s := sha1.Sum(b); return s[:] })
	digest("sha256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] })
	digest("sha384", func(b []byte) []byte { s := sha512.Sum384(b); return s[:] })
	digest("sha512", func(b []byte) []byte { s := sha512.Sum512(b); return s[:] })
	t.Register("crc32", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs("crc32 string")
		}
		return tcl.Int(int64(crc32.ChecksumIEEE(tcl.BytesOf(args[1])))), nil
	})
	t.Register("URI::decode", uriCmd("URI::decode uri", func(u string, _ []tcl.Value) (tcl.Value, error) { return tcl.Str(uriDecode(u)), nil }))
	t.Register("URI::encode", uriCmd("URI::encode uri", func(u string, _ []tcl.Value) (tcl.Value, error) { return tcl.Str(uriEncode(u)), nil }))
	t.Register("URI::basename", uriCmd("URI::basename uri", func(u string, _ []tcl.Value) (tcl.Value, error) {
		p := splitURI(u).path
		return tcl.Str(p[strings.LastIndexByte(p, '/')+1:]), nil
	}))
	t.Register("URI::protocol", uriCmd("URI::protocol uri", func(u string, _ []tcl.Value) (tcl.Value, error) { return tcl.Str(splitURI(u).scheme), nil }))
	t.Register("URI::host", uriCmd("URI::host uri", func(u string, _ []tcl.Value) (tcl.Value, error) { return tcl.Str(splitURI(u).host), nil }))
	t.Register("URI::port", uriCmd("URI::port uri", func(u string, _ []tcl.Value) (tcl.Value, error) { return tcl.Str(splitURI(u).portOrDefault()), nil }))
	t.Register("URI::query", cmdURIQuery)
	t.Register("URI::path", cmdURIPath)
	t.Register("URI::compare", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 3 {
			return tcl.Empty, tcl.WrongArgs("URI::compare uri1 uri2")
		}
		return tcl.Bool(normalizeURI(args[1].String()) == normalizeURI(args[2].String())), nil
	})
	t.Register("after", cmdAfter(t.Lookup("after").Fn)).Compile = afterHook // commands_after.go
	t.Register("virtual", cmdVirtual)
	t.Register("members", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return poolList(in, args, "members", func(c Conn, pool string) ([]netip.AddrPort, error) {
			if gc, ok := c.(GTMConn); ok { // a gtm pool's, in a gtm rule
				return gc.PoolMembers(pool)
			}
			li, ok := c.(LBInfo)
			if !ok {
				return nil, tcl.Errorf("members: this connection cannot list pool members")
			}
			return li.Members(pool)
		})
	})
}

func cmdB64decode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("b64decode string")
	}
	s := strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return -1
		}
		return r
	}, args[1].String())
	out, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return tcl.Empty, tcl.Errorf("b64decode: %q is not base64", args[1].String())
	}
	return tcl.Bytes(out), nil
}

func uriCmd(usage string, fn func(u string, rest []tcl.Value) (tcl.Value, error)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 2 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		return fn(args[1].String(), nil)
	}
}

// uriParts is a URI split the way the URI:: commands see it; path has no
// query, and a relative URI has no scheme or host.
type uriParts struct {
	scheme, host, port, path, query string
	hasQuery                        bool
}

func splitURI(u string) uriParts {
	var p uriParts
	if i := strings.Index(u, "://"); i > 0 && !strings.ContainsAny(u[:i], "/?") {
		p.scheme = u[:i]
		rest := u[i+3:]
		end := strings.IndexAny(rest, "/?")
		if end < 0 {
			end = len(rest)
		}
		hp := rest[:end]
		if at := strings.LastIndexByte(hp, '@'); at >= 0 {
			hp = hp[at+1:]
		}
		p.host = hp
		if strings.HasPrefix(hp, "[") {
			if j := strings.IndexByte(hp, ']'); j > 0 {
				p.host = hp[:j+1]
				p.port = strings.TrimPrefix(hp[j+1:], ":")
			}
		} else if j := strings.LastIndexByte(hp, ':'); j >= 0 {
			p.host, p.port = hp[:j], hp[j+1:]
		}
		u = rest[end:]
	}
	if i := strings.IndexByte(u, '#'); i >= 0 {
		u = u[:i]
	}
	p.path = u
	if i := strings.IndexByte(u, '?'); i >= 0 {
		p.path, p.query, p.hasQuery = u[:i], u[i+1:], true
	}
	return p
}

func (p uriParts) portOrDefault() string {
	if p.port != "" {
		return p.port
	}
	switch strings.ToLower(p.scheme) {
	case "http", "ws":
		return "80"
	case "https", "wss":
		return "443"
	}
	return ""
}

// normalizeURI is the form URI::compare compares: scheme and host in lower
// case, default ports dropped, percent-encodings decoded.
func normalizeURI(u string) string {
	p := splitURI(u)
	port := p.port
	if port == p.portOrDefault() && p.scheme != "" {
		d := uriParts{scheme: p.scheme}
		if port == d.portOrDefault() {
			port = ""
		}
	}
	path := uriDecode(p.path)
	if path == "" && p.scheme != "" {
		path = "/"
	}
	s := strings.ToLower(p.scheme) + "|" + strings.ToLower(p.host) + "|" + port + "|" + path
	if p.hasQuery {
		s += "?" + uriDecode(p.query)
	}
	return s
}

// uriDecode undoes percent-encoding; a % not followed by two hex digits
// is kept as it is, and + is not a space (that is form encoding).
func uriDecode(s string) string {
	if strings.IndexByte(s, '%') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			hi, ok1 := unhex(s[i+1])
			lo, ok2 := unhex(s[i+2])
			if ok1 && ok2 {
				b = append(b, hi<<4|lo)
				i += 2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// uriEncode percent-encodes every byte but the unreserved characters of
// RFC 3986 (letters, digits, - . _ ~).
func uriEncode(s string) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hexDigits[c>>4])
		b.WriteByte(hexDigits[c&15])
	}
	return b.String()
}

// queryParam finds the first parameter called name in a query string and
// returns its value as sent (not decoded).
func queryParam(q, name string) (string, bool) {
	for q != "" {
		var kv string
		kv, q, _ = strings.Cut(q, "&")
		k, v, _ := strings.Cut(kv, "=")
		if k == name {
			return v, true
		}
	}
	return "", false
}

// cmdURIQuery: URI::query uri ?name?: the query string, or one parameter.
func cmdURIQuery(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 2 && len(args) != 3 {
		return tcl.Empty, tcl.WrongArgs("URI::query uri ?name?")
	}
	q := splitURI(args[1].String()).query
	if len(args) == 2 {
		return tcl.Str(q), nil
	}
	v, _ := queryParam(q, args[2].String())
	return tcl.Str(v), nil
}

// cmdURIPath: URI::path uri ?start ?end?? | URI::path uri depth. The path
// is the directory part (without the basename), always ending in "/";
// start and end pick directory levels, from 1.
func cmdURIPath(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) < 2 || len(args) > 4 {
		return tcl.Empty, tcl.WrongArgs("URI::path uri ?start ?end?? | URI::path uri depth")
	}
	p := splitURI(args[1].String()).path
	dir := p[:strings.LastIndexByte(p, '/')+1]
	var levels []string
	for _, s := range strings.Split(strings.Trim(dir, "/"), "/") {
		if s != "" {
			levels = append(levels, s)
		}
	}
	if len(args) == 2 {
		if dir == "" {
			return tcl.Str("/"), nil
		}
		return tcl.Str(dir), nil
	}
	if args[2].String() == "depth" && len(args) == 3 {
		return tcl.Int(int64(len(levels))), nil
	}
	start, err := args[2].Int64()
	if err != nil || start < 1 {
		return tcl.Empty, tcl.Errorf("URI::path: bad start %q: expected a level from 1, or depth", args[2].String())
	}
	end := int64(len(levels))
	if len(args) == 4 {
		if end, err = args[3].Int64(); err != nil || end < start {
			return tcl.Empty, tcl.Errorf("URI::path: bad end %q: expected a level from %d", args[3].String(), start)
		}
	}
	end = min(end, int64(len(levels)))
	if start > end {
		return tcl.Str("/"), nil
	}
	return tcl.Str("/" + strings.Join(levels[start-1:end], "/") + "/"), nil
}

// cmdVirtual: virtual returns the virtual server's name (also virtual
// name); virtual NAME hands the flow to another virtual server.
func cmdVirtual(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "virtual")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 1 || (len(args) == 2 && args[1].String() == "name") {
		li, ok := c.(LBInfo)
		if !ok {
			return tcl.Empty, tcl.Errorf("virtual: this connection does not know its virtual server")
		}
		return tcl.Str(li.VirtualName()), nil
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("virtual ?name? | virtual virtual_server")
	}
	return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideVirtual, Pool: FullName(args[1].String())}))
}

// poolList implements `NAME ?-list? pool`: a count, or the members as a
// list of {addr port}.
func poolList(in *tcl.Interp, args []tcl.Value, name string, get func(Conn, string) ([]netip.AddrPort, error)) (tcl.Value, error) {
	_, c, err := sess(in, name)
	if err != nil {
		return tcl.Empty, err
	}
	list := false
	a := args[1:]
	if len(a) == 2 && a[0].String() == "-list" {
		list = true
		a = a[1:]
	}
	if len(a) != 1 {
		return tcl.Empty, tcl.WrongArgs(name + " ?-list? pool")
	}
	ms, err := get(c, a[0].String())
	if err != nil {
		return tcl.Empty, tcl.Errorf("%s: %v", name, err)
	}
	if !list {
		return tcl.Int(int64(len(ms))), nil
	}
	out := make([]tcl.Value, len(ms))
	for i, m := range ms {
		out[i] = tcl.List(tcl.Str(m.Addr().Unmap().String()), tcl.Str(strconv.Itoa(int(m.Port()))))
	}
	return tcl.List(out...), nil
}
