package l4

import (
	"net/netip"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/rules"
)

// Clone pools (dataplane/clone): a flow of a virtual with clone pools
// starts its clone connections when the client is admitted (flow.init) and
// closes them when it retires; the copy loops hand over what the client
// sends. Flows of virtuals without clone pools test one nil pointer.

// cloneRead mirrors b, read from the client. When the bytes go to the
// member as they are (no rule collecting them) the serverside pools get
// them too; otherwise those get what the rule releases (cloneSent).
func (fl *flow) cloneRead(b []byte, st *sideState) {
	if st != nil && st.on.Load() {
		fl.clone.Client(b)
		return
	}
	fl.clone.Both(b)
}

// cloneSent mirrors b, rewritten on its way to the member (a stream
// filter, a rule's release), to the serverside pools.
func (fl *flow) cloneSent(b []byte) {
	if fl.clone != nil {
		fl.clone.Server(b)
	}
}

var _ rules.Cloner = (*proxied)(nil)

// Clone implements rules.Cloner: the clone command, in CLIENT_ACCEPTED,
// before the copy loops start, so that the flow's clone connections
// change while no loop reads them; in a later event it is skipped and
// counted as dropped (the commit warned), since the copy would start
// part-way through the bytes the loops already passed; on ilx virtuals
// too, whose client bytes no copy loop reads (an ilx plugin owns the
// connection). An rtsp flow's reader copies the client's bytes as it
// reads them (cloneClient), its writer what the member gets. The
// copies count on the virtual's clone counters and on the clone
// member's, as the virtual's clone pools' do. A member named is taken
// whatever its monitor says, as F5 documents; one forced offline (or
// at its connection limit) gets no copy, counted as dropped [M].
func (pr *proxied) Clone(pool string, member netip.AddrPort, side rules.Side, ev rules.Event) error {
	if ev != rules.ClientAccepted || pr.rs == nil || pr.rs.ev != config.EventClientAccepted || pr.snap.Cfg.ILX != nil {
		pr.vs.Clone.Dropped.Add(1)
		return rules.ErrCloneEvent
	}
	set, d, ok, err := state.RuleClone(pr.e.env.Pools(), pr.vs, pr.snap, pr.Virtual, pool, member)
	if !ok {
		return err
	}
	pr.clone = set.Add(pr.clone, d, side == rules.ServerSide)
	return nil
}

// cloneClient is a flow's clone connections as the writer a reader of
// the client's bytes copies into (io.TeeReader): an rtsp flow's, whose
// messages are parsed and sent again, so that clientside pools still
// get them as the client sent them.
type cloneClient struct{ f *clone.Flow }

// Write implements io.Writer; the copy never fails the read.
func (c cloneClient) Write(p []byte) (int, error) {
	c.f.Client(p)
	return len(p), nil
}
