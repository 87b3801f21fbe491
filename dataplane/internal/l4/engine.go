// Package l4 holds the dataplane's two L4 flow engines and their
// listeners. On Linux every listener is registered in per-processor event
// loops (evloop), and a plain flow (no rule handling proxy events, no
// message-based balancing) lives on the loop that accepted it
// (loop_linux.go); any other flow is served by goroutines (proxy.go, with
// the iRules events of ruleflow.go and the rule view of ruleconn.go), as
// every flow is on other systems. Both engines choose members through
// state.Choose, translate through state.Translate and state.SNATSource,
// and enforce the timeouts of timeouts.go. An Engine is given its
// environment (Env) and does not know the plane that owns it.
package l4

import (
	"log/slog"
	"net/netip"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/bwc"
	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/internal/mblbvs"
	"github.com/openltm/openltm/dataplane/internal/rstcause"
	"github.com/openltm/openltm/dataplane/internal/state"
	"github.com/openltm/openltm/dataplane/lsn"
	"github.com/openltm/openltm/dataplane/persist"
	"github.com/openltm/openltm/dataplane/snatobj"
)

// Env is what the L4 engines need of the plane.
type Env struct {
	// Table lists every flow (show/delete sys connection).
	Table *flows.Table
	// Log receives rule errors and warnings in BIG-IP's words.
	Log *slog.Logger
	// ConnectTimeout bounds a server-side connect (see connectExpired).
	ConnectTimeout time.Duration
	// BusyPoll is the event loops' busy-poll time (evloop.Loop.SetBusyPoll).
	BusyPoll time.Duration
	// Pools is the running commit's pool index.
	Pools func() state.Pools
	// Running is the running configuration (snatpools named by rules).
	Running func() *config.Config
	// SNATIndex is the running commit's snatobj.Index (nil: no ltm
	// snat-translation; a nil func: none), which
	// message routing peer connections' own sources are held through
	// (mrf.go HoldSNATAddr).
	SNATIndex func() *snatobj.Index
	// Persist is the plane's persistence table.
	Persist *persist.Table
	// MBLB serves the clients of message-balanced virtuals.
	MBLB *mblbvs.Set
	// Virtual finds a running virtual server by its full name, for a rule
	// handing its connection to another (`virtual NAME`); nil or a nil
	// answer: no such virtual server.
	Virtual func(name string) *state.Virtual
	// Rst reports the resets the flows send (tm.rstcause.log); nil
	// reports none.
	Rst *rstcause.Log
	// BWC is the running bandwidth controllers, which rules attach
	// flows to (BWC::policy).
	BWC *bwc.Set
	// LSN is the running lsn pools, which rules choose with LSN::pool.
	LSN *lsn.Set
	// Pass makes the steering of virtuals on every port pass over a
	// socket a flow opened on such a virtual's address (an FTP passive
	// data listener, an RTSP data channel), so that the kernel's own
	// lookup reaches it, until release is called; nil: no steering.
	Pass func(ap netip.AddrPort, udp bool) (release func())
}

// Engine runs the L4 flows of one plane.
type Engine struct {
	env     Env
	loops   loopSet
	accepts sync.WaitGroup // accepting goroutines (systems without loops)
}

// New makes an engine; its event loops start with the first listener.
func New(env Env) *Engine { return &Engine{env: env} }

// WaitAccepts waits until no listener accepts any more (after Stop).
func (e *Engine) WaitAccepts() { e.accepts.Wait() }

// Close stops the event loops after the work already posted to them (the
// aborts of the plane's Close, the message-based sessions' ends) has run.
func (e *Engine) Close() { e.stopLoops() }
