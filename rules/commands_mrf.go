package rules

import (
	"net/netip"
	"sort"
	"strconv"
	"strings"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/rules/tcl"
)

// MRState is what the GENERICMESSAGE:: and MR:: commands act on: the
// message in hand in the GENERICMESSAGE_ and MR_ events and the
// connection's router. The host binds the message with BeginMR, runs the
// event, then reads what the rule asked from the message itself (Drop,
// Return, Retry, its routes), under the lock its events run under.
type MRState struct {
	msg    *mrf.Message
	router *mrf.Router
	// Transport is the connection's transport ("virtual /Common/vs").
	transport string
	// peerName is GENERICMESSAGE::peer name's: the name the client's
	// connection goes by.
	peerName string
	// made are the messages GENERICMESSAGE::message create made in the
	// event, for the host to route once it ran.
	made []*mrf.Message
}

// BeginMR binds message m of router r to the commands of the event about
// to run; transport names the connection's virtual server.
func (s *ConnState) BeginMR(m *mrf.Message, r *mrf.Router, transport string) {
	if s.mr == nil {
		s.mr = &MRState{}
	}
	s.mr.msg, s.mr.router, s.mr.transport, s.mr.made = m, r, transport, nil
}

// TakeMRMade are the messages the event made (GENERICMESSAGE::message
// create), which the host routes from the client's connection as if the
// client had sent them, their ingress events running, once the event's
// lock is let go.
func (s *ConnState) TakeMRMade() []*mrf.Message {
	if s.mr == nil {
		return nil
	}
	made := s.mr.made
	s.mr.made = nil
	return made
}

// EndMR forgets the message once the event ran.
func (s *ConnState) EndMR() {
	if s.mr != nil {
		s.mr.msg = nil
	}
}

func registerMRF(t *tcl.Commands) {
	for name, fn := range map[string]tcl.CmdFunc{
		"GENERICMESSAGE::message": cmdGMMessage,
		"GENERICMESSAGE::peer":    cmdGMPeer,
		"GENERICMESSAGE::route":   cmdGMRoute,
		"MR::message":             cmdMRMessage,
		"MR::peer":                cmdMRPeer,
		"MR::store":               cmdMRStore,
		"MR::restore":             cmdMRRestore,
		"MR::instance":            mrConst("MR::instance", tcl.Int(0)),
		"MR::protocol":            cmdMRProtocol,
		"MR::transport":           cmdMRTransport,
		"MR::payload":             cmdMRPayload,
		"MR::collect":             mrNoop("MR::collect"),
		"MR::release":             mrNoop("MR::release"),
		"MR::return":              mrFlag("MR::return", func(m *mrf.Message) { m.Return = true }),
		"MR::retry":               mrFlag("MR::retry", func(m *mrf.Message) { m.Retry = true }),
		"MR::max_retries":         cmdMRMaxRetries,
		"MR::flow_id":             cmdMRFlowID,
		"MR::connection_mode":     cmdMRConnMode,
		"MR::connection_instance": cmdMRConnInstance,
		"MR::available_for_routing": func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
			// One traffic process: every connection is available for
			// routing; setting the flag is accepted and changes nothing.
			if _, err := mrMsg(in, "MR::available_for_routing", false); err != nil {
				return tcl.Empty, err
			}
			return tcl.Bool(true), nil
		},
		"MR::prime":                cmdMRPrime,
		"MR::connect_back_port":    cmdMRConnectBackPort,
		"MR::equivalent_transport": cmdMREquivalent,
		"MR::ignore_peer_port":     cmdMRPortMatch("MR::ignore_peer_port", false),
		"MR::always_match_port":    cmdMRPortMatch("MR::always_match_port", true),
		"MR::stream":               cmdMRStream,
	} {
		t.Register(name, fn)
	}
}

// mrMsg is the state of the event in hand; with msg, an error names cmd
// where no message is in hand.
func mrMsg(in *tcl.Interp, cmd string, msg bool) (*MRState, error) {
	s, _, err := sess(in, cmd)
	if err != nil {
		return nil, err
	}
	if s.mr == nil || (msg && s.mr.msg == nil) {
		return nil, tcl.Errorf("%s: no message in %s (valid in the GENERICMESSAGE_ and MR_ events of a virtual with a generic protocol profile)", cmd, s.event)
	}
	return s.mr, nil
}

// mrRouter is mrMsg for the commands that change the connection's
// router (its routes and peers).
func mrRouter(in *tcl.Interp, cmd string) (*MRState, error) {
	st, err := mrMsg(in, cmd, false)
	if err != nil {
		return nil, err
	}
	if st.router == nil {
		return nil, tcl.Errorf("%s: no router on this connection", cmd)
	}
	return st, nil
}

func mrConst(cmd string, v tcl.Value) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if len(args) != 1 {
			return tcl.Empty, tcl.WrongArgs(cmd)
		}
		if _, err := mrMsg(in, cmd, false); err != nil {
			return tcl.Empty, err
		}
		return v, nil
	}
}

// mrNoop is MR::collect and MR::release: a generic message is read whole
// before its events run, so there is nothing to wait for or let go [M].
func mrNoop(cmd string) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		if _, err := mrMsg(in, cmd, false); err != nil {
			return tcl.Empty, err
		}
		return tcl.Empty, nil
	}
}

func mrFlag(cmd string, set func(*mrf.Message)) tcl.CmdFunc {
	return func(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
		st, err := mrMsg(in, cmd, true)
		if err != nil {
			return tcl.Empty, err
		}
		set(st.msg)
		return tcl.Empty, nil
	}
}

func boolArg(cmd string, v tcl.Value) (bool, error) {
	b, err := v.Truth()
	if err != nil {
		return false, tcl.Errorf("%s: expected a boolean, got %q", cmd, v.String())
	}
	return b, nil
}

// cmdGMMessage is GENERICMESSAGE::message: src, dst, is_request,
// no_response, length, text, data, drop, status.
func cmdGMMessage(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "GENERICMESSAGE::message"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " src|dst|is_request|no_response|length|text|data|drop|status ?value?")
	}
	st, err := mrMsg(in, cmd, true)
	if err != nil {
		return tcl.Empty, err
	}
	m, sub, a := st.msg, args[1].String(), args[2:]
	set := len(a) == 1
	switch sub {
	case "src", "source", "dst", "dest", "destination":
		p := &m.Src
		if sub[0] == 'd' {
			p = &m.Dst
		}
		if set {
			*p = a[0].String()
			return tcl.Empty, nil
		}
		return tcl.Str(*p), nil
	case "is_request":
		if set {
			b, err := boolArg(cmd, a[0])
			m.Request = b
			return tcl.Empty, err
		}
		return tcl.Bool(m.Request), nil
	case "no_response", "no-response":
		if set {
			b, err := boolArg(cmd, a[0])
			m.Request = !b
			return tcl.Empty, err
		}
		return tcl.Bool(!m.Request), nil
	case "length", "len":
		return tcl.Int(int64(len(m.Data))), nil
	case "text", "data":
		if set {
			m.Data = []byte(a[0].String())
			return tcl.Empty, nil
		}
		if sub == "data" {
			return tcl.Bytes(m.Data), nil
		}
		return tcl.Str(string(m.Data)), nil
	case "drop":
		m.Drop = true
		if len(a) > 0 {
			m.Reason = a[0].String()
		}
		return tcl.Empty, nil
	case "status":
		return tcl.Str(m.Status), nil
	case "create":
		return mrCreate(st, a)
	case "request_sequence_number", "reqseqnum":
		if set {
			n, err := strconv.ParseUint(a[0].String(), 10, 64)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s %s: %q is not a non-negative integer", cmd, sub, a[0].String())
			}
			m.ReqSeq = n
			return tcl.Empty, nil
		}
		return tcl.Int(int64(m.ReqSeq)), nil
	}
	return tcl.Empty, tcl.Errorf("%s: unknown option %q", cmd, sub)
}

// mrCreate is GENERICMESSAGE::message create ?TEXT ?DST??: a new
// message from the client's connection, routed once the event ran, after
// its own GENERICMESSAGE_INGRESS and MR_INGRESS. [M: F5 makes messages
// so in CLIENT_DATA with disable-parser, which openltm does not act on;
// here a message's events make more. A made message's events cannot
// make another, so that a rule cannot loop.]
func mrCreate(st *MRState, a []tcl.Value) (tcl.Value, error) {
	const cmd = "GENERICMESSAGE::message create"
	if len(a) > 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " ?text ?destination??")
	}
	if st.msg.Made {
		return tcl.Empty, tcl.Errorf("%s: a message a rule made cannot make another", cmd)
	}
	o := st.msg.Originator()
	if o == nil {
		return tcl.Empty, tcl.Errorf("%s: the message has no client connection to come from", cmd)
	}
	var text, dst string
	if len(a) > 0 {
		text = a[0].String()
	}
	if len(a) > 1 {
		dst = a[1].String()
	}
	st.made = append(st.made, o.Make([]byte(text), dst))
	return tcl.Empty, nil
}

// cmdMRFlowID is MR::flow_id: the number of the client connection the
// message belongs to (0: a peer's message no client's).
func cmdMRFlowID(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::flow_id"
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs(cmd)
	}
	st, err := mrMsg(in, cmd, true)
	if err != nil {
		return tcl.Empty, err
	}
	if o := st.msg.Originator(); o != nil {
		return tcl.Int(int64(o.ID())), nil
	}
	return tcl.Int(0), nil
}

// cmdGMPeer is GENERICMESSAGE::peer name ?name?: the client
// connection's route name.
func cmdGMPeer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "GENERICMESSAGE::peer"
	if len(args) < 2 || len(args) > 3 || args[1].String() != "name" {
		return tcl.Empty, tcl.WrongArgs(cmd + " name ?name?")
	}
	st, err := mrMsg(in, cmd, false)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 3 {
		st.peerName = args[2].String()
		return tcl.Empty, nil
	}
	return tcl.Str(st.peerName), nil
}

// routeAddrs reads ?src S? ?dst D? and the rest.
func routeAddrs(cmd string, a []tcl.Value) (src, dst string, rest []tcl.Value, err error) {
	for len(a) >= 2 {
		switch a[0].String() {
		case "src":
			src = a[1].String()
		case "dst":
			dst = a[1].String()
		default:
			return src, dst, a, nil
		}
		a = a[2:]
	}
	return src, dst, a, nil
}

// cmdGMRoute is GENERICMESSAGE::route add|delete|lookup ?src S? ?dst D?
// ?peer P ...?: the router's routes added on the fly [M: F5 names the
// subcommands; the argument words are openltm's, after MR::message
// route's].
func cmdGMRoute(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "GENERICMESSAGE::route"
	const usage = cmd + " add|delete|lookup ?src ADDR? ?dst ADDR? ?peer NAME ...?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	st, err := mrRouter(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	src, dst, rest, _ := routeAddrs(cmd, args[2:])
	switch args[1].String() {
	case "add":
		rt := &mrf.Route{Name: "dynamic", Src: src, Dst: dst}
		for len(rest) >= 2 && rest[0].String() == "peer" {
			p := st.router.Peer(rest[1].String())
			if p == nil {
				return tcl.Empty, tcl.Errorf("%s: no peer %q", cmd, rest[1].String())
			}
			rt.Peers = append(rt.Peers, p)
			rest = rest[2:]
		}
		if len(rest) != 0 || len(rt.Peers) == 0 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		st.router.AddRoute(rt)
		return tcl.Empty, nil
	case "delete":
		return tcl.Bool(st.router.DeleteRoute(src, dst)), nil
	case "lookup":
		rt := st.router.Lookup(src, dst)
		if rt == nil {
			return tcl.Empty, nil
		}
		var out []tcl.Value
		for _, p := range rt.Peers {
			out = append(out, tcl.Str(p.Name))
		}
		return tcl.List(out...), nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// cmdMRMessage is MR::message: route, drop, status, nexthop, lasthop,
// originator, retry_count, attempted, and the v14+ subcommands
// (commands_mrf_msg.go).
func cmdMRMessage(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::message"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(cmd + " route|drop|status|nexthop|lasthop|originator|retry_count|attempted|clone|clone_count|clone_id|clone_id_request|existing_connections_only|new_connection_only|outgoing_connection_instance_seed|pick_host|priority|snat ?args?")
	}
	st, err := mrMsg(in, cmd, true)
	if err != nil {
		return tcl.Empty, err
	}
	m, a := st.msg, args[2:]
	switch sub := args[1].String(); sub {
	case "route":
		return mrRoute(m, a)
	case "drop":
		m.Drop = true
		if len(a) > 0 {
			m.Reason = a[0].String()
		}
		return tcl.Empty, nil
	case "status":
		return tcl.Str(m.Status), nil
	case "retry_count":
		return tcl.Int(int64(m.Retries)), nil
	case "nexthop", "lasthop", "originator":
		// The connection a message came from is its originator; the
		// answer's way back is kept by the router, so a nexthop set by a
		// rule is accepted and changes nothing [M].
		if sub == "nexthop" && len(a) > 0 {
			return tcl.Empty, nil
		}
		return tcl.Str("0:" + st.transport), nil
	case "attempted":
		if len(a) > 0 {
			return tcl.Empty, nil
		}
		if m.Member.IsValid() {
			return tcl.List(tcl.Str(m.Member.String())), nil
		}
		return tcl.Empty, nil
	}
	if v, ok, err := mrMessageV14(sessionOf(in), st, m, args[1].String(), a); ok { // commands_mrf_msg.go
		return v, err
	}
	return tcl.Empty, tcl.Errorf("%s %s: unknown subcommand", cmd, args[1].String())
}

// mrRoute is MR::message route's forms: none; ?mode M? peer P ...; and
// ?virtual V|config C? host H|pool P.
func mrRoute(m *mrf.Message, a []tcl.Value) (tcl.Value, error) {
	if len(a) == 0 {
		switch {
		case len(m.RoutePeers) > 0:
			var out []tcl.Value
			for _, p := range m.RoutePeers {
				out = append(out, tcl.Str("peer"), tcl.Str(p))
			}
			return tcl.List(out...), nil
		case m.RouteHost.IsValid():
			return tcl.List(tcl.Str("host"), tcl.Str(m.RouteHost.String())), nil
		case m.RoutePool != "":
			return tcl.List(tcl.Str("pool"), tcl.Str(m.RoutePool)), nil
		}
		return tcl.Empty, nil
	}
	if len(a) == 1 && a[0].String() == "none" {
		m.RoutePeers, m.RouteHost, m.RoutePool = nil, netip.AddrPort{}, ""
		return tcl.Empty, nil
	}
	var peers []string
	ratio := false
	var host netip.AddrPort
	pool := ""
	for len(a) >= 2 {
		w, v := a[0].String(), a[1].String()
		switch w {
		case "peer-selection-mode", "selection-mode", "mode":
			switch v {
			case "ratio":
				ratio = true
			case "sequential", "seq":
			default:
				return tcl.Empty, tcl.Errorf("MR::message route: unknown peer-selection-mode %q", v)
			}
		case "peer":
			peers = append(peers, v)
		case "virtual", "config", "connection-mode", "max-connections":
			// the virtual's own transport; kept.
		case "host":
			ap, err := netip.ParseAddrPort(v)
			if err != nil {
				return tcl.Empty, tcl.Errorf("MR::message route: host %q is not address:port", v)
			}
			host = ap
		case "pool":
			pool = v
		default:
			return tcl.Empty, tcl.Errorf("MR::message route: unknown word %q", w)
		}
		a = a[2:]
		// a peer list continues with bare names
		for w == "peer" && len(a) > 0 && !mrRouteWord(a[0].String()) {
			peers = append(peers, a[0].String())
			a = a[1:]
		}
	}
	if len(a) != 0 || (len(peers) == 0 && !host.IsValid() && pool == "") {
		return tcl.Empty, tcl.WrongArgs("MR::message route none | ?mode sequential|ratio? peer NAME ?NAME ...? | ?virtual V|config C? host ADDR:PORT|pool POOL")
	}
	m.RoutePeers, m.RouteRatio, m.RouteHost, m.RoutePool = peers, ratio, host, pool
	return tcl.Empty, nil
}

func mrRouteWord(w string) bool {
	switch w {
	case "peer", "peer-selection-mode", "selection-mode", "mode", "virtual", "config", "host", "pool", "connection-mode", "max-connections":
		return true
	}
	return false
}

// cmdMRPeer is MR::peer NAME (its definition) or MR::peer NAME ?virtual
// V|config C? pool P|host H ?connection-mode M? ?max-connections N?: a
// peer made on the fly, which MR::message route peer NAME may name.
func cmdMRPeer(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const cmd = "MR::peer"
	const usage = cmd + " NAME ?virtual V|config C? pool POOL|host ADDR:PORT ?connection-mode MODE? ?max-connections N?"
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	st, err := mrRouter(in, cmd)
	if err != nil {
		return tcl.Empty, err
	}
	name := args[1].String()
	if len(args) == 2 {
		p := st.router.Peer(name)
		if p == nil {
			return tcl.Empty, nil
		}
		out := []tcl.Value{tcl.Str("connection-mode"), tcl.Str(p.Mode.String()), tcl.Str("max-connections"), tcl.Int(int64(p.Conns))}
		if p.Host.IsValid() {
			out = append(out, tcl.Str("host"), tcl.Str(p.Host.String()))
		} else {
			out = append(out, tcl.Str("pool"), tcl.Str(p.Pool))
		}
		return tcl.List(out...), nil
	}
	p := &mrf.Peer{Name: name, Conns: 1, Ratio: 1}
	a := args[2:]
	for len(a) >= 2 {
		w, v := a[0].String(), a[1].String()
		switch w {
		case "virtual", "config", "transport":
			p.Transport = v
		case "pool":
			p.Pool = v
		case "host":
			ap, err := netip.ParseAddrPort(v)
			if err != nil {
				return tcl.Empty, tcl.Errorf("%s: host %q is not address:port", cmd, v)
			}
			p.Host = ap
		case "connection-mode":
			cm, ok := mrf.ParseConnMode(v)
			if !ok {
				return tcl.Empty, tcl.Errorf("%s: unknown connection-mode %q", cmd, v)
			}
			p.Mode = cm
		case "max-connections", "number-connections":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return tcl.Empty, tcl.Errorf("%s: %s %q is not a count (1 or more)", cmd, w, v)
			}
			p.Conns = n
		default:
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		a = a[2:]
	}
	if len(a) != 0 || (p.Pool == "" && !p.Host.IsValid()) {
		return tcl.Empty, tcl.WrongArgs(usage)
	}
	st.router.AddPeer(p)
	return tcl.Empty, nil
}

// cmdMRStore is MR::store VAR ...: the variables' values go with the
// message and come back with its answer (MR::restore there).
func cmdMRStore(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::store", true)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) < 2 {
		return tcl.Empty, tcl.WrongArgs("MR::store VAR ?VAR ...?")
	}
	if st.msg.Store == nil {
		st.msg.Store = map[string]string{}
	}
	for _, a := range args[1:] {
		v, err := in.GetVar(a.String())
		if err != nil {
			return tcl.Empty, err
		}
		st.msg.Store[a.String()] = v.String()
	}
	return tcl.Empty, nil
}

// cmdMRRestore is MR::restore ?VAR ...?: the variables stored with the
// message (or with the request it answers), all of them without names.
func cmdMRRestore(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::restore", true)
	if err != nil {
		return tcl.Empty, err
	}
	names := make([]string, 0, len(args))
	for _, a := range args[1:] {
		names = append(names, a.String())
	}
	if len(names) == 0 {
		for n := range st.msg.Store {
			names = append(names, n)
		}
		sort.Strings(names)
	}
	for _, n := range names {
		if v, ok := st.msg.Store[n]; ok {
			if _, err := in.SetVar(n, tcl.Str(v)); err != nil {
				return tcl.Empty, err
			}
		}
	}
	return tcl.Empty, nil
}

// cmdMRTransport is MR::transport: the connection's transport.
func cmdMRTransport(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::transport", false)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.transport), nil
}

// cmdMRPayload is MR::payload ?LENGTH? and MR::payload replace OFFSET
// LENGTH STRING over the message's data.
func cmdMRPayload(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	const usage = "MR::payload ?LENGTH? | MR::payload replace OFFSET LENGTH STRING"
	st, err := mrMsg(in, "MR::payload", true)
	if err != nil {
		return tcl.Empty, err
	}
	d := st.msg.Data
	switch {
	case len(args) == 1:
		return tcl.Bytes(d), nil
	case len(args) == 2:
		n, err := strconv.Atoi(args[1].String())
		if err != nil || n < 0 {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		return tcl.Bytes(d[:min(n, len(d))]), nil
	case len(args) == 5 && args[1].String() == "replace":
		off, err1 := strconv.Atoi(args[2].String())
		n, err2 := strconv.Atoi(args[3].String())
		if err1 != nil || err2 != nil || off < 0 || n < 0 || off > len(d) {
			return tcl.Empty, tcl.WrongArgs(usage)
		}
		end := min(off+n, len(d))
		out := append(append(append([]byte(nil), d[:off]...), args[4].String()...), d[end:]...)
		st.msg.Data = out
		return tcl.Empty, nil
	}
	return tcl.Empty, tcl.WrongArgs(usage)
}

// cmdMRMaxRetries is MR::max_retries ?N?: how many times this message
// may be retried (the router's max-retries to start with).
func cmdMRMaxRetries(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::max_retries", true)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		n, err := strconv.Atoi(args[1].String())
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("MR::max_retries: %q is not a count", args[1].String())
		}
		st.msg.MaxRetries = n
		return tcl.Empty, nil
	}
	return tcl.Int(int64(st.msg.MaxRetries)), nil
}

// cmdMRConnMode is MR::connection_mode: the connection-mode of the peer
// the message was routed to (per-peer before it is routed).
func cmdMRConnMode(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::connection_mode", true)
	if err != nil {
		return tcl.Empty, err
	}
	if st.router != nil && st.msg.Peer != "" {
		if p := st.router.Peer(st.msg.Peer); p != nil {
			return tcl.Str(p.Mode.String()), nil
		}
	}
	return tcl.Str(mrf.PerPeer.String()), nil
}

// cmdMRConnInstance is MR::connection_instance ?N?: which of a peer's
// number-connections the message goes out on (-1: in turn).
func cmdMRConnInstance(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	st, err := mrMsg(in, "MR::connection_instance", true)
	if err != nil {
		return tcl.Empty, err
	}
	if len(args) == 2 {
		n, err := strconv.Atoi(strings.TrimSpace(args[1].String()))
		if err != nil || n < 0 {
			return tcl.Empty, tcl.Errorf("MR::connection_instance: %q is not an instance number", args[1].String())
		}
		st.msg.Instance = n
		return tcl.Empty, nil
	}
	return tcl.Int(int64(max(st.msg.Instance, 0))), nil
}

// cmdMRProtocol is MR::protocol: the connection's message protocol
// (genericmsg, sip, diameter).
func cmdMRProtocol(in *tcl.Interp, args []tcl.Value) (tcl.Value, error) {
	if len(args) != 1 {
		return tcl.Empty, tcl.WrongArgs("MR::protocol")
	}
	st, err := mrMsg(in, "MR::protocol", false)
	if err != nil {
		return tcl.Empty, err
	}
	return tcl.Str(st.protoName()), nil
}

// protoName is the message protocol of the connection's router
// (genericmsg without a router or protocol): MR::protocol's and
// MESSAGE::proto's answer.
func (st *MRState) protoName() string {
	if st.router != nil {
		if p := st.router.Config().Proto; p != nil {
			return p.Name()
		}
	}
	return "genericmsg"
}
