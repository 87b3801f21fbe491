package l4

import (
	"net"
	"sync"
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// closeOnFIN applies c to a FIN from the source of direction up on a
// goroutine flow: reset-on-client-fin resets both sides, loose-close
// closes both, and the FIN timers (tcp-close-timeout, close-wait-timeout,
// fin-wait-timeout) start; true when the flow ended. The loops' own is in
// tcpclose_linux.go.
func (pr *proxied) closeOnFIN(c *sockopt.Close, up bool) bool {
	switch {
	case up && c.ResetOnClientFIN:
		pr.end(true)
		return true
	case c.Loose && pr.ctls == nil:
		if pr.ended.CompareAndSwap(false, true) {
			if sc := pr.srv.Load(); sc != nil {
				sc.conn.Close()
			}
			pr.client.Close()
		}
		return true
	}
	if c.AfterFIN > 0 {
		time.AfterFunc(c.AfterFIN, func() { pr.end(true) })
	}
	if c.FinWait > 0 {
		// The FIN is passed on to the destination of up: still
		// unacknowledged (FIN-WAIT-1) when the timer fires, both sides
		// are reset. A socket leaves FIN-WAIT-1 only forward, so one look
		// is enough.
		time.AfterFunc(c.FinWait, func() {
			dst := pr.client
			if up {
				sc := pr.srv.Load()
				if sc == nil {
					return
				}
				dst = sc.conn
			}
			if !pr.ended.Load() && connState(dst) == tcpFinWait1 {
				pr.end(true)
			}
		})
	}
	return false
}

// closeTick is how often a goroutine flow's zero-window timer looks at
// its sockets, as the loops' tick does.
const closeTick = 200 * time.Millisecond

// closeWatch runs a goroutine flow's client-timeout and zero-window
// timers (the loops run theirs on their tick); made only for a virtual
// that sets one of them.
type closeWatch struct {
	pr *proxied
	c  *sockopt.Close
	// zwAt is since when the client's [0] and the member's [1] socket
	// have held bytes for a zero window (zero: not).
	zwAt [2]time.Time
	mu   sync.Mutex // t, set while the first tick may run
	t    *time.Timer
}

// watchClose starts the flow's client-timeout and zero-window timers,
// when its virtual has them, as the flow first connects its server side
// (a rule's flow may connect again); a flow handed to another virtual
// never gets here.
func (pr *proxied) watchClose() {
	c := pr.snap.Cfg.TCPClose
	if c == nil || (c.ClientTimeout == 0 && c.ZeroWindow == 0) || pr.watched {
		return
	}
	pr.watched = true
	w := &closeWatch{pr: pr, c: c}
	first := closeTick
	if c.ClientTimeout > 0 {
		first = min(first, time.Until(pr.Created().Add(c.ClientTimeout)))
	}
	w.mu.Lock()
	w.t = time.AfterFunc(max(first, 0), w.tick)
	w.mu.Unlock()
}

// tick runs the timers once and arms the next look while the flow lives
// and a timer is left to run.
func (w *closeWatch) tick() {
	pr := w.pr
	if pr.ended.Load() {
		return
	}
	now := time.Now()
	sc := pr.srv.Load()
	if sc == nil {
		if w.c.ClientTimeout > 0 && now.Sub(pr.Created()) >= w.c.ClientTimeout {
			pr.end(true) // the client waited too long for its server side
			return
		}
	} else if w.c.ZeroWindow > 0 {
		for i, c := range [2]*net.TCPConn{pr.client, sc.conn} {
			zw := connZeroWindow(c)
			if !zw {
				w.zwAt[i] = time.Time{}
				continue
			}
			if w.zwAt[i].IsZero() {
				w.zwAt[i] = now
			}
			if now.Sub(w.zwAt[i]) >= w.c.ZeroWindow {
				pr.end(true)
				return
			}
		}
	} else {
		return // connected, and no zero-window timer: nothing left
	}
	next := closeTick
	if sc == nil && w.c.ClientTimeout > 0 {
		next = min(next, max(time.Until(pr.Created().Add(w.c.ClientTimeout)), time.Millisecond))
	}
	w.mu.Lock()
	w.t.Reset(next)
	w.mu.Unlock()
}
