package udp

import (
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/gtpmsg"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/persist"
)

// A GTP subscriber's session on one member, and retransmissions.
//
// Every request of a known type (gtpmsg's request and answer pairs) a
// client sends is remembered by version and sequence number for
// gtpRetransmitWindow: the same request again (a retransmission, TS
// 29.274 7.6) goes to the member the first copy went to, without being
// balanced or persisted again, and the member's answers pass to the
// client once for each copy the client sent, so that an answer repeated
// by the member alone is dropped and counted [M: how BIG-IP treats
// duplicate answers is not known].
//
// With a universal persistence profile on the virtual (BIG-IP leaves
// GTP persistence to iRules, `persist uie` on what GTP:: reads; openltm
// takes the universal profile on a gtp virtual as asking for the usual
// such rule's TEID and IMSI keys [M]), a client's message naming a TEID
// in its header (the member's, given in its Create Session or Create PDP
// Context Response) persists on that TEID, control plane or user plane
// (G-PDUs); a Create Session (Create PDP Context) Request without one
// persists on its IMSI. The records are universal ones, keyed
// "teid:<8 hex digits>" and "imsi:<digits>", scoped as the profile's
// match-across settings say (match-across-services: a session's GTP-U
// virtual on another port of the same address finds the node its GTP-C
// virtual chose); they live the profile's timeout after their last use.
// A member's accepting Create Session (Create PDP Context) Response
// makes a record for each TEID it gives (F-TEIDs, also inside Bearer
// Contexts); its accepting Delete Session (Delete PDP Context) Response
// drops the session's
// records. A rule's persist command wins over the profile's. TEIDs are
// the members' own, so two members giving the same TEID share a record
// [M]. A flow of a virtual without the profile pays a nil check.

// gtpRetransmitWindow is how long a request is remembered for its
// retransmissions: T3-RESPONSE (3 s) times N3-REQUESTS (3) tries plus
// the first [M: TS 29.274 leaves both to the operator].
const gtpRetransmitWindow = 12 * time.Second

// gtpPendingMax bounds the requests a flow remembers.
const gtpPendingMax = 4096

// gtpState is a GTP flow's requests in flight and its persistence
// settings.
type gtpState struct {
	cfg  *config.GTPProfile
	prof *config.Persistence // the virtual's universal profile; nil: no session persistence

	mu      sync.Mutex
	pending map[gtpSeq]gtpPending
	sweepAt int
	// cur is the client message being forwarded; the reader alone uses it.
	cur gtpPending
	// curOK: cur is a request to remember once its member is chosen.
	curOK  bool
	curKey gtpSeq
	// lastTEID and lastKey spare a flow of one tunnel's G-PDUs building
	// the same key for each; the reader alone uses them.
	lastTEID uint32
	lastKey  persist.Key
}

// gtpSeq identifies a request of the flow's client.
type gtpSeq struct {
	version uint8
	seq     uint32
}

// gtpPending is a request sent to a member.
type gtpPending struct {
	lg       *leg
	req      uint8  // the request's type
	teid     uint32 // its header's TEID: the member's own, for a delete
	imsi     string // a create request's subscriber
	at       int64  // when the first copy went
	asks     int    // copies the client sent
	answered int    // answers passed back
}

func newGTPState(c *config.GTPProfile, vp *config.Persistence) *gtpState {
	if c == nil {
		return nil
	}
	g := &gtpState{cfg: c, pending: map[gtpSeq]gtpPending{}, sweepAt: 64}
	if vp != nil && vp.Method == config.PersistUniversal {
		g.prof = vp // sessions persist in the virtual's universal profile [M]
	}
	return g
}

// gtpClient readies client message b's forwarding: the member's leg
// when b repeats a request in flight, else nil with the message's
// persistence decided.
func (f *flow) gtpClient(b []byte) *leg {
	g := f.gtps
	g.curOK = false
	h, err := gtpmsg.ParseHeader(b)
	if err != nil {
		return nil
	}
	now := f.l.e.now.Load()
	if _, ok := h.ResponseType(); ok {
		k := gtpSeq{h.Version, h.Seq}
		g.mu.Lock()
		p, had := g.pending[k]
		if had && p.req == h.Type && now-p.at < int64(gtpRetransmitWindow) && !p.lg.gone.Load() && (p.lg.member == nil || p.lg.member.Persistable()) {
			p.asks++
			g.pending[k] = p
			g.mu.Unlock()
			return p.lg
		}
		g.mu.Unlock()
		g.curOK, g.curKey = true, k
		g.cur = gtpPending{req: h.Type, teid: h.TEID, at: now, asks: 1}
	}
	if g.prof == nil {
		return nil
	}
	var key persist.Key
	switch {
	case h.HasTEID && h.TEID != 0:
		if h.TEID != g.lastTEID || g.lastKey.Str == "" {
			g.lastTEID, g.lastKey = h.TEID, gtpTEIDKey(h.TEID)
		}
		key = g.lastKey
	case h.Version == 2 && h.Type == gtpmsg.CreateSessionRequest, h.Version == 1 && h.Type == gtpmsg.CreatePDPRequest:
		if m, err := gtpmsg.Parse(b); err == nil {
			if imsi := m.IMSI(); imsi != "" {
				key = persist.StringKey(persist.Universal, "imsi:"+imsi)
				g.cur.imsi = key.Str
			}
		}
	}
	if key.Str == "" {
		f.persists, f.pers = f.basePersists, f.basePers
		return nil
	}
	f.persists = true
	f.pers = persistDecision{key: key, prof: g.prof, timeout: g.prof.Timeout}
	f.persisted = f.persistLookup
	return nil
}

// gtpTEIDKey is the record key of a member's TEID.
func gtpTEIDKey(teid uint32) persist.Key {
	const hex = "0123456789abcdef"
	b := [13]byte{'t', 'e', 'i', 'd', ':'}
	for i := 0; i < 8; i++ {
		b[5+i] = hex[teid>>(28-4*i)&0xf]
	}
	return persist.StringKey(persist.Universal, string(b[:]))
}

// gtpSent remembers the client's request, sent to lg.
func (f *flow) gtpSent(lg *leg) {
	g := f.gtps
	if !g.curOK {
		return
	}
	g.curOK = false
	p := g.cur
	p.lg = lg
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.pending) >= g.sweepAt {
		now := f.l.e.now.Load()
		for k, q := range g.pending {
			if now-q.at >= int64(gtpRetransmitWindow) || q.lg.gone.Load() {
				delete(g.pending, k)
			}
		}
		g.sweepAt = max(64, 2*len(g.pending))
		if len(g.pending) >= gtpPendingMax {
			return
		}
	}
	g.pending[g.curKey] = p
}

// gtpMember takes member message b from lg: false drops it, an answer
// repeated beyond the copies of the request the client sent. An
// accepting answer to a session's create or delete makes or drops the
// session's records.
func (f *flow) gtpMember(lg *leg, b []byte) bool {
	g := f.gtps
	h, err := gtpmsg.ParseHeader(b)
	if err != nil {
		return true
	}
	req, ok := h.RequestType()
	if !ok {
		return true
	}
	k := gtpSeq{h.Version, h.Seq}
	g.mu.Lock()
	p, had := g.pending[k]
	if !had || p.req != req || p.lg != lg {
		g.mu.Unlock()
		return true // not a request of this flow's: passed
	}
	if p.answered >= p.asks {
		g.mu.Unlock()
		f.vs.Prof.Conns.DgDropped.Add(1)
		return false
	}
	p.answered++
	g.pending[k] = p
	g.mu.Unlock()
	if g.prof == nil || lg.member == nil {
		return true
	}
	create := h.Version == 2 && h.Type == gtpmsg.CreateSessionResponse || h.Version == 1 && h.Type == gtpmsg.CreatePDPResponse
	del := h.Version == 2 && h.Type == gtpmsg.DeleteSessionResponse || h.Version == 1 && h.Type == gtpmsg.DeletePDPResponse
	if !create && !del {
		return true
	}
	m, err := gtpmsg.Parse(b)
	if err != nil || !m.Accepted() {
		return true
	}
	s := state.PersistScope(f.snap.Cfg, lg.pool.Name, g.prof)
	table := f.l.e.env.Persist
	if del {
		keys := f.l.e.gtp.take(f.Virtual, p.teid)
		if keys == nil {
			keys = []persist.Key{gtpTEIDKey(p.teid)}
		}
		for _, k := range keys {
			table.Delete(k, s)
		}
		return true
	}
	teids := m.TEIDs(nil)
	member := lg.member.Cfg.Load().Addr
	keys := make([]persist.Key, 0, len(teids)+1)
	for _, t := range teids {
		k := gtpTEIDKey(t)
		table.Add(k, s, member, f.Client.Addr(), g.prof.Timeout)
		keys = append(keys, k)
	}
	if p.imsi != "" {
		keys = append(keys, persist.StringKey(persist.Universal, p.imsi))
	}
	f.l.e.gtp.add(f.Virtual, teids, keys, f.l.e.now.Load(), g.prof.Timeout)
	return true
}

// gtpSessions finds a session's records by any of its TEIDs, so that
// its delete drops them all. Entries go with the delete, or when the
// index is full and they are older than four record timeouts [M]; a
// full index of live sessions indexes no more (their records expire by
// themselves).
type gtpSessions struct {
	mu sync.Mutex
	m  map[gtpSessionKey]*gtpSession
}

// gtpSessionIndexMax bounds the TEIDs indexed per engine.
const gtpSessionIndexMax = 1 << 18

type gtpSessionKey struct {
	virtual string
	teid    uint32
}

type gtpSession struct {
	teids   []uint32
	keys    []persist.Key
	expires int64 // 0: never
}

func (x *gtpSessions) add(virtual string, teids []uint32, keys []persist.Key, now int64, timeout time.Duration) {
	if len(teids) == 0 {
		return
	}
	s := &gtpSession{teids: teids, keys: keys}
	if timeout > 0 {
		s.expires = now + 4*int64(timeout)
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.m == nil {
		x.m = map[gtpSessionKey]*gtpSession{}
	}
	if len(x.m)+len(teids) > gtpSessionIndexMax {
		for k, e := range x.m {
			if e.expires != 0 && now >= e.expires {
				delete(x.m, k)
			}
		}
		if len(x.m)+len(teids) > gtpSessionIndexMax {
			return
		}
	}
	for _, t := range teids {
		if old := x.m[gtpSessionKey{virtual, t}]; old != nil {
			x.drop(virtual, old)
		}
		x.m[gtpSessionKey{virtual, t}] = s
	}
}

// take removes the session of teid on virtual and returns its record
// keys, nil when it is not indexed.
func (x *gtpSessions) take(virtual string, teid uint32) []persist.Key {
	x.mu.Lock()
	defer x.mu.Unlock()
	s := x.m[gtpSessionKey{virtual, teid}]
	if s == nil {
		return nil
	}
	x.drop(virtual, s)
	return s.keys
}

func (x *gtpSessions) drop(virtual string, s *gtpSession) {
	for _, t := range s.teids {
		if x.m[gtpSessionKey{virtual, t}] == s {
			delete(x.m, gtpSessionKey{virtual, t})
		}
	}
}
