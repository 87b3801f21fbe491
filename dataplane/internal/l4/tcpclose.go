package l4

import (
	"time"

	"github.com/openltm/openltm/dataplane/internal/sockopt"
)

// closeOnFIN applies c to a FIN from the source of direction up on a
// goroutine flow: reset-on-client-fin resets both sides, loose-close
// closes both, and the FIN timer (tcp-close-timeout, close-wait-timeout)
// starts; true when the flow ended. The loops' own is in
// tcpclose_linux.go; FIN-WAIT, zero-window and client timers are the
// loops' alone.
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
	return false
}
