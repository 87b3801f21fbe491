package h2gw

import (
	"net"
	"sync"
	"time"
)

// coalesced is the client's connection as the HTTP/2 server writes to
// it: each Write is queued, and one writer goroutine sends what has
// queued while the previous send was in the kernel. Why: net/http's
// server writes the frames of each stream's response in a system call of
// their own (21 % of ltmd's samples at 16 h2load connections); the
// responses of a client's streams come one after another from the
// engine, so they arrive while a write is in progress and leave together.
// A Write is never delayed: an idle writer sends at once. Backpressure
// stays: a Write waits while maxQueued bytes are queued.
type coalesced struct {
	net.Conn
	mu      sync.Mutex
	cond    sync.Cond
	queued  []byte
	writing bool
	closed  bool
	err     error
}

// maxQueued bounds what waits for the writer.
const maxQueued = 256 << 10

// closeWait bounds how long Close waits for the queue to be sent.
const closeWait = time.Second

func newCoalesced(c net.Conn) *coalesced {
	w := &coalesced{Conn: c}
	w.cond.L = &w.mu
	go w.writer()
	return w
}

func (w *coalesced) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(w.queued) >= maxQueued && w.err == nil && !w.closed {
		w.cond.Wait()
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.closed {
		return 0, net.ErrClosed
	}
	w.queued = append(w.queued, p...)
	w.cond.Broadcast()
	return len(p), nil
}

// writer sends what is queued until the connection closes or fails.
func (w *coalesced) writer() {
	var out []byte
	w.mu.Lock()
	for {
		for len(w.queued) == 0 && !w.closed && w.err == nil {
			w.cond.Wait()
		}
		if w.err != nil || len(w.queued) == 0 { // closed, and all sent
			w.cond.Broadcast()
			w.mu.Unlock()
			return
		}
		out, w.queued = w.queued, out[:0]
		w.writing = true
		w.cond.Broadcast() // room for waiting writers
		w.mu.Unlock()
		_, err := w.Conn.Write(out)
		w.mu.Lock()
		w.writing = false
		if err != nil {
			w.err = err
		}
		w.cond.Broadcast()
	}
}

// Close sends what is queued (within closeWait: a client that reads
// nothing does not hold the connection), then closes the connection.
func (w *coalesced) Close() error {
	w.Conn.SetWriteDeadline(time.Now().Add(closeWait))
	w.mu.Lock()
	w.closed = true
	w.cond.Broadcast()
	for (len(w.queued) > 0 || w.writing) && w.err == nil {
		w.cond.Wait()
	}
	w.mu.Unlock()
	return w.Conn.Close()
}
