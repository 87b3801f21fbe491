package rules

import (
	"strconv"

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
	// HTTP2::push is not registered: the gateway offers no server push
	// (browsers dropped it), so a rule with it is kept and not run.
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
