package mblbvs

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/fwdproxy"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// cloneRequest is the engine's Clone: each request of a virtual with
// clone pools goes to a member of each clone pool chosen for it, on a
// connection of its own (dataplane/clone), which ends once the request is
// written. Without clone pools it costs the snapshot's load.
func (mv *VS) cloneRequest(_ netip.AddrPort, received, sent []byte) {
	snap := mv.vs.Snap.Load()
	if snap == nil || snap.Clone == nil {
		return
	}
	f := snap.Clone.Start()
	if f == nil {
		return
	}
	f.Client(received)
	f.Server(sent)
	f.Close()
}

var _ rules.Cloner = (*mblbRules)(nil)

// ruleCloneKey is one clone command's target on a client: a second run of
// the same command (the next request's HTTP_REQUEST) finds it.
type ruleCloneKey struct {
	pool   string
	member netip.AddrPort
	server bool
}

// Clone implements rules.Cloner on http and message-based virtuals. In
// CLIENT_ACCEPTED, before the client's first request, it gives the
// client's requests from then on to one clone member on a connection of
// the client's own, which ends when the client's does: as the virtual's
// clone pools copy them (whole requests, as the client sent them or,
// serverside, as their members get them), but one connection for the
// client rather than one per request [M], so that the clone member sees
// the client's requests in order as on a standard virtual.
//
// In HTTP_REQUEST it does the same from the request the event runs on:
// that request (clientside as the client sent it, serverside as its
// member gets it, with the rule's edits) and every later one of the
// client go to the clone member. BIG-IP's clone is a setting of the
// connection: once a rule turned it on, the connection's traffic is
// copied from that point whatever later requests are [M]; a clone run
// again on a later request (the same pool, member and side) opens no
// second copy. An HTTP/2 or HTTP/3 client's other lanes take the clone
// at their next request (OnHTTPRequest).
//
// In HTTP_REQUEST_DATA (after HTTP::collect) the same: a whole request
// is built for its member after the event, so it is copied with the
// rest; a streamed upload's body is not copied, as the clone pools do
// not copy it, and its later requests are.
//
// Elsewhere it is skipped and counted as dropped: the engine has framed
// and sent the request by HTTP_RESPONSE, and the commit warned.
func (r *mblbRules) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	f := r.f
	switch {
	case ev == rules.ClientAccepted && r.accepting:
	case (ev == rules.HTTPRequest || ev == rules.HTTPRequestData) && r.httpEv == ev && f.sess != nil:
	default:
		f.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	k := ruleCloneKey{pool: pool, member: member, server: side == rules.ServerSide}
	for _, c := range f.ruleCloned {
		if c == k {
			return nil // cloned already
		}
	}
	set, d, ok, err := state.RuleClone(*f.mv.env.Pools(), f.vs, r.snap, f.Virtual, pool, member)
	if !ok {
		return err
	}
	f.ruleCloned = append(f.ruleCloned, k)
	f.ruleClone.Store(set.With(f.ruleClone.Load(), d, k.server))
	if f.sess != nil {
		// CLIENT_ACCEPTED runs before the session does; HTTP_REQUEST on
		// the reader of the lane it came on (f.sess, http2.go).
		f.sess.SetClone(f.cloneRule)
	}
	return nil
}

// cloneRule is the client's engine sessions' clone (SetClone) once a rule
// cloned it.
func (f *mblbFlow) cloneRule(received, sent []byte) {
	c := f.ruleClone.Load()
	c.Client(received)
	c.Server(sent)
}

// laneClone gives the session of the request whose HTTP_REQUEST is about
// to run (f.sess) the client's rule clone, when a rule cloned on another
// lane of an HTTP/2 or HTTP/3 client: a load per request, and nothing
// more for clients a rule did not clone. Under the rules' lock, on the
// lane's reader.
func (f *mblbFlow) laneClone() {
	if f.ruleClone.Load() != nil && f.sess != nil {
		f.sess.SetClone(f.cloneRule)
	}
}

// The explicit forward proxy (fwdproxy.go) copies its client's
// connection as a standard virtual does, not request by request: the
// proxy reads the client's bytes itself (fwdproxy.SessionOptions.Copy),
// so clientside pools get them as the client sent them (requests,
// bodies, a CONNECT tunnel's bytes; an intercepted tunnel's decrypted)
// and serverside pools as the origins, the pool's member or the
// tunnel's far end get them (heads as the proxy rewrote them). One
// clone connection per clone pool for the client's connection [M: its
// requests go to many origins, none of which is a pool member the copy
// could follow]. f.ruleClone holds them; f.finish closes them.

// fwdCopy is an explicit-proxy client's fwdproxy.Copier.
type fwdCopy struct{ f *mblbFlow }

var _ fwdproxy.Copier = fwdCopy{}

// Client implements fwdproxy.Copier.
func (c fwdCopy) Client(p []byte) { c.f.ruleClone.Load().Client(p) }

// Server implements fwdproxy.Copier.
func (c fwdCopy) Server(p []byte) { c.f.ruleClone.Load().Server(p) }

var _ rules.Cloner = (*fwdRules)(nil)

// Clone implements rules.Cloner on the explicit proxy: in
// CLIENT_ACCEPTED, which runs before the proxy reads the client's first
// byte, the client's connection gets one more clone connection (see
// fwdCopy). In a later event (HTTP_REQUEST, HTTP_PROXY_REQUEST ...) the
// request's head was read already and the copy would start part-way:
// it is skipped and counted as dropped (the commit warned).
func (r *fwdRules) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	f := r.f
	if ev != rules.ClientAccepted || r.ev != rules.ClientAccepted || r.snap == nil {
		f.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	set, d, ok, err := state.RuleClone(*f.mv.env.Pools(), f.vs, r.snap, f.Virtual, pool, member)
	if !ok {
		return err
	}
	f.ruleClone.Store(set.Add(f.ruleClone.Load(), d, side == rules.ServerSide))
	return nil
}
