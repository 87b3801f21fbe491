package udp

import (
	"bytes"
	"sync"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/radius"
)

// RADIUS (the radius profile on a UDP virtual): each client datagram is
// one RADIUS request (RFC 2865, 2866), checked and balanced by itself as
// datagram-load-balancing does; anything else (a short or malformed
// packet, a response code from the client) is dropped and counted [M].
// With persist-avp the attribute's value (Calling-Station-Id, ...) keys
// a universal persistence record [M: the mode BIG-IP shows them under is
// not known], so that every request of one subscriber reaches one
// member, whatever NAS port it came from; a request without the
// attribute persists as the flow would without the profile. A
// retransmission (the same identifier and Request Authenticator from
// the same client, RFC 5080 §2.2.2) goes to the member the first copy
// went to, without balancing. Members' answers go back to the client.
//
// CLIENT_DATA and SERVER_DATA see the packet; RADIUS:: commands edit it.
// When they did and the clients data group holds the client's secret,
// the packet is signed again: a request's Message-Authenticator (and an
// accounting, CoA or Disconnect request's authenticator), a response's
// Message-Authenticator and Response Authenticator, computed with the
// authenticator of the request as the client sent it, which the client
// checks. Without a secret the edited packet goes as it is [M]. A flow
// without the profile pays one nil check per datagram.

// radiusState is a flow's RADIUS state: the client's secret and the
// requests in flight by identifier.
type radiusState struct {
	cfg    *config.RADIUSProfile
	secret []byte // nil: unknown

	mu      sync.Mutex
	pending map[uint8]radiusPending
}

// radiusPending is a request sent to a member: its leg, the
// authenticator the client sent and the one the member got.
type radiusPending struct {
	lg             *leg
	client, member [16]byte
}

// newRADIUSState is the state of a flow of client f on a virtual with
// profile rc (nil: none).
func newRADIUSState(rc *config.RADIUSProfile, f *flow) *radiusState {
	if rc == nil {
		return nil
	}
	return &radiusState{cfg: rc, secret: rc.Secret(f.Client.Addr()), pending: map[uint8]radiusPending{}}
}

// radiusIn takes client datagram b (sent: as the client sent it, before
// CLIENT_DATA): checked, signed again when a rule edited it, keyed for
// persistence. again is the member's leg when b repeats a request in
// flight; ok false drops b.
func (f *flow) radiusIn(b, sent []byte) (out []byte, again *leg, ok bool) {
	rs := f.rad
	n, err := radius.Check(b)
	if err != nil || !radius.IsRequest(radius.Code(b)) {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return nil, nil, false
	}
	b = b[:n]
	if n0, err := radius.Check(sent); err == nil && radius.ID(sent) == radius.ID(b) {
		if rs.secret != nil && !bytes.Equal(b, sent[:n0]) {
			b = append([]byte(nil), b...) // signed in place below
			radius.SignRequest(b, rs.secret)
		}
		rs.mu.Lock()
		p, had := rs.pending[radius.ID(b)]
		rs.mu.Unlock()
		if had && p.client == radius.Authenticator(sent) && !p.lg.gone.Load() && p.lg.member != nil && p.lg.member.Persistable() {
			return b, p.lg, true
		}
	}
	if t := rs.cfg.PersistAVP; t != 0 {
		if v, found := radius.Attr(b, radius.AttrID{Type: t}, 0); found && len(v) > 0 {
			f.persists = true
			f.pers = persistDecision{key: persist.StringKey(persist.Universal, string(v)), timeout: config.DefaultPersistTimeout}
			f.persisted = f.persistLookup
		} else {
			f.persists, f.pers = f.basePersists, f.basePers
		}
	}
	return b, nil, true
}

// radiusSent records request b, sent to lg; sent is the client's.
func (f *flow) radiusSent(lg *leg, b, sent []byte) {
	if len(b) < radius.HeaderLen || len(sent) < radius.HeaderLen {
		return
	}
	p := radiusPending{lg: lg, client: radius.Authenticator(sent), member: radius.Authenticator(b)}
	f.rad.mu.Lock()
	f.rad.pending[radius.ID(b)] = p
	f.rad.mu.Unlock()
}

// radiusOut takes a member's answer b (got: as the member sent it, before
// SERVER_DATA): not RADIUS is dropped [M]; signed again with the
// client's request authenticator when a rule edited it or the request
// was signed again on its way.
func (f *flow) radiusOut(b, got []byte) ([]byte, bool) {
	rs := f.rad
	n, err := radius.Check(b)
	if err != nil {
		f.vs.Prof.Conns.DgDropped.Add(1)
		return nil, false
	}
	b = b[:n]
	if rs.secret == nil {
		return b, true
	}
	rs.mu.Lock()
	p, had := rs.pending[radius.ID(b)]
	rs.mu.Unlock()
	if !had {
		return b, true
	}
	if p.client != p.member || !bytes.Equal(b, got[:min(n, len(got))]) || len(got) < n {
		b = append([]byte(nil), b...)
		radius.SignResponse(b, p.client, rs.secret)
	}
	return b, true
}
