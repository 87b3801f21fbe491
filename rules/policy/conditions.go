package policy

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// condition is one condition's Tcl test, "" when it is not run (noted),
// and the moment it is read.
func (c *compiler) condition(s Spec) (string, phase, error) {
	op := s.Words["operand"]
	if op == "" {
		return "", 0, c.errorf("condition %s has no operand (http-uri, http-host, http-header, tcp, ...)", s.Num)
	}
	ph, ok, err := c.phaseOf(s, "condition")
	if err != nil || !ok {
		return "", 0, err
	}
	if op == "ssl-extension" && s.Words["event"] == "" && ph < atTLS {
		ph = atTLS // the SNI is read from the handshake on
	}
	var getter string
	switch {
	case ph == atResponse:
		getter = c.responseGetter(s)
	case op == "ssl-extension":
		getter, err = c.sslGetter(s, ph)
	case strings.HasPrefix(op, "http") && ph < atRequest:
		return "", 0, c.errorf("condition %s: %s is read at request or response, not at %s", s.Num, op, phaseWords[ph])
	default:
		getter, err = c.getter(s)
	}
	if err != nil || getter == "" {
		return "", 0, err
	}
	if op == "tcp" && s.Words["selector"] == "address" {
		t, err := c.addressTest(s, getter)
		return t, ph, err
	}
	test, err := c.compare(s, getter)
	if err != nil || test == "" {
		return "", 0, err
	}
	if s.Words["not"] != "" {
		test = "!(" + test + ")"
	}
	return test, ph, nil
}

// sslGetter reads the TLS ClientHello's server name (SNI), from the
// handshake on: the server_name extension SSL::extensions returns, past
// its nine bytes of type, lengths and name type.
func (c *compiler) sslGetter(s Spec, ph phase) (string, error) {
	if sel := s.Words["selector"]; sel != "server-name" {
		c.lacks("condition %s reads ssl-extension %s", s.Num, sel)
		return "", nil
	}
	if ph < atTLS {
		return "", c.errorf("condition %s: ssl-extension is read from ssl-client-hello on, not at %s", s.Num, phaseWords[ph])
	}
	return "[string range [SSL::extensions -type 0] 9 end]", nil
}

// responseGetter is the Tcl that reads a condition at the response, ""
// when openltm does not read it there (noted).
func (c *compiler) responseGetter(s Spec) string {
	op, sel := s.Words["operand"], s.Words["selector"]
	switch op {
	case "http-status":
		if sel == "" || sel == "code" {
			return "[HTTP::status]"
		}
	case "http-header":
		if s.Words["name"] != "" {
			return "[HTTP::header value " + quote(s.Words["name"]) + "]"
		}
	case "http-version":
		if sel == "" || sel == "all" {
			return "[HTTP::version]"
		}
	}
	what := op
	if sel != "" {
		what += " " + sel
	}
	c.lacks("condition %s reads %s at response", s.Num, what)
	return ""
}

// getter is the Tcl that reads a condition's operand and selector, "" when
// openltm does not read it (noted).
func (c *compiler) getter(s Spec) (string, error) {
	op, sel := s.Words["operand"], s.Words["selector"]
	name := s.Words["name"]
	needName := func() error {
		if name == "" {
			return c.errorf("condition %s: %s needs a name", s.Num, op)
		}
		return nil
	}
	if strings.HasPrefix(op, "http") && !c.http {
		return "", c.errorf("condition %s: %s needs the policy to require http", s.Num, op)
	}
	switch op {
	case "http-uri":
		switch sel {
		case "", "all":
			return "[HTTP::uri]", nil
		case "path":
			return "[HTTP::path]", nil
		case "query-string":
			return "[HTTP::query]", nil
		case "host":
			return hostOnly, nil
		case "extension":
			return "[string range [set __seg [lindex [split [HTTP::path] /] end]] [expr {[string last . $__seg] < 0 ? [string length $__seg] : [string last . $__seg] + 1}] end]", nil
		case "port":
			return hostPort, nil
		case "scheme":
			return scheme, nil
		case "query-parameter":
			if err := needName(); err != nil {
				return "", err
			}
			return "[URI::query [HTTP::uri] " + quote(name) + "]", nil
		case "path-segment":
			n, err := strconv.Atoi(s.Words["index"])
			if err != nil || n < 1 {
				return "", c.errorf("condition %s: path-segment needs an index from 1", s.Num)
			}
			return fmt.Sprintf("[lindex [split [HTTP::path] /] %d]", n), nil
		}
	case "http-host":
		switch sel {
		case "", "all":
			return "[HTTP::host]", nil
		case "host":
			return hostOnly, nil
		case "port":
			return hostPort, nil
		}
	case "http-header":
		if err := needName(); err != nil {
			return "", err
		}
		return "[HTTP::header value " + quote(name) + "]", nil
	case "http-cookie":
		if err := needName(); err != nil {
			return "", err
		}
		return "[HTTP::cookie value " + quote(name) + "]", nil
	case "http-method":
		if sel == "" || sel == "all" {
			return "[HTTP::method]", nil
		}
	case "http-version":
		switch sel {
		case "", "all":
			return "[HTTP::version]", nil
		case "protocol":
			return "HTTP/[HTTP::version]", nil
		case "major":
			return "[getfield [HTTP::version] . 1]", nil
		case "minor":
			return "[getfield [HTTP::version] . 2]", nil
		}
	case "http-referer":
		if sel == "" || sel == "all" {
			return "[HTTP::header value Referer]", nil
		}
	case "http-user-agent":
		if sel == "" || sel == "all" {
			return "[HTTP::header value User-Agent]", nil
		}
	case "tcp":
		local := s.Words["side"] == "local"
		switch sel {
		case "address":
			if local {
				return "[IP::local_addr]", nil
			}
			return "[IP::client_addr]", nil
		case "port":
			if local {
				return "[TCP::local_port]", nil
			}
			return "[TCP::client_port]", nil
		case "":
			return "", c.errorf("condition %s: tcp needs a selector (address, port)", s.Num)
		}
	case "geoip":
		// The client's address through the geolocation databases, as
		// the whereis iRule command answers it.
		if f, ok := geoipFields[sel]; ok {
			return "[whereis [IP::client_addr] " + f + "]", nil
		}
		if sel == "" {
			return "", c.errorf("condition %s: geoip needs a selector (country-code, country-name, continent, region-code, region-name, isp, org)", s.Num)
		}
	}
	what := op
	if sel != "" {
		what += " " + sel
	}
	c.lacks("condition %s reads %s", s.Num, what)
	return "", nil
}

// geoipFields are the whereis fields of the geoip selectors.
var geoipFields = map[string]string{
	"country-code": "country", "country-name": "country_name", "continent": "continent",
	"region-code": "state_code", "region-name": "state", "isp": "isp", "org": "org",
}

// hostOnly is the Host header without its port; hostPort is its port,
// the virtual's when it names none; scheme is https where the client
// came over TLS (SSL:: answers), else http.
const (
	hostOnly = "[getfield [HTTP::host] : 1]"
	hostPort = "[expr {[regexp {:([0-9]+)$} [HTTP::host] -> __port] ? $__port : [TCP::local_port]}]"
	scheme   = "[expr {[catch {SSL::cipher version}] ? \"http\" : \"https\"}]"
)

// compare is the Tcl test of a condition's operator on getter's value.
func (c *compiler) compare(s Spec, getter string) (string, error) {
	op := s.Words["operator"]
	nocase := s.Words["case"] != "case-sensitive"
	switch op {
	case "exists", "missing":
		var t string
		switch s.Words["operand"] {
		case "http-header":
			t = "[HTTP::header exists " + quote(s.Words["name"]) + "]"
		case "http-cookie":
			t = "[HTTP::cookie exists " + quote(s.Words["name"]) + "]"
		default:
			t = "[string length " + getter + "] > 0"
		}
		if op == "missing" {
			t = "!(" + t + ")"
		}
		return t, nil
	}
	if dg := s.Words["datagroup"]; dg != "" {
		cop := map[string]string{"": "equals", "equals": "equals", "starts-with": "starts_with", "ends-with": "ends_with", "contains": "contains"}[op]
		if cop == "" {
			c.lacks("condition %s: %s with a data group", s.Num, op)
			return "", nil
		}
		v := getter
		if nocase {
			v = "[string tolower " + getter + "]"
		}
		return "[class match " + v + " " + cop + " " + quote(dg) + "]", nil
	}
	if len(s.Values) == 0 {
		return "", c.errorf("condition %s: %s needs values", s.Num, orEquals(op))
	}
	var alts []string
	for _, val := range s.Values {
		lit := literal(val)
		var t string
		switch op {
		case "", "equals":
			t = "[string equal " + nocaseFlag(nocase) + lit + " " + getter + "]"
		case "starts-with":
			t = "[string match " + nocaseFlag(nocase) + globPattern(val, "", "*") + " " + getter + "]"
		case "ends-with":
			t = "[string match " + nocaseFlag(nocase) + globPattern(val, "*", "") + " " + getter + "]"
		case "contains":
			t = "[string match " + nocaseFlag(nocase) + globPattern(val, "*", "*") + " " + getter + "]"
		case "less", "greater", "less-or-equal", "greater-or-equal":
			n, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return "", c.errorf("condition %s: %s compares numbers, not %q", s.Num, op, val)
			}
			sym := map[string]string{"less": "<", "greater": ">", "less-or-equal": "<=", "greater-or-equal": ">="}[op]
			t = fmt.Sprintf("[string is integer -strict %s] && %s %s %d", getter, getter, sym, n)
		default:
			c.lacks("condition %s: operator %s on %s", s.Num, op, s.Words["operand"])
			return "", nil
		}
		alts = append(alts, t)
	}
	if len(alts) == 1 {
		return alts[0], nil
	}
	return "(" + strings.Join(alts, " || ") + ")", nil
}

// addressTest compares the client's or the virtual's address with the
// values, each an address or a network.
func (c *compiler) addressTest(s Spec, getter string) (string, error) {
	switch s.Words["operator"] {
	case "", "equals", "matches":
	default:
		c.lacks("condition %s: operator %s on tcp address", s.Num, s.Words["operator"])
		return "", nil
	}
	if dg := s.Words["datagroup"]; dg != "" {
		t := "[class match " + getter + " equals " + quote(dg) + "]"
		if s.Words["not"] != "" {
			t = "!(" + t + ")"
		}
		return t, nil
	}
	if len(s.Values) == 0 {
		return "", c.errorf("condition %s: tcp address needs values", s.Num)
	}
	var alts []string
	for _, v := range s.Values {
		if _, err := netip.ParsePrefix(v); err != nil {
			if _, err := netip.ParseAddr(v); err != nil {
				return "", c.errorf("condition %s: %q is not an address or a network", s.Num, v)
			}
		}
		alts = append(alts, "[IP::addr "+getter+" equals "+quote(v)+"]")
	}
	t := strings.Join(alts, " || ")
	if len(alts) > 1 {
		t = "(" + t + ")"
	}
	if s.Words["not"] != "" {
		t = "!(" + t + ")"
	}
	return t, nil
}

func orEquals(op string) string {
	if op == "" {
		return "equals"
	}
	return op
}

func nocaseFlag(nocase bool) string {
	if nocase {
		return "-nocase "
	}
	return ""
}

// globPattern is a `string match` pattern matching val literally, with
// pre and post (a `*` or nothing) around it; a tcl: value is substituted
// when the condition runs, and matched as a pattern.
func globPattern(val, pre, post string) string {
	if expr, ok := strings.CutPrefix(val, "tcl:"); ok {
		return substituted(expr, pre, post)
	}
	var b strings.Builder
	for _, r := range val {
		switch r {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return quote(pre + b.String() + post)
}
