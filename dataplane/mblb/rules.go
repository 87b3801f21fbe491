package mblb

import "net/netip"

// Side says which end of the proxy a Data event belongs to; the rules
// engine uses it to refuse `TCP::notify request` on the server side and
// `response` on the client side.
type Side int

// The sides.
const (
	ClientSide Side = iota // CLIENT_DATA
	ServerSide             // SERVER_DATA
)

// RuleHandler is the seam to the rules engine: it runs CLIENT_DATA and
// SERVER_DATA of one client connection's iRules over the collected bytes.
// The engine knows nothing of Tcl; the handler calls the Data methods that
// TCP::payload, TCP::release, TCP::notify, TCP::collect, pool, node, persist
// and reject map to. A returned error is a rule failure: the client is
// reset.
type RuleHandler interface {
	ClientData(d *Data) error
	ServerData(d *Data) error
}

// note is one TCP::notify: the message ends at end, with the direction in
// force at that moment.
type note struct {
	end     int
	target  Target
	persist string
}

// Data is the view of one CLIENT_DATA or SERVER_DATA event. It is valid
// only during the handler call: the engine reuses it and its payload.
type Data struct {
	side    Side
	leg     *Leg   // the server side's connection; nil on the client side
	buf     []byte // released-but-not-notified bytes, then the payload
	rel     int
	notes   []note
	collect int
	reject  bool
	target  Target
	persist string
	client  netip.AddrPort
	server  netip.AddrPort
}

// Side is the event's side.
func (d *Data) Side() Side { return d.side }

// Payload is the collected bytes not yet released (TCP::payload).
func (d *Data) Payload() []byte { return d.buf[d.rel:] }

// Release hands n payload bytes on (TCP::release n); n < 0 or beyond the
// payload releases all of it. It returns how many bytes it released.
// Released bytes form the next message once Notify is called; bytes released
// but never notified wait for a later Notify.
func (d *Data) Release(n int) int {
	left := len(d.buf) - d.rel
	if n < 0 || n > left {
		n = left
	}
	d.rel += n
	return n
}

// Notify ends a message at the bytes released so far (TCP::notify request
// on the client side, response on the server side). Several Release and
// Notify pairs in one event make several messages. A Notify with nothing
// released since the last one does nothing.
func (d *Data) Notify() {
	start := 0
	if k := len(d.notes); k > 0 {
		start = d.notes[k-1].end
	}
	if d.rel <= start {
		return
	}
	d.notes = append(d.notes, note{end: d.rel, target: d.target, persist: d.persist})
}

// Collect sets how many payload bytes must be waiting before the next event
// (TCP::collect n); 0 means any new data. The engine keeps collecting in
// any case: on an mblb virtual every byte belongs to some message.
func (d *Data) Collect(n int) {
	if n < 0 {
		n = 0
	}
	d.collect = n
}

// Select directs the messages notified from now on (`pool p`, `pool p
// member a p`, `node a p`); the choice stays for later events of the
// connection, as the pool command does. The zero Target returns to plain
// load balancing. It has no effect on the server side.
func (d *Data) Select(t Target) { d.target = t }

// Persist sets the persistence key for messages notified from now on
// (`persist uie <key>`); "" removes it.
func (d *Data) Persist(key string) { d.persist = key }

// Reject resets the client connection after the event (`reject`).
func (d *Data) Reject() { d.reject = true }

// Client is the client's address (IP::client_addr, TCP::client_port).
func (d *Data) Client() netip.AddrPort { return d.client }

// Server is the member's address on the server side (IP::server_addr); it
// is invalid on the client side.
func (d *Data) Server() netip.AddrPort { return d.server }

// Leg is the server connection the data came from (its byte counts are
// TCP::offset's); nil on the client side.
func (d *Data) Leg() *Leg { return d.leg }

// reset prepares d for an event over buf, keeping rel released bytes.
func (d *Data) reset(side Side, buf []byte, rel int) {
	d.side = side
	d.buf = buf
	d.rel = rel
	d.notes = d.notes[:0]
	d.reject = false
}

// ruleFailed is a rule handler's error, told apart from the framing's
// and the emit's: the client's reset then says TCL error.
type ruleFailed struct{ err error }

func (e ruleFailed) Error() string { return e.err.Error() }
func (e ruleFailed) Unwrap() error { return e.err }

// ruleStep runs events over st while they make progress and hands each
// notified message to emit. rel carries released-but-not-notified bytes
// from one event to the next; collect is the TCP::collect threshold.
// It reports whether the rule rejected, or an error from the rule, the
// emitter or the size limit.
func ruleStep(d *Data, st *stream, rel *int, collect *int, run func(*Data) error, emit func([]byte, Target, string) error) (bool, error) {
	for guard := 0; guard < 1<<16; guard++ {
		buf := st.pending()
		avail := len(buf) - *rel
		need := *collect
		if need < 1 {
			need = 1
		}
		if avail < need {
			break
		}
		d.reset(d.side, buf, *rel)
		d.collect = *collect
		if err := run(d); err != nil {
			return false, ruleFailed{err}
		}
		*collect = d.collect
		if d.reject {
			return true, nil
		}
		prev := 0
		for _, n := range d.notes {
			if err := emit(buf[prev:n.end], n.target, n.persist); err != nil {
				return false, err
			}
			prev = n.end
		}
		st.start += prev
		*rel = d.rel - prev
		if len(d.notes) == 0 {
			break // the rule waits for more bytes
		}
	}
	if st.end-st.start > st.max {
		return false, ErrTooLarge
	}
	return false, nil
}
