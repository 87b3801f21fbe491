package rules

import (
	"strconv"
	"strings"

	"golang.org/x/net/http/httpguts"

	"github.com/openltm/openltm/rules/tcl"
)

// HTTP2Conn is implemented by an HTTPConn whose clients may speak HTTP/2
// through the http2 profile's gateway, whose streams reach the HTTP
// engine as HTTP/1.1 requests: the HTTP2:: commands ask it what the
// request's head no longer says (its stream, the client connection's
// streams). Its methods never wait for the client.
type HTTP2Conn interface {
	// HTTP2Active reports whether the client speaks HTTP/2.
	HTTP2Active() bool
	// HTTP2Stream is the stream of the request the running event is
	// about and its priority weight (0-255, as HEADERS carry it); ok is
	// false for an HTTP/1 client or in an event with no request of its
	// own.
	HTTP2Stream() (id uint32, weight uint8, ok bool)
	// SetHTTP2Priority changes that stream's weight; false when there is
	// no such stream.
	SetHTTP2Priority(weight uint8) bool
	// HTTP2Concurrency is the number of streams open on the client
	// connection, HTTP2Requests the number it opened.
	HTTP2Concurrency() int
	HTTP2Requests() int
	// HTTP2Disconnect ends the client connection cleanly (GOAWAY): the
	// streams open are answered, later ones refused.
	HTTP2Disconnect() bool
	// HTTP2Scheme is the :scheme of the client's requests: https over
	// client-ssl, http in clear.
	HTTP2Scheme() string
}

// HTTP2Pusher is implemented by an HTTP2Conn whose gateway can push
// resources to the client (HTTP2::push). HTTP2Push promises p on the
// stream of the request the running event is about, and reports
// whether the gateway took it: not for an HTTP/1 client, a client that
// disabled push, or a request that is itself a pushed one. It never
// waits for the client.
type HTTP2Pusher interface {
	HTTP2Push(p *HTTP2Push) bool
}

// HTTP2Push is what HTTP2::push asks for, checked.
type HTTP2Push struct {
	// Path is the promised request's :path; Authority its :authority
	// (a host field of the rule's, else the request's Host; "" only with
	// -nohost).
	Path, Authority string
	// Header is the promised request's other fields, names in lower case.
	Header [][2]string
	// Priority is -priority (0-255), -1 when not given.
	Priority int
	// Local: -content or -ifile, the gateway answers with Content and
	// RespHeader (names in lower case; Server: BigIP unless -noserver).
	Local      bool
	Content    string
	RespHeader [][2]string
}

// HTTP2Switch is implemented by a Conn of a virtual with an http2
// profile before its client chose a protocol: HTTP2::disable in
// CLIENT_ACCEPTED serves the connection as HTTP/1.1 only (h2 is not
// offered in ALPN; a cleartext client's preface is refused), and
// HTTP2::enable undoes it.
type HTTP2Switch interface {
	SetHTTP2(enabled bool) error
}

func registerHTTP2(t *tcl.Commands) {
	t.Register("HTTP2::active", http2Getter("HTTP2::active", func(c HTTP2Conn) tcl.Value { return tcl.Bool(c.HTTP2Active()) }, tcl.Bool(false)))
	t.Register("HTTP2::version", http2Getter("HTTP2::version", func(c HTTP2Conn) tcl.Value {
		if c.HTTP2Active() {
			return tcl.Str("2")
		}
		return tcl.Str("0")
	}, tcl.Str("0")))
	t.Register("HTTP2::concurrency", http2Getter("HTTP2::concurrency", func(c HTTP2Conn) tcl.Value { return tcl.Int(int64(c.HTTP2Concurrency())) }, tcl.Int(0)))
	t.Register("HTTP2::requests", http2Getter("HTTP2::requests", func(c HTTP2Conn) tcl.Value { return tcl.Int(int64(c.HTTP2Requests())) }, tcl.Int(0)))
	t.Register("HTTP2::stream", cmdHTTP2Stream)
	t.Register("HTTP2::header", cmdHTTP2Header)
	t.Register("HTTP2::disconnect", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs("HTTP2::disconnect")
		}
		c, err := http2Conn(in, "HTTP2::disconnect")
		if err != nil {
			return tcl.Empty, err
		}
		if c == nil || !c.HTTP2Disconnect() {
			return tcl.Empty, tcl.Errorf("HTTP2::disconnect: the client does not speak HTTP/2")
		}
		return tcl.Empty, nil
	})
	t.Register("HTTP2::push", cmdHTTP2Push)
	for name, on := range map[string]bool{"HTTP2::enable": true, "HTTP2::disable": false} {
		t.Register(name, func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			if len(args) != 1 {
				return tcl.Empty, tcl.WrongArgs(name)
			}
			s, c, err := sess(in, name)
			if err != nil {
				return tcl.Empty, err
			}
			sw, ok := c.(HTTP2Switch)
			if !ok || s.event != ClientAccepted {
				return tcl.Empty, tcl.Errorf("%s: only valid in CLIENT_ACCEPTED of a virtual server with an http2 profile, before the client chose its protocol", name)
			}
			return tcl.Empty, tclErr(sw.SetHTTP2(on))
		}).Compile = http2SwitchHook
	}
}

// http2Conn is the HTTP/2 view of the running event's connection: nil
// (no error) on an HTTP virtual whose clients cannot speak HTTP/2.
func http2Conn(in *tcl.Interp, cmd string) (HTTP2Conn, error) {
	_, hc, err := httpConn(in, cmd)
	if err != nil {
		return nil, err
	}
	c, _ := hc.(HTTP2Conn)
	return c, nil
}

// http2Getter is an HTTP2:: command without arguments: get's value, or
// none's when the virtual's clients cannot speak HTTP/2.
func http2Getter(name string, get func(HTTP2Conn) tcl.Value, none tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(name)
		}
		c, err := http2Conn(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		if c == nil {
			return none, nil
		}
		return get(c), nil
	}
}

// cmdHTTP2Stream is HTTP2::stream ?id | priority ?weight??: the stream
// id (0 for an HTTP/1 client), its priority weight, or a new weight
// (0-255, 8 bits as F5 documents; out of bounds is an error).
func cmdHTTP2Stream(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "HTTP2::stream ?id | priority ?priority??"
	c, err := http2Conn(in, "HTTP2::stream")
	if err != nil {
		return tcl.Empty, err
	}
	var id uint32
	var weight uint8
	ok := false
	if c != nil {
		id, weight, ok = c.HTTP2Stream()
	}
	switch {
	case len(args) == 1 || len(args) == 2 && args[1].String() == "id":
		return tcl.Int(int64(id)), nil
	case len(args) == 2 && args[1].String() == "priority":
		if !ok {
			return tcl.Int(0), nil
		}
		return tcl.Int(int64(weight)), nil
	case len(args) == 3 && args[1].String() == "priority":
		n, err := strconv.ParseInt(args[2].String(), 10, 64)
		if err != nil || n < 0 || n > 255 {
			return tcl.Empty, tcl.Errorf("HTTP2::stream priority: bad priority %q: expected 0 to 255", args[2].String())
		}
		if !ok || !c.SetHTTP2Priority(uint8(n)) {
			return tcl.Empty, tcl.Errorf("HTTP2::stream priority: the request has no HTTP/2 stream")
		}
		return tcl.Int(0), nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// cmdHTTP2Header is HTTP2::header name | replace name ?value? | remove
// name, over the pseudo-headers of the HTTP/2 request (or response)
// the HTTP/1.1 head the engine reads stands for: :method, :path,
// :authority (Host) and :scheme, :status in a response. replace edits
// what the head can carry (:path, :authority); the others, and remove,
// are refused [M]: the request goes on as HTTP/1.1, which needs them.
func cmdHTTP2Header(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "HTTP2::header name | replace name ?value? | remove name"
	if len(args) < 2 || len(args) > 4 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, hc, h, err := httpHead(in, "HTTP2::header", false)
	if err != nil {
		return tcl.Empty, err
	}
	c, _ := hc.(HTTP2Conn)
	active := c != nil && c.HTTP2Active()
	switch sub := args[1].String(); {
	case len(args) == 2:
		if !active {
			return tcl.Empty, nil // no pseudo-headers: an HTTP/1 client's
		}
		return tcl.Str(pseudoHeader(h, c, s.responseEvent(), sub)), nil
	case sub == "replace" && (len(args) == 3 || len(args) == 4):
		name, value := args[2].String(), ""
		if len(args) == 4 {
			value = args[3].String()
		}
		if !active {
			return tcl.Empty, nil // not present: nothing is inserted
		}
		switch {
		case name == ":path" && !h.IsResponse():
			if value == "" || value[0] != '/' && value != "*" {
				return tcl.Empty, tcl.Errorf("HTTP2::header replace: bad :path %q: expected an absolute path", value)
			}
			h.SetURI(value)
		case name == ":authority" && !h.IsResponse():
			if value == "" {
				return tcl.Empty, tcl.Errorf("HTTP2::header replace: :authority cannot be empty")
			}
			h.ReplaceHeader("host", value)
		default:
			return tcl.Empty, tcl.Errorf("HTTP2::header replace: %s cannot be changed here (the message goes on as HTTP/1.1): :path and :authority can", name)
		}
		return tcl.Empty, nil
	case sub == "remove" && len(args) == 3:
		if !active {
			return tcl.Empty, nil
		}
		return tcl.Empty, tcl.Errorf("HTTP2::header remove: %s cannot be removed (the message goes on as HTTP/1.1, which needs it)", args[2].String())
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// pseudoHeader is the value of pseudo-header name for head h, "" when
// the message has none of that name.
func pseudoHeader(h *HTTPHead, c HTTP2Conn, response bool, name string) string {
	if response {
		if name == ":status" {
			return strconv.Itoa(h.Status())
		}
		return ""
	}
	switch name {
	case ":method":
		return string(h.Method())
	case ":path":
		return string(h.URI())
	case ":authority":
		v, _ := h.Header("host")
		return string(v)
	case ":scheme":
		return c.HTTP2Scheme()
	}
	return ""
}

// http2SwitchHook marks a rule with HTTP2::disable or HTTP2::enable, so
// that the dataplane lets such a rule take h2 out of the ALPN offer of
// a connection (Program.SwitchesHTTP2), and the others pay nothing.
func http2SwitchHook(c *tcl.Compiler) error {
	if r, ok := c.Context().(*Rule); ok {
		r.switchesH2 = true
	}
	return nil
}

// SwitchesHTTP2 reports whether a rule has HTTP2::disable or
// HTTP2::enable (http2SwitchHook).
func (p *Program) SwitchesHTTP2() bool { return p != nil && p.switchesH2 }

// cmdHTTP2Push is HTTP2::push URI ?-priority N? ?-content DATA |
// -ifile IFILE? ?-noserver? ?-nohost? ?NAME VALUE ...? ?-- NAME VALUE
// ...?: a PUSH_PROMISE of GET URI on the request's stream, the promised
// request sent to the pool (its HTTP_REQUEST runs), or answered with
// -content or the ifile's content and the response fields after `--`.
// The request fields may also come as one list [M]. A `host` field
// becomes the promise's :authority; without one, the request's Host
// [M: F5 requires a Host unless -nohost]. The method is GET [M: F5's
// syntax has none; RFC 9113 allows only safe cacheable ones].
//
// Valid in HTTP_REQUEST, HTTP_REQUEST_DATA and HTTP_RESPONSE, while the
// request's stream is open [M]. For an HTTP/1 client, a client that
// disabled push, or a pushed request's own events, it does nothing and
// returns "" [M: F5 says the command does nothing on a pushed stream];
// a malformed command is an error whatever the client.
func cmdHTTP2Push(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "HTTP2::push URI ?-priority N? ?-content DATA | -ifile IFILE? ?-noserver? ?-nohost? ?NAME VALUE ...? ?-- NAME VALUE ...?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, hc, err := httpConn(in, "HTTP2::push")
	if err != nil {
		return tcl.Empty, err
	}
	switch s.event {
	case HTTPRequest, HTTPRequestData, HTTPResponse:
	default:
		return tcl.Empty, tcl.Errorf("HTTP2::push: not valid in %s (HTTP_REQUEST, HTTP_REQUEST_DATA, HTTP_RESPONSE)", s.event)
	}
	p := HTTP2Push{Path: args[1].String(), Priority: -1}
	if p.Path == "" || p.Path[0] != '/' || !pushVisible(p.Path) {
		return tcl.Empty, tcl.Errorf("HTTP2::push: bad URI %q: expected an absolute path (/...)", p.Path)
	}
	noServer, noHost, local := false, false, false
	rest := args[2:]
options:
	for len(rest) > 0 {
		opt := rest[0].String()
		switch opt {
		case "-noserver":
			noServer = true
		case "-nohost":
			noHost = true
		case "-priority", "-content", "-ifile":
			if len(rest) < 2 {
				return tcl.Empty, tcl.Errorf("HTTP2::push: %s needs a value", opt)
			}
			v := rest[1]
			rest = rest[1:]
			switch opt {
			case "-priority":
				n, err := strconv.ParseInt(v.String(), 10, 64)
				if err != nil || n < 0 || n > 255 {
					return tcl.Empty, tcl.Errorf("HTTP2::push: bad priority %q: expected 0 to 255", v.String())
				}
				p.Priority = int(n)
			case "-content":
				if local {
					return tcl.Empty, tcl.Errorf("HTTP2::push: -content and -ifile exclude each other")
				}
				local, p.Content = true, v.String()
			case "-ifile":
				if local {
					return tcl.Empty, tcl.Errorf("HTTP2::push: -content and -ifile exclude each other")
				}
				var f *IFile
				ok := false
				if env := s.prog.env; env != nil && env.IFile != nil {
					f, ok = env.IFile(v.String())
				}
				if !ok {
					return tcl.Empty, tcl.Errorf("HTTP2::push: -ifile %s: no such ltm ifile", v.String())
				}
				local, p.Content = true, f.content.String()
			}
		default:
			break options
		}
		rest = rest[1:]
	}
	reqWords, respWords := rest, []tcl.Value(nil)
	for i, w := range rest {
		if w.String() == "--" {
			reqWords, respWords = rest[:i], rest[i+1:]
			if !local {
				return tcl.Empty, tcl.Errorf("HTTP2::push: response fields (after --) need -content or -ifile")
			}
			break
		}
	}
	if len(reqWords) == 1 { // the fields as one list
		l, err := tcl.AsList(reqWords[0])
		if err != nil {
			return tcl.Empty, err
		}
		reqWords = l
	}
	host := ""
	p.Header, err = pushFields(reqWords, false, func(v string) { host = v })
	if err != nil {
		return tcl.Empty, err
	}
	if local {
		if len(respWords) == 1 {
			if respWords, err = tcl.AsList(respWords[0]); err != nil {
				return tcl.Empty, err
			}
		}
		if p.RespHeader, err = pushFields(respWords, true, nil); err != nil {
			return tcl.Empty, err
		}
		if !noServer {
			p.RespHeader = append(p.RespHeader, [2]string{"server", "BigIP"})
		}
		p.Local = true
	}
	p.Authority = host
	if host == "" {
		if h := hc.HTTPRequest(); h != nil {
			if v, ok := h.Header("host"); ok {
				p.Authority = string(v)
			}
		}
	}
	if p.Authority == "" && !noHost {
		return tcl.Empty, tcl.Errorf("HTTP2::push: the request has no Host: give a host field or -nohost")
	}
	c, _ := hc.(HTTP2Conn)
	pusher, _ := hc.(HTTP2Pusher)
	if c == nil || pusher == nil || !c.HTTP2Active() {
		return tcl.Empty, nil // an HTTP/1 client: nothing to push on
	}
	pusher.HTTP2Push(&p)
	return tcl.Empty, nil
}

// pushFields reads HTTP2::push's NAME VALUE words: names in lower case,
// tokens; values without control characters; no pseudo-headers nor the
// fields HTTP/2 refuses (the connection's own). A request's host goes
// to host; a response's Content-Length is the gateway's.
func pushFields(words []tcl.Value, response bool, host func(string)) ([][2]string, error) {
	if len(words)%2 != 0 {
		return nil, tcl.Errorf("HTTP2::push: header %q has no value: expected NAME VALUE pairs", words[len(words)-1].String())
	}
	var out [][2]string
	for i := 0; i < len(words); i += 2 {
		name, value := strings.ToLower(words[i].String()), words[i+1].String()
		if !httpguts.ValidHeaderFieldName(name) {
			return nil, tcl.Errorf("HTTP2::push: bad header name %q", words[i].String())
		}
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil, tcl.Errorf("HTTP2::push: bad value for header %s", name)
		}
		switch name {
		case "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te":
			return nil, tcl.Errorf("HTTP2::push: %s is a connection's field, which HTTP/2 does not carry", name)
		case "content-length":
			if response {
				return nil, tcl.Errorf("HTTP2::push: Content-Length is computed")
			}
			return nil, tcl.Errorf("HTTP2::push: a pushed request (GET) has no body: no Content-Length")
		case "host":
			if !response {
				host(value)
				continue
			}
		}
		out = append(out, [2]string{name, value})
	}
	return out, nil
}

// pushVisible reports whether a path has no space or control character.
func pushVisible(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] == 0x7f {
			return false
		}
	}
	return true
}
