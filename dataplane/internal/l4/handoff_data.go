package l4

import (
	"fmt"
	"time"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/rules"
)

// `virtual NAME` in CLIENT_DATA: the rule collected the client's first
// bytes (TCP::collect in CLIENT_ACCEPTED), looked at them (a ClientHello's
// server name, a protocol's greeting) and names the virtual server that is
// to serve the client. No member has been connected yet (delayed
// binding), so the connection can still go elsewhere: at the end of the
// event every byte collected goes along with it — what the rule released
// (TCP::release, which would otherwise go to a member of this virtual) and
// what it still holds, as TCP::payload replace left them — and the named
// virtual serves the client as if those bytes had just arrived (its
// client-ssl handshake, its rules' events, its pool; handoff.go). Once a
// member of this virtual was connected the command is refused: that
// member has bytes of the client already.

// dataTargetable refuses `virtual NAME` in CLIENT_DATA once a member was
// connected to this flow (a data event after an earlier release, or
// after LB::detach).
func (pr *proxied) dataTargetable(name string) error {
	if pr.rs.ev != config.EventClientData || pr.first.conn == nil {
		return nil
	}
	to := ""
	if sc := pr.srv.Load(); sc != nil {
		to = " (" + sc.leg.Server.String() + ")"
	}
	return fmt.Errorf("virtual %s: the connection already went to a server of virtual %s%s; it is handed to another virtual server in CLIENT_DATA only before a member is connected", name, pr.Virtual, to)
}

// handOnData hands the client to the virtual server the rule named in
// CLIENT_DATA with the bytes the flow read of it, in the order the client
// sent them: any first bytes still waiting for a member (peekFirst), what
// the rule released, then what it still holds. It runs on the client
// side's goroutine, which ends its leg once the other virtual served the
// client.
func (pr *proxied) handOnData() {
	rs := pr.rs
	rs.mu.Lock()
	vs := rs.toVirtual
	st := &rs.side[rules.ClientSide]
	head := make([]byte, 0, len(pr.head)+len(rs.toServer)+len(st.held))
	head = append(append(append(head, pr.head...), rs.toServer...), st.held...)
	rs.toServer = rs.toServer[:0]
	st.held, st.collecting, st.want, st.skip = nil, false, 0, 0
	st.on.Store(false)
	rs.mu.Unlock()
	pr.head = head
	pr.client.SetReadDeadline(time.Time{}) // the idle deadline of this flow's collection
	pr.handOn(vs)
}
