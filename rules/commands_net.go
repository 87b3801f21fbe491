package rules

import (
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/openltm/openltm/rules/tcl"
)

// localEnd is this side's own end of its connection: the virtual address
// on the client side, the address the server connection leaves from on
// the server side (TCP::local_port, IP::local_addr).
func localEnd(s Side) Endpoint {
	if s == ServerSide {
		return EndServerLocal
	}
	return EndVirtual
}

// remoteEnd is the far end of this side's connection: the client on the
// client side, the member on the server side.
func remoteEnd(s Side) Endpoint {
	if s == ServerSide {
		return EndServer
	}
	return EndClient
}

func registerTCP(t *tcl.Commands) {
	t.Register("TCP::collect", cmdTCPCollect)
	t.Register("TCP::release", cmdTCPRelease)
	t.Register("TCP::payload", cmdTCPPayload)
	t.Register("TCP::respond", cmdTCPRespond)
	t.Register("TCP::close", cmdTCPClose)
	t.Register("TCP::notify", cmdTCPNotify)
	t.Register("TCP::local_port", portCmd("TCP::local_port", localEnd))
	t.Register("TCP::remote_port", portCmd("TCP::remote_port", remoteEnd))
	t.Register("TCP::client_port", portCmd("TCP::client_port", func(Side) Endpoint { return EndClient }))
	t.Register("TCP::server_port", portCmd("TCP::server_port", func(Side) Endpoint { return EndServer }))
}

func registerIP(t *tcl.Commands) {
	t.Register("IP::client_addr", addrCmd("IP::client_addr", func(Side) Endpoint { return EndClient }))
	t.Register("IP::server_addr", addrCmd("IP::server_addr", func(Side) Endpoint { return EndServer }))
	t.Register("IP::local_addr", addrCmd("IP::local_addr", localEnd))
	t.Register("IP::remote_addr", addrCmd("IP::remote_addr", remoteEnd))
	t.Register("IP::protocol", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "IP::protocol")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Int(int64(c.Protocol())), nil
	})
	t.Register("IP::version", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "IP::version")
		if err != nil {
			return tcl.Empty, err
		}
		if c.Addr(EndClient).Addr().Unmap().Is4() {
			return tcl.Int(4), nil
		}
		return tcl.Int(6), nil
	})
	t.Register("IP::addr", cmdIPAddr)
	t.Register("IP::idle_timeout", cmdIPIdleTimeout)
	t.Register("IP::stats", cmdIPStats)
}

// FlowStats are one side's counters of a connection, as the connection
// table counts them (packets are the reads and writes the proxy made).
type FlowStats struct {
	PktsIn, PktsOut, BytesIn, BytesOut uint64
	Age                                time.Duration
}

// StatsConn is the part of a connection IP::stats needs; optional,
// checked with a type assertion.
type StatsConn interface {
	// SideStats returns the counters of the client's connection or of
	// the server connection the event concerns; ok is false when the
	// side has none (no server connected yet).
	SideStats(s Side) (st FlowStats, ok bool)
}

// cmdIPStats is IP::stats [pkts|bytes [in|out] | in | out | age]: the
// current side's packets, bytes and age (milliseconds), as F5's page
// lists them. Chosen [M]: `in` and `out` alone give {packets bytes}.
func cmdIPStats(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "IP::stats ?pkts|bytes ?in|out?|in|out|age?"
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	s, c, err := sess(in, "IP::stats")
	if err != nil {
		return tcl.Empty, err
	}
	sc, ok := c.(StatsConn)
	if !ok {
		return tcl.Empty, tcl.Errorf("IP::stats: this virtual server's connections keep no statistics")
	}
	st, ok := sc.SideStats(s.side)
	if !ok {
		return tcl.Empty, tcl.Errorf("IP::stats: the %s has no connection yet", s.side)
	}
	n := func(v uint64) tcl.Value { return tcl.Int(int64(v)) }
	pair := func(in, out uint64, dir []tcl.Value) (tcl.Value, error) {
		if len(dir) == 0 {
			return tcl.List(n(in), n(out)), nil
		}
		switch dir[0].String() {
		case "in":
			return n(in), nil
		case "out":
			return n(out), nil
		}
		return tcl.Empty, tcl.Errorf("IP::stats: %q is neither in nor out", dir[0].String())
	}
	if len(args) == 1 {
		return tcl.List(n(st.PktsIn), n(st.PktsOut), n(st.BytesIn), n(st.BytesOut), tcl.Int(st.Age.Milliseconds())), nil
	}
	what, rest := args[1].String(), args[2:]
	switch what {
	case "pkts":
		return pair(st.PktsIn, st.PktsOut, rest)
	case "bytes":
		return pair(st.BytesIn, st.BytesOut, rest)
	}
	if len(rest) > 0 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	switch what {
	case "in":
		return tcl.List(n(st.PktsIn), n(st.BytesIn)), nil
	case "out":
		return tcl.List(n(st.PktsOut), n(st.BytesOut)), nil
	case "age":
		return tcl.Int(st.Age.Milliseconds()), nil
	}
	return tcl.Empty, tcl.Errorf("IP::stats: unknown option %q; valid: pkts bytes in out age", what)
}

// IdleTimer is the part of a connection IP::idle_timeout needs: its idle
// timeout, which a rule may change for this connection alone (a long
// timeout for one client's long-lived sessions behind a virtual whose
// profile ends idle connections sooner, the usual reason on BIG-IP).
// It is optional, checked with a type assertion.
type IdleTimer interface {
	// FlowIdleTimeout is the connection's idle timeout now (0: none).
	FlowIdleTimeout() time.Duration
	// SetFlowIdleTimeout sets it from now on (0: none).
	SetFlowIdleTimeout(d time.Duration)
}

// maxIdleTimeout is the largest IP::idle_timeout, in seconds (the tcp
// profile's idle-timeout takes up to 2^32-1; 2^31-1 keeps the duration
// far from overflowing).
const maxIdleTimeout = 1<<31 - 1

// cmdIPIdleTimeout is IP::idle_timeout [SECONDS|indefinite]: the
// connection's idle timeout in seconds (0 when it has none), or sets it.
// Chosen where F5's page is silent [M]: "indefinite" takes the timeout
// away, as in the tcp profile, and 0 is refused rather than read as the
// profile's "immediate" or as none.
func cmdIPIdleTimeout(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "IP::idle_timeout ?seconds|indefinite?"
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	_, c, err := sess(in, "IP::idle_timeout")
	if err != nil {
		return tcl.Empty, err
	}
	it, ok := c.(IdleTimer)
	if !ok {
		return tcl.Empty, tcl.Errorf("IP::idle_timeout: this virtual server's connections have no idle timeout")
	}
	if len(args) == 1 {
		return tcl.Int(int64((it.FlowIdleTimeout() + time.Second - 1) / time.Second)), nil
	}
	if args[1].String() == "indefinite" {
		it.SetFlowIdleTimeout(0)
		return tcl.Empty, nil
	}
	n, err := args[1].Int64()
	if err != nil || n < 1 || n > maxIdleTimeout {
		return tcl.Empty, tcl.Errorf("IP::idle_timeout: %q is not a number of seconds from 1 to %d, or indefinite", args[1].String(), maxIdleTimeout)
	}
	it.SetFlowIdleTimeout(time.Duration(n) * time.Second)
	return tcl.Empty, nil
}

// sideArg lets port and address commands take an explicit clientside or
// serverside word, as BIG-IP allows.
func sideArg(s *ConnState, args []tcl.Value) Side {
	for _, a := range args[1:] {
		switch a.String() {
		case "clientside":
			return ClientSide
		case "serverside":
			return ServerSide
		}
	}
	return s.side
}

func portCmd(name string, end func(Side) Endpoint) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		side := s.side
		if len(args) > 1 {
			side = sideArg(s, args)
		}
		return tcl.Int(int64(c.Addr(end(side)).Port())), nil
	}
}

func addrCmd(name string, end func(Side) Endpoint) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		s, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		side := s.side
		if len(args) > 1 {
			side = sideArg(s, args)
		}
		e := end(side)
		ap := c.Addr(e)
		if !ap.IsValid() {
			return tcl.Empty, nil
		}
		// An endpoint rarely changes during a connection: its text is
		// made once, not on every request.
		if ce := &s.addrs[e]; ce.ap == ap && ce.text.String() != "" {
			return ce.text, nil
		}
		v := tcl.Str(ap.Addr().Unmap().String())
		s.addrs[e] = addrText{ap: ap, text: v}
		return v, nil
	}
}

// parsePrefix reads "addr", "addr/len" or "addr/dotted-mask".
func parsePrefix(s string) (netip.Prefix, error) {
	if i := strings.IndexByte(s, '%'); i > 0 {
		j := strings.IndexByte(s, '/')
		if j < 0 {
			s = s[:i]
		} else {
			s = s[:i] + s[j:]
		}
	}
	addrPart, maskPart, hasMask := strings.Cut(s, "/")
	a, err := netip.ParseAddr(addrPart)
	if err != nil {
		return netip.Prefix{}, tcl.Errorf("bad IP address %q: expected an IPv4 or IPv6 address, optionally /bits or /mask", s)
	}
	a = a.Unmap()
	bits := a.BitLen()
	if hasMask {
		if n, err := strconv.Atoi(maskPart); err == nil {
			bits = n
		} else if m, err := netip.ParseAddr(maskPart); err == nil && m.Is4() {
			b := m.As4()
			v := uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
			bits = 0
			for v&0x80000000 != 0 {
				bits++
				v <<= 1
			}
		} else {
			return netip.Prefix{}, tcl.Errorf("bad mask %q: expected a prefix length or a dotted mask", maskPart)
		}
	}
	p, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{}, tcl.Errorf("bad mask in %q: %v", s, err)
	}
	return p, nil
}

// cmdIPAddr implements IP::addr a equals b (with masks) and IP::addr a mask m.
func cmdIPAddr(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 4 {
		return tcl.Empty, tcl.WrongArgs("IP::addr addr1[/mask] equals addr2[/mask] | IP::addr addr mask mask")
	}
	a, err := parsePrefix(args[1].String())
	if err != nil {
		return tcl.Empty, err
	}
	switch args[2].String() {
	case "equals":
		b, err := parsePrefix(args[3].String())
		if err != nil {
			return tcl.Empty, err
		}
		bits := min(a.Bits(), b.Bits())
		if a.Addr().Is4() != b.Addr().Is4() {
			return tcl.Bool(false), nil
		}
		pa, _ := a.Addr().Prefix(bits)
		pb, _ := b.Addr().Prefix(bits)
		return tcl.Bool(pa == pb), nil
	case "mask":
		m, err := parsePrefix("0.0.0.0/" + args[3].String())
		if strings.Contains(args[3].String(), ":") || err != nil {
			m, err = parsePrefix("::/" + strings.TrimPrefix(args[3].String(), "/"))
			if err != nil {
				return tcl.Empty, err
			}
		}
		p, err := a.Addr().Prefix(m.Bits())
		if err != nil {
			return tcl.Empty, tcl.Errorf("bad mask %q", args[3].String())
		}
		return tcl.Str(p.Addr().String()), nil
	}
	return tcl.Empty, tcl.Errorf("bad IP::addr operator %q: must be equals or mask", args[2].String())
}

func cmdTCPCollect(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::collect")
	if err != nil {
		return tcl.Empty, err
	}
	length, skip := 0, 0
	if len(args) > 3 {
		return tcl.Empty, tcl.WrongArgs("TCP::collect ?length ?skip??")
	}
	if len(args) > 1 {
		n, err := args[1].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("TCP::collect: bad length %q: expected a byte count", args[1].String())
		}
		length = int(n)
	}
	if len(args) > 2 {
		n, err := args[2].Int64()
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("TCP::collect: bad skip %q: expected a byte count", args[2].String())
		}
		skip = int(n)
	}
	return tcl.Empty, tclErr(c.Collect(s.side, length, skip))
}

func cmdTCPRelease(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::release")
	if err != nil {
		return tcl.Empty, err
	}
	n := -1
	if len(args) == 2 {
		v, err := args[1].Int64()
		if err != nil || v < 0 {
			return tcl.Empty, tcl.Errorf("TCP::release: bad length %q: expected a byte count", args[1].String())
		}
		n = int(v)
	} else if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("TCP::release ?length?")
	}
	return tcl.Empty, tclErr(c.Release(s.side, n))
}

func cmdTCPPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::payload")
	if err != nil {
		return tcl.Empty, err
	}
	return payloadCmd(c, s.side, "TCP::payload", args)
}

// payloadCmd reads or replaces collected data: ?offset? ?length? | length
// | replace offset length data (TCP::payload, HTTP::payload).
func payloadCmd(c Conn, side Side, name string, args []tcl.Value) (tcl.Value, error) {
	var err error
	data := c.Payload(side)
	a := args[1:]
	if len(a) == 0 {
		return tcl.Bytes(data), nil
	}
	switch a[0].String() {
	case "length":
		return tcl.Int(int64(len(data))), nil
	case "replace":
		if len(a) != 4 {
			return tcl.Empty, tcl.WrongArgs(name + " replace offset length data")
		}
		off, err1 := a[1].Int64()
		n, err2 := a[2].Int64()
		if err1 != nil || err2 != nil || off < 0 || n < 0 || int(off) > len(data) {
			return tcl.Empty, tcl.Errorf("%s replace: bad offset or length (payload is %d bytes)", name, len(data))
		}
		// A length past the payload's end replaces up to it (offset plus
		// length must not overflow in the connection's arithmetic).
		n = min(n, int64(len(data))-off)
		return tcl.Empty, tclErr(c.ReplacePayload(side, int(off), int(n), tcl.BytesOf(a[3])))
	}
	off, size := int64(0), int64(0)
	if len(a) == 1 {
		size, err = a[0].Int64()
	} else if len(a) == 2 {
		off, err = a[0].Int64()
		if err == nil {
			size, err = a[1].Int64()
		}
	} else {
		return tcl.Empty, tcl.WrongArgs(name + " ?offset? ?length? | length | replace offset length data")
	}
	if err != nil || off < 0 || size < 0 {
		return tcl.Empty, tcl.Errorf("%s: expected length, offset length, \"length\" or \"replace\"", name)
	}
	if int(off) >= len(data) {
		return tcl.Empty, nil
	}
	end := len(data)
	if size < int64(len(data))-off { // (off+size may overflow)
		end = int(off + size)
	}
	return tcl.Bytes(data[off:end]), nil
}

func cmdTCPRespond(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::respond")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("TCP::respond data")
	}
	return tcl.Empty, tclErr(c.Respond(s.side, tcl.BytesOf(args[1])))
}

func cmdTCPClose(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::close")
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Empty, tclErr(c.Close(s.side))
}

func cmdTCPNotify(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	s, c, err := sess(in, "TCP::notify")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) != 2 {
		return tcl.Empty, tcl.WrongArgs("TCP::notify request|response|eom")
	}
	var k NotifyKind
	switch args[1].String() {
	case "request":
		k = NotifyRequest
	case "response":
		k = NotifyResponse
	case "eom":
		k = NotifyEOM
	default:
		return tcl.Empty, tcl.Errorf("bad TCP::notify kind %q: must be request, response or eom", args[1].String())
	}
	return tcl.Empty, tclErr(c.Notify(s.side, k))
}

func registerLB(t *tcl.Commands) {
	t.Register("LB::select", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "LB::select")
		if err != nil {
			return tcl.Empty, err
		}
		pool, m, err := c.LBSelect()
		if err != nil {
			return tcl.Empty, tcl.Errorf("LB::select: %v", err)
		}
		return tcl.Str(tcl.FormatList("pool", pool, "member", m.Addr().String(), strconv.Itoa(int(m.Port())))), nil
	})
	t.Register("LB::reselect", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "LB::reselect")
		if err != nil {
			return tcl.Empty, err
		}
		d := Decision{Kind: DecideReselect}
		a := args[1:]
		switch {
		case len(a) == 0:
		case a[0].String() == "pool" && len(a) >= 2:
			d.Pool = a[1].String()
			if len(a) >= 4 && a[2].String() == "member" {
				if d.Addr, err = parseHostPort(a[3:]); err != nil {
					return tcl.Empty, err
				}
			} else if len(a) != 2 {
				return tcl.Empty, tcl.WrongArgs("LB::reselect ?pool name ?member addr ?port??? | ?node addr ?port??")
			}
		case a[0].String() == "node" && len(a) >= 2:
			if d.Addr, err = parseHostPort(a[1:]); err != nil {
				return tcl.Empty, err
			}
		default:
			return tcl.Empty, tcl.WrongArgs("LB::reselect ?pool name ?member addr ?port??? | ?node addr ?port??")
		}
		return tcl.Empty, tclErr(c.Decide(d))
	})
	t.Register("LB::server", cmdLBServer)
	t.Register("LB::status", cmdLBStatus)
	t.Register("LB::queue", cmdLBQueue)
	t.Register("LB::down", cmdLBMark(false))
	t.Register("LB::up", cmdLBMark(true))
	t.Register("LB::mode", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "LB::mode")
		if err != nil {
			return tcl.Empty, err
		}
		switch len(args) {
		case 1:
			li, ok := c.(LBInfo)
			if !ok {
				return tcl.Empty, tcl.Errorf("LB::mode: this connection cannot report its pool's mode")
			}
			m, err := li.LBMode("")
			if err != nil {
				return tcl.Empty, tcl.Errorf("LB::mode: %v", err)
			}
			return tcl.Str(m), nil
		case 2:
			return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideLBMode, Mode: args[1].String()}))
		}
		return tcl.Empty, tcl.WrongArgs("LB::mode ?mode?")
	})
	t.Register("LB::detach", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, "LB::detach")
		if err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, tclErr(c.Decide(Decision{Kind: DecideDetach}))
	})
	t.Register("active_members", func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		return poolList(in, args, "active_members", func(c Conn, pool string) ([]netip.AddrPort, error) {
			return c.ActiveMembers(pool)
		})
	})
}

// cmdLBServer: LB::server ?pool|name|addr|port|priority|ratio|weight|route_domain?
// reports the current load-balancing choice; without a field it is the
// list {pool addr port}.
func cmdLBServer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "LB::server")
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) > 2 {
		return tcl.Empty, tcl.WrongArgs("LB::server ?pool|name|addr|port|priority|ratio|weight|route_domain?")
	}
	pool, m, ok := c.LBServer()
	if !ok {
		return tcl.Empty, nil
	}
	addr := m.Addr().Unmap().String()
	name := addr
	named := false
	if ln, ok := c.(LBNamer); ok {
		if name, named = ln.LBServerName(); named {
			addr = name
		}
	}
	if !m.IsValid() && !named {
		// No member chosen yet (CLIENT_ACCEPTED, HTTP_REQUEST): the pool
		// the connection's traffic goes to, as BIG-IP answers there (the
		// idiom `set default_pool [LB::server pool]`); no member fields.
		switch {
		case len(args) == 1 || args[1].String() == "pool":
			return tcl.Str(pool), nil
		case args[1].String() == "port" || args[1].String() == "route_domain":
			return tcl.Int(0), nil
		}
		return tcl.Empty, nil
	}
	if len(args) == 1 {
		return tcl.Str(tcl.FormatList(pool, addr, strconv.Itoa(int(m.Port())))), nil
	}
	switch f := args[1].String(); f {
	case "pool":
		return tcl.Str(pool), nil
	case "addr":
		return tcl.Str(addr), nil
	case "name":
		return tcl.Str(name), nil
	case "port":
		return tcl.Int(int64(m.Port())), nil
	case "route_domain":
		return tcl.Int(0), nil // one route domain: 0
	case "priority", "ratio", "weight":
		li, ok := c.(MemberInfoer)
		if !ok || pool == "" {
			return tcl.Empty, tcl.Errorf("LB::server %s: no pool member information for this connection", f)
		}
		mi, err := li.MemberInfo(pool, m)
		if err != nil {
			return tcl.Empty, tcl.Errorf("LB::server %s: %v", f, err)
		}
		switch f {
		case "priority":
			return tcl.Int(int64(mi.Priority)), nil
		case "ratio":
			return tcl.Int(int64(mi.Ratio)), nil
		}
		return tcl.Int(int64(mi.Weight)), nil
	}
	return tcl.Empty, tcl.Errorf("bad LB::server field %q: must be pool, name, addr, port, priority, ratio, weight or route_domain", args[1].String())
}

// MemberInfoer is the part of LBInfo LB::server priority, ratio and
// weight read: a gtm rule's query has it without the rest.
type MemberInfoer interface {
	MemberInfo(pool string, member netip.AddrPort) (MemberInfo, error)
}

// lbTarget reads the member or node LB::status, LB::down and LB::up
// name: nothing (the flow's current selection), `pool P member A
// ?PORT?`, or `node A` (pool ""); ok is false for any other shape.
func lbTarget(a []tcl.Value) (pool string, m netip.AddrPort, ok bool, err error) {
	switch {
	case len(a) == 0:
		return "", m, true, nil
	case len(a) >= 4 && len(a) <= 5 && a[0].String() == "pool" && a[2].String() == "member":
		m, err = parseHostPort(a[3:])
		return a[1].String(), m, true, err
	case len(a) == 2 && a[0].String() == "node":
		m, err = parseHostPort(a[1:])
		return "", m, true, err
	}
	return "", m, false, nil
}

// MemberMarker is the part of a connection LB::down and LB::up need;
// optional, checked with a type assertion.
type MemberMarker interface {
	// MarkMember marks a pool member down (up false) until its monitors
	// find it up, or lifts the mark. An empty pool and an invalid
	// member mean the flow's current selection; an empty pool alone,
	// the node at member's address.
	MarkMember(pool string, member netip.AddrPort, up bool) error
}

// cmdLBMark is LB::down and LB::up ?pool P member A ?PORT? | node A?:
// a rule marks a member (by default the one the flow is on) down when
// it sees it fail, such as a 5xx answer; its monitors probe at once and
// bring it back if they find it up (BIG-IP's clouddocs "LB::down").
func cmdLBMark(up bool) tcl.CmdFunc {
	name := "LB::down"
	if up {
		name = "LB::up"
	}
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		_, c, err := sess(in, name)
		if err != nil {
			return tcl.Empty, err
		}
		pool, m, ok, err := lbTarget(args[1:])
		if err != nil {
			return tcl.Empty, err
		}
		if !ok {
			return tcl.Empty, tcl.WrongArgs(name + " ?pool name member addr ?port? | node addr?")
		}
		mm, ok := c.(MemberMarker)
		if !ok {
			return tcl.Empty, tcl.Errorf("%s: this virtual server's connections have no pool members to mark", name)
		}
		if err := mm.MarkMember(pool, m, up); err != nil {
			return tcl.Empty, tcl.Errorf("%s: %v", name, err)
		}
		return tcl.Empty, nil
	}
}

// lbStates are the states LB::status reports and can be asked about.
var lbStates = map[string]bool{"up": true, "down": true, "session_enabled": true, "session_disabled": true}

// cmdLBStatus: LB::status ?pool P member A ?port? | node A? ?STATE?: the
// member's state, or whether it is in STATE.
func cmdLBStatus(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "LB::status")
	if err != nil {
		return tcl.Empty, err
	}
	a := args[1:]
	want := ""
	if n := len(a); n > 0 && lbStates[a[n-1].String()] {
		want = a[n-1].String()
		a = a[:n-1]
	}
	pool, m, ok, err := lbTarget(a)
	if err != nil {
		return tcl.Empty, err
	}
	if !ok {
		return tcl.Empty, tcl.WrongArgs("LB::status ?pool name member addr ?port? | node addr? ?up|down|session_enabled|session_disabled?")
	}
	st, err := c.MemberStatus(pool, m)
	if err != nil {
		return tcl.Empty, tcl.Errorf("LB::status: %v", err)
	}
	if want != "" {
		return tcl.Bool(st == want), nil
	}
	return tcl.Str(st), nil
}

// lbQueueForms is LB::queue's usage.
const lbQueueForms = "LB::queue on ?pool? | limit depth|time ?pool? | depth ?one|all? ?pool?"

// cmdLBQueue: LB::queue on ?pool? (queueing is on), limit depth|time
// ?pool? (its limits, time in ms), depth ?one|all? ?pool? (the
// connections waiting now; one queue per pool, so one and all agree).
func cmdLBQueue(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	_, c, err := sess(in, "LB::queue")
	if err != nil {
		return tcl.Empty, err
	}
	a := args[1:]
	if len(a) == 0 {
		return tcl.Empty, tcl.WrongArgs(lbQueueForms)
	}
	form, a := a[0].String(), a[1:]
	what := ""
	switch form {
	case "on":
	case "limit":
		if len(a) == 0 || a[0].String() != "depth" && a[0].String() != "time" {
			return tcl.Empty, tcl.WrongArgs(lbQueueForms)
		}
		what, a = a[0].String(), a[1:]
	case "depth":
		if len(a) > 0 && (a[0].String() == "one" || a[0].String() == "all") {
			a = a[1:]
		}
	default:
		return tcl.Empty, tcl.Errorf("bad LB::queue option %q: must be on, limit or depth", form)
	}
	if len(a) > 1 {
		return tcl.Empty, tcl.WrongArgs(lbQueueForms)
	}
	pool := ""
	if len(a) == 1 {
		pool = a[0].String()
	}
	lq, ok := c.(LBQueuer)
	if !ok {
		return tcl.Empty, tcl.Errorf("LB::queue: this connection has no connection queue")
	}
	q, err := lq.LBQueue(pool)
	if err != nil {
		return tcl.Empty, tcl.Errorf("LB::queue: %v", err)
	}
	switch {
	case form == "on":
		return tcl.Bool(q.On), nil
	case what == "depth":
		return tcl.Int(int64(q.DepthLimit)), nil
	case what == "time":
		return tcl.Int(int64(q.TimeLimit)), nil
	}
	return tcl.Int(int64(q.Depth)), nil
}
