package mblbvs

import (
	"errors"
	"fmt"
	"net/netip"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/irules"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// fwdRules runs the iRules of one explicit-proxy client: CLIENT_ACCEPTED,
// HTTP_REQUEST, HTTP_PROXY_REQUEST or HTTP_PROXY_CONNECT, HTTP_RESPONSE,
// HTTP_PROXY_RESPONSE and CLIENT_CLOSED (and the virtual's policies,
// compiled to rules that run first), with the rules package's HTTP::
// commands over the heads fwdproxy hands it (rules.HTTPState). The proxy
// serves one request at a time on the client's goroutine, so no lock is
// needed. A request goes to the origin it names, or with HTTP::proxy
// disable to the virtual's pool: choosing a pool, member or node is the
// rule's error.
type fwdRules struct {
	f    *mblbFlow
	prog *rules.Program
	sess *rules.ConnState
	rules.HTTPState
	ev      rules.Event
	hop     netip.AddrPort
	verdict irules.Verdict
	// toPool: the current request is not proxied but goes to the
	// virtual's pool (host-names, HTTP::proxy disable).
	toPool bool
	// route is how the current request leaves (HTTP::proxy chain,
	// iptuple, uri-rewrite), chained the virtual it is chained through
	// ("" when chained by address, or not).
	route   fwdproxy.Route
	chained string
	// snap is the client's snapshot when the client's bytes are copied
	// (clone.go, fwdCopy); nil: a rule's clone is skipped.
	snap *state.VirtualSnap
}

var (
	_ fwdproxy.Rules        = (*fwdRules)(nil)
	_ rules.HTTPConn        = (*fwdRules)(nil)
	_ rules.HTTPProxyConn   = (*fwdRules)(nil)
	_ rules.HTTPProxySwitch = (*fwdRules)(nil)
	_ rules.HTTPProxyRoute  = (*fwdRules)(nil)
)

// newFwdRules is the rule view of f, nil when the virtual has no rule.
func newFwdRules(f *mblbFlow, prog *rules.Program) *fwdRules {
	if prog == nil {
		return nil
	}
	r := &fwdRules{f: f, prog: prog}
	r.sess = prog.NewConnState(r)
	return r
}

// run runs ev when the rules handle it; false means the rule ended the
// client (reject, drop, a failure), which the caller carries out.
func (r *fwdRules) run(ev rules.Event) error {
	r.verdict = irules.GoOn
	if !r.prog.Handles(ev) {
		return nil
	}
	r.ev = ev
	err := r.sess.Run(ev)
	r.ev = rules.RuleInit
	r.f.mv.logRuleError(r.f.Virtual, ev, err)
	return err
}

// accepted runs CLIENT_ACCEPTED: false means the client is to be ended
// (reset when reset).
func (r *fwdRules) accepted() (ok, reset bool) {
	err := r.run(rules.ClientAccepted)
	if err != nil || r.verdict == irules.Reject {
		return false, true
	}
	return r.verdict == irules.GoOn, false
}

// end runs CLIENT_CLOSED and gives the session back.
func (r *fwdRules) end() {
	r.run(rules.ClientClosed)
	r.sess.Release()
}

// event runs ev over x's head (a response's when resp) and records in x
// what the rules decided.
func (r *fwdRules) event(ev rules.Event, x *fwdproxy.RuleEvent, resp bool) error {
	if !r.prog.Handles(ev) {
		return nil
	}
	head := &r.HTTPState.Request
	if resp {
		head = &r.HTTPState.Response
		if err := head.Reset(x.Head, true); err != nil {
			return err
		}
		r.HasResponse = true
	}
	r.hop, r.toPool = x.Hop, x.ToPool
	if !resp {
		r.route = x.Route
	}
	err := r.run(ev)
	defer r.ClearActions()
	if err != nil {
		return err
	}
	x.ToPool = r.toPool
	if !resp {
		x.Route = r.route
	}
	switch r.verdict {
	case irules.Reject:
		x.Reset = true
		return nil
	case irules.Drop:
		x.Close = true
		return nil
	case irules.Close:
		x.CloseAfter = true
	}
	for _, a := range r.Actions {
		switch a.Kind {
		case rules.HTTPRespond:
			x.Answer, x.KeepAlive = a.Data, a.KeepAlive && !a.Reset
			if a.Reset {
				x.Reset = true
			}
		case rules.HTTPClose:
			x.CloseAfter = true
		}
	}
	if head.Modified() {
		x.Edited = head.AppendTo(nil)
	}
	return nil
}

// Request implements fwdproxy.Rules (HTTP_REQUEST): the request becomes
// the current one.
func (r *fwdRules) Request(x *fwdproxy.RuleEvent) error {
	if err := r.HTTPState.Request.Reset(x.Head, false); err != nil {
		return err
	}
	r.HasRequest, r.HasResponse = true, false
	r.RequestNum++
	r.hop = netip.AddrPort{}
	r.chained = ""
	return r.event(rules.HTTPRequest, x, false)
}

// Proxy implements fwdproxy.Rules: HTTP_PROXY_REQUEST, or
// HTTP_PROXY_CONNECT for a CONNECT, over the request as HTTP_REQUEST left
// it, with HTTP::proxy naming the origin.
func (r *fwdRules) Proxy(x *fwdproxy.RuleEvent, connect bool) error {
	ev := rules.HTTPProxyRequest
	if connect {
		ev = rules.HTTPProxyConnect
	}
	if !r.prog.Handles(ev) {
		return nil
	}
	if err := r.HTTPState.Request.Reset(x.Head, false); err != nil {
		return err
	}
	return r.event(ev, x, false)
}

// Response implements fwdproxy.Rules (HTTP_RESPONSE).
func (r *fwdRules) Response(x *fwdproxy.RuleEvent) error {
	return r.event(rules.HTTPResponse, x, true)
}

// ProxyResponse implements fwdproxy.Rules (HTTP_PROXY_RESPONSE, over
// the answer to a CONNECT).
func (r *fwdRules) ProxyResponse(x *fwdproxy.RuleEvent) error {
	return r.event(rules.HTTPProxyResponse, x, true)
}

// HTTPProxyEnable implements rules.HTTPProxySwitch: HTTP::proxy
// disable sends the request to the virtual's pool instead of the origin
// it names, enable proxies it again; before the proxy connects only.
func (r *fwdRules) HTTPProxyEnable(on bool) error {
	switch r.ev {
	case rules.HTTPRequest, rules.HTTPProxyRequest, rules.HTTPProxyConnect:
		r.toPool = !on
		return nil
	}
	return fmt.Errorf("HTTP::proxy enable|disable works in HTTP_REQUEST, HTTP_PROXY_REQUEST and HTTP_PROXY_CONNECT: in %s the request has gone", r.ev)
}

// HTTPProxying implements rules.HTTPProxySwitch.
func (r *fwdRules) HTTPProxying() bool { return !r.toPool }

// routing refuses a route chosen after the proxy connected.
func (r *fwdRules) routing(what string) error {
	switch r.ev {
	case rules.HTTPRequest, rules.HTTPProxyRequest, rules.HTTPProxyConnect:
		return nil
	}
	return fmt.Errorf("HTTP::proxy %s works in HTTP_REQUEST, HTTP_PROXY_REQUEST and HTTP_PROXY_CONNECT: in %s the request has gone", what, r.ev)
}

// HTTPProxyChain implements rules.HTTPProxyRoute: the request goes
// through the virtual server named, connected at its destination as any
// client would (so its pool of parent proxies, its SNAT and its rules
// apply), or through the proxy at hop. A virtual without one address and
// port, or this virtual itself, cannot be chained through.
func (r *fwdRules) HTTPProxyChain(virtual string, hop netip.AddrPort) error {
	if err := r.routing("chain"); err != nil {
		return err
	}
	if virtual != "" {
		var vs *state.Virtual
		if r.f.mv.env.Virtual != nil {
			vs = r.f.mv.env.Virtual(virtual)
		}
		if vs == nil {
			return fmt.Errorf("HTTP::proxy chain %s: no such virtual server", virtual)
		}
		if vs == r.f.vs {
			return fmt.Errorf("HTTP::proxy chain %s: a virtual server cannot chain through itself", virtual)
		}
		d := vs.Snap.Load().Cfg.Destination
		if !d.IsValid() || d.Port() == 0 || d.Addr().IsUnspecified() {
			return fmt.Errorf("HTTP::proxy chain %s: the virtual server has no single address and port to connect to", virtual)
		}
		hop = d
	}
	old := r.route.Chain
	r.route.Chain, r.chained = hop, virtual
	switch {
	case hop.IsValid():
		r.hop = hop
	case r.route.Hop.IsValid():
		r.hop = r.route.Hop
	case r.hop == old:
		r.hop = netip.AddrPort{} // the name is resolved once the rule is done
	}
	return nil
}

// HTTPProxyChained implements rules.HTTPProxyRoute.
func (r *fwdRules) HTTPProxyChained() string {
	if r.chained != "" || !r.route.Chain.IsValid() {
		return r.chained
	}
	return r.route.Chain.String()
}

// HTTPProxyURIRewrite implements rules.HTTPProxyRoute: disable sends
// the absolute URI to the origin as the client wrote it.
func (r *fwdRules) HTTPProxyURIRewrite(on bool) error {
	if err := r.routing("uri-rewrite"); err != nil {
		return err
	}
	r.route.Absolute = !on
	return nil
}

// HTTPProxyURIRewriting implements rules.HTTPProxyRoute.
func (r *fwdRules) HTTPProxyURIRewriting() bool { return !r.route.Absolute }

// HTTPProxySetHop implements rules.HTTPProxyRoute (HTTP::proxy iptuple
// ADDR PORT): the request goes to hop, its URI and Host unchanged; a
// chain, when set, still comes first.
func (r *fwdRules) HTTPProxySetHop(hop netip.AddrPort) error {
	if err := r.routing("iptuple"); err != nil {
		return err
	}
	r.route.Hop = hop
	if !r.route.Chain.IsValid() {
		r.hop = hop
	}
	return nil
}

// HTTPDo implements rules.HTTPConn: HTTP::respond, HTTP::redirect and
// HTTP::close are carried out; the other actions have no meaning on the
// explicit proxy and are refused, so that a rule relying on one fails
// visibly.
func (r *fwdRules) HTTPDo(a rules.HTTPAction) error {
	switch r.ev {
	case rules.HTTPRequest, rules.HTTPProxyRequest, rules.HTTPProxyConnect, rules.HTTPResponse, rules.HTTPProxyResponse:
	default:
		return fmt.Errorf("%s works in HTTP_REQUEST, HTTP_PROXY_REQUEST, HTTP_PROXY_CONNECT, HTTP_RESPONSE and HTTP_PROXY_RESPONSE on an explicit proxy", a.Kind)
	}
	switch a.Kind {
	case rules.HTTPRespond, rules.HTTPClose:
		return r.HTTPState.HTTPDo(a)
	}
	return fmt.Errorf("%s is not supported on an explicit proxy", a.Kind)
}

// HTTPServerAgent implements rules.HTTPServerAgent (server-agent-name).
func (r *fwdRules) HTTPServerAgent() string { return r.f.mv.cfg.Request.HTTP.ServerAgent }

// HTTPProxyNextHop implements rules.HTTPProxyConn: the origin, once the
// proxy resolved it (the first address it tries [M]).
func (r *fwdRules) HTTPProxyNextHop() (netip.AddrPort, bool) { return r.hop, r.hop.IsValid() }

// Addr implements rules.Conn: the server is the origin, once resolved.
func (r *fwdRules) Addr(e rules.Endpoint) netip.AddrPort {
	switch e {
	case rules.EndClient:
		return r.f.Client
	case rules.EndVirtual:
		return r.f.Local
	case rules.EndServer:
		return r.hop
	}
	return netip.AddrPort{}
}

// Protocol implements rules.Conn.
func (r *fwdRules) Protocol() int { return 6 }

// errFwdNoPool refuses what needs a pool or a server connection.
var errFwdNoPool = errors.New("not supported on an explicit proxy: each request goes to the origin it names")

// Decide implements rules.Conn: reject and drop; the explicit proxy has
// no pool, member or node to choose.
func (r *fwdRules) Decide(d rules.Decision) error {
	switch d.Kind {
	case rules.DecideReject:
		r.verdict = irules.Reject
	case rules.DecideDrop, rules.DecideDiscard:
		r.verdict = irules.Drop
	default:
		return fmt.Errorf("%s is %v", d.Kind, errFwdNoPool)
	}
	return nil
}

// Collect implements rules.Conn.
func (r *fwdRules) Collect(rules.Side, int, int) error {
	return errors.New("TCP::collect is " + errFwdNoPool.Error())
}

// Release implements rules.Conn.
func (r *fwdRules) Release(rules.Side, int) error { return nil }

// Payload implements rules.Conn.
func (r *fwdRules) Payload(rules.Side) []byte { return nil }

// ReplacePayload implements rules.Conn.
func (r *fwdRules) ReplacePayload(rules.Side, int, int, []byte) error {
	return errors.New("TCP::payload replace is " + errFwdNoPool.Error())
}

// Respond implements rules.Conn.
func (r *fwdRules) Respond(rules.Side, []byte) error {
	return errors.New("TCP::respond is not supported on an explicit proxy: use HTTP::respond")
}

// Close implements rules.Conn (TCP::close): the client is closed after
// the event.
func (r *fwdRules) Close(rules.Side) error {
	if r.verdict == irules.GoOn {
		r.verdict = irules.Close
	}
	return nil
}

// Notify implements rules.Conn.
func (r *fwdRules) Notify(rules.Side, rules.NotifyKind) error {
	return errors.New("TCP::notify is " + errFwdNoPool.Error())
}

// LBSelect implements rules.Conn.
func (r *fwdRules) LBSelect() (string, netip.AddrPort, error) {
	return "", netip.AddrPort{}, errors.New("LB::select is " + errFwdNoPool.Error())
}

// LBServer implements rules.Conn: the origin, once resolved, with no
// pool.
func (r *fwdRules) LBServer() (string, netip.AddrPort, bool) { return "", r.hop, r.hop.IsValid() }

// MemberStatus implements rules.Conn.
func (r *fwdRules) MemberStatus(string, netip.AddrPort) (string, error) {
	return "", errors.New("LB::status is " + errFwdNoPool.Error())
}

// ActiveMembers implements rules.Conn.
func (r *fwdRules) ActiveMembers(string) ([]netip.AddrPort, error) {
	return nil, errors.New("active_members is " + errFwdNoPool.Error())
}
