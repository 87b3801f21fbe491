package l4

import (
	"errors"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/openltm/openltm/dataplane/clone"
	"github.com/openltm/openltm/dataplane/internal/state"
)

// What the message-framed TCP flows (mqtt.go, fix.go) share: they read
// each direction message by message on goroutines of their own instead
// of the copy loops, connect the member once the client's first message
// is in, and write whole messages under one lock per destination.

// errIdle is a message read that ended on the flow's idle timeout (the
// flow was reset for it).
var errIdle = errors.New("idle")

// readMsg reads src's next message with next, moving the read deadline
// on while the flow is active on either side; errIdle when it went idle.
func (pr *proxied) readMsg(src *net.TCPConn, next func() ([]byte, error)) ([]byte, error) {
	for {
		pr.armIdle(src, pr.LastActive())
		raw, err := next()
		if !errors.Is(err, os.ErrDeadlineExceeded) {
			return raw, err
		}
		if !pr.stillActive(src) {
			return nil, errIdle
		}
	}
}

// bindMember connects the member once the client's first message is in:
// through bind when rules run (LB_SELECTED, LB_FAILED and
// SERVER_CONNECTED there), else directly. nil when the flow ended.
func (pr *proxied) bindMember() *serverConn {
	if pr.rs != nil {
		if !pr.bind() { // ruleflow.go
			return nil
		}
		return pr.srv.Load()
	}
	pr.watchClose() // tcpclose.go
	sc, err := pr.connect()
	if err != nil {
		pr.end(true)
		return nil
	}
	if !pr.originate(sc) { // server-ssl (tls.go); with rules, bind ran it
		pr.end(true)
		return nil
	}
	return sc
}

// msgWriter writes whole messages toward the client (0) or the member (1),
// one writer at a time per destination, through TLS where the flow has
// it, and hands what went to the member to serverside clone pools.
type msgWriter struct {
	mu  [2]sync.Mutex
	buf [2][]byte
	// back is the flow's copies of the members' messages (ruleState.back,
	// clone.go startBackClones) when a rule of the flow clones, set
	// before the flow's loops start; nil otherwise, and then the writes
	// to the client and the members' reads test it alone.
	back *atomic.Pointer[clone.Flow]
}

// cloneBack makes w copy the members' messages to the clones a rule
// starts in an event over one (clone.go, startBackClones), where the
// flow's rules clone (clones); before the flow's loops start.
func (w *msgWriter) cloneBack(pr *proxied, clones bool) {
	if clones && pr.rs != nil {
		w.back = &pr.rs.back
	}
}

// fromMember copies raw, a member's message as it came, to the
// serverside clones a rule started over an earlier member's message.
func (w *msgWriter) fromMember(raw []byte) {
	if w.back != nil {
		if f := w.back.Load(); f != nil {
			f.Server(raw)
		}
	}
}

// write sends msgs toward the member (toServer) or the client within the
// flow's idle timeout; false when the flow was ended for it.
func (w *msgWriter) write(pr *proxied, toServer bool, sc *serverConn, msgs ...[]byte) bool {
	d, dst := 0, net.Conn(pr.client)
	if toServer {
		if sc == nil {
			return true
		}
		d, dst = 1, sc.conn
	}
	w.mu[d].Lock()
	defer w.mu[d].Unlock()
	var b []byte
	if len(msgs) == 1 {
		b = msgs[0]
	} else {
		b = w.buf[d][:0]
		for _, m := range msgs {
			b = append(b, m...)
		}
		w.buf[d] = b
	}
	if len(b) == 0 {
		return true
	}
	if idle := pr.IdleTimeout(); idle > 0 {
		dst.SetWriteDeadline(time.Now().Add(idle)) // the socket under TLS too
	}
	var err error
	if toServer {
		_, err = sc.netConn().Write(b) // tls.go: through server-ssl
	} else {
		_, err = pr.clientWrite(b) // tls.go: in client-ssl's records
	}
	if err != nil {
		pr.lost(sc)
		return false
	}
	if toServer && pr.clone != nil {
		pr.clone.Server(b) // clone.go: as the member got it
	}
	if !toServer && w.back != nil {
		if f := w.back.Load(); f != nil {
			f.Client(b) // clone.go, startBackClones: as the client got it
		}
	}
	if sc != nil {
		pk := state.Packets(len(b))
		if toServer {
			sc.out(len(b), pk)
		} else {
			pr.clientOut(len(b), pk)
		}
	}
	return true
}
