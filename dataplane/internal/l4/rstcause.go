package l4

import (
	"errors"
	"net"
	"net/netip"

	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// rstArea is the code location the L4 paths print in their reset lines.
const rstArea = "l4"

// because records why the flow is about to be reset, or may be: the
// last connect's failure stands until a connect succeeds (clearCause).
func (fl *flow) because(c rstcause.Cause) { fl.why.Store(uint32(c)) }

// orBecause records c unless a cause is already known: a pool that ran
// dry after its members refused says why they did.
func (fl *flow) orBecause(c rstcause.Cause) { fl.why.CompareAndSwap(0, uint32(c)) }

// clearCause forgets the failures of the connects before: a reset from
// now on is the peer's, passed on, unless a new cause is given.
func (fl *flow) clearCause() { fl.why.Store(0) }

// dialCause is the cause of a goroutine flow's failed connect.
func dialCause(err error) rstcause.Cause {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return rstcause.ConnectTimeout
	}
	return rstcause.ConnectRefused
}

// rst reports the reset of the client with the cause recorded, if any:
// a reset that only passes on the peer's own has none and is not logged.
func (fl *flow) rst() {
	if c := rstcause.Cause(fl.why.Load()); c != rstcause.None {
		fl.e.env.Rst.Reset(rstArea, fl.Local, fl.Client, c)
	}
}

// refused reports the reset of a client the virtual did not admit
// (state.VirtualSnap.RefusedCause, worked out only while the log is on),
// and whether it is reset: not when this second's resets are over the
// reject rate (rstcause.Log.Refuse), then the site closes it plainly.
func (e *Engine) refused(snap *state.VirtualSnap, client, local netip.AddrPort) bool {
	if !e.env.Rst.Refuse() {
		return false
	}
	if e.env.Rst.On() {
		e.env.Rst.Reset(rstArea, local, client, snap.RefusedCause(client))
	}
	return true
}
