package wsframe

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Masking is the websocket profile's masking setting (and WS::masking's):
// what the proxy does with the masked payloads clients send.
type Masking uint8

// The masking modes. Unmask and Selective put the same bytes on the wire
// as the client sent unless a rule changes the payload; only Remask
// changes every client frame.
const (
	// Unmask (the default): client payloads are unmasked for the rules
	// and masked again with the client's own key toward the server [M].
	Unmask Masking = iota
	// Preserve: payloads pass as they came; the rules see them masked
	// and cannot change them (WS::frame prepend, append, replace and
	// WS::payload replace are errors).
	Preserve
	// Selective: unmasked only when a rule reads the payload [M]; on the
	// wire the same as Unmask.
	Selective
	// Remask: every client frame goes to the server masked with a new
	// random key.
	Remask
)

var maskingNames = [...]string{"unmask", "preserve", "selective", "remask"}

func (m Masking) String() string {
	if int(m) < len(maskingNames) {
		return maskingNames[m]
	}
	return "unknown"
}

// ParseMasking reads a profile's masking value.
func ParseMasking(s string) (Masking, bool) {
	for i, n := range maskingNames {
		if n == s {
			return Masking(i), true
		}
	}
	return 0, false
}

// Options are a virtual's websocket profile as the HTTP engine applies it.
type Options struct {
	// Profile is the profile's full path.
	Profile string
	// Masking is the profile's masking.
	Masking Masking
	// NoCompression (compression disabled): the permessage-deflate offer
	// is taken out of the client's upgrade request, so that neither end
	// compresses and the rules see the payloads as sent.
	NoCompression bool
	// WindowBits (window-bits, 8 to 15; 0: none) bounds the
	// permessage-deflate windows the client's offer lets the two ends
	// use (LimitDeflateOffer).
	WindowBits int
	// Nagle (no-delay disabled) turns Nagle's algorithm on for the two
	// sockets of an upgraded connection, so that small frames are
	// coalesced into fewer packets at the cost of their latency.
	Nagle bool
}

// Side is the end a frame came from.
type Side uint8

// The sides.
const (
	FromClient Side = iota // WS_CLIENT_FRAME, WS_CLIENT_DATA, WS_CLIENT_FRAME_DONE
	FromServer             // WS_SERVER_*
)

// Hooks are the rules of one upgraded connection: called for every frame
// of a direction, from that direction's relay, one frame at a time. An
// error resets the connection.
type Hooks interface {
	// Frame runs WS_CLIENT_FRAME or WS_SERVER_FRAME: the header is in,
	// the payload not yet read.
	Frame(f *Frame) error
	// Data runs WS_CLIENT_DATA or WS_SERVER_DATA once what WS::collect
	// asked is in (Payload).
	Data(f *Frame) error
	// Done runs WS_CLIENT_FRAME_DONE or WS_SERVER_FRAME_DONE after the
	// frame has gone on (or was dropped).
	Done(f *Frame) error
}

// ErrDisconnected ends a relay whose rule ran WS::disconnect: both ends
// were sent a close frame, and the caller closes the connection.
var ErrDisconnected = errors.New("websocket: disconnected by a rule")

// ErrTooLarge is a frame a rule asked to collect whole that is larger than
// the relay holds (MaxCollect): the connection is reset.
var ErrTooLarge = errors.New("websocket: frame too large to collect")

// ErrPreserved is what the payload edits return with masking preserve:
// the payload is masked, so the proxy cannot change it (as BIG-IP says
// for WS::frame prepend, append and replace).
var ErrPreserved = errors.New("not available when the websocket profile preserves masking")

// inserted is a frame a rule inserted before the current one.
type inserted struct {
	h       Header
	payload []byte
}

// Frame is the rules' view of the frame at hand. It is valid only during
// a hook call: the relay reuses it.
type Frame struct {
	side     Side
	h        Header
	preserve bool

	payload   []byte // collected, unmasked unless preserve
	collect   int    // -1 none, 0 the whole frame, n: its first n bytes
	inserts   []inserted
	drop      bool
	dropMsg   bool
	pre, post []byte
	repl      []byte
	replSet   bool
	closeSet  bool
	closeCode uint16
	closeWhy  string
}

func (f *Frame) reset(side Side, h Header, preserve bool) {
	f.side, f.h, f.preserve = side, h, preserve
	f.payload = f.payload[:0]
	f.collect = -1
	f.inserts = f.inserts[:0]
	f.drop, f.dropMsg = false, false
	f.pre, f.post, f.repl, f.replSet = nil, nil, nil, false
	f.closeSet = false
}

// Side is the end the frame came from.
func (f *Frame) Side() Side { return f.side }

// Header is the frame's header as it arrived (WS::frame type, eom,
// orig_masked, mask).
func (f *Frame) Header() Header { return f.h }

// Collect asks for the first n bytes of the payload (all of it for
// n <= 0) before WS_*_DATA runs (WS::collect frame ?n?).
func (f *Frame) Collect(n int) {
	if n < 0 {
		n = 0
	}
	f.collect = n
}

// Payload is what was collected (WS::payload).
func (f *Frame) Payload() []byte { return f.payload }

// ReplacePayload replaces n collected bytes at off with s (WS::payload
// replace); the frame's length follows.
func (f *Frame) ReplacePayload(off, n int, s []byte) error {
	if f.preserve {
		return ErrPreserved
	}
	if off < 0 || n < 0 || off > len(f.payload) {
		return fmt.Errorf("offset %d is outside the %d bytes collected", off, len(f.payload))
	}
	if off+n > len(f.payload) {
		n = len(f.payload) - off
	}
	tail := append([]byte(nil), f.payload[off+n:]...)
	f.payload = append(append(f.payload[:off], s...), tail...)
	return nil
}

// Drop drops the frame (WS::frame drop).
func (f *Frame) Drop() { f.drop = true }

// DropMessage drops the frame and, when it is not the message's last, the
// message's later fragments (WS::message drop).
func (f *Frame) DropMessage() { f.drop, f.dropMsg = true, true }

// Insert puts a frame of opcode op with payload p before the current
// one, with FIN set; masked with key when masked. A frame toward the
// server is always masked (RFC 6455 section 5.1), with a random key when
// none is given [M].
func (f *Frame) Insert(op uint8, p []byte, key [4]byte, masked bool) {
	h := Header{Fin: true, Opcode: op, Length: uint64(len(p))}
	if masked || f.side == FromClient {
		h.Masked = true
		if masked {
			h.Key = key
		} else {
			h.Key = newKey()
		}
	}
	f.inserts = append(f.inserts, inserted{h: h, payload: append([]byte(nil), p...)})
}

// Prepend, Append and Replace edit the payload (WS::frame prepend, append
// and replace): the relay then reads the whole frame before passing it on.
func (f *Frame) Prepend(p []byte) error {
	if f.preserve {
		return ErrPreserved
	}
	f.pre = append(append([]byte(nil), p...), f.pre...)
	return nil
}

// Append: see Prepend.
func (f *Frame) Append(p []byte) error {
	if f.preserve {
		return ErrPreserved
	}
	f.post = append(f.post, p...)
	return nil
}

// Replace: see Prepend.
func (f *Frame) Replace(p []byte) error {
	if f.preserve {
		return ErrPreserved
	}
	f.repl, f.replSet = append([]byte(nil), p...), true
	return nil
}

// Disconnect closes the connection once the frame is done, with a close
// frame of code and reason to both ends (WS::disconnect).
func (f *Frame) Disconnect(code uint16, reason string) {
	f.closeSet, f.closeCode, f.closeWhy = true, code, reason
}

// Out is one end of an upgraded connection as the relays write to it: the
// relay of the direction toward it, and the other direction's
// WS::disconnect. Frames go out whole, one at a time.
type Out struct {
	mu sync.Mutex
	W  io.Writer
	// ToServer: frames the proxy makes for this end are masked.
	ToServer bool
	closed   bool
}

// writeClose sends a close frame, unless the end is closed already or
// busy with a frame for longer than wait (a peer stuck mid-frame).
func (o *Out) writeClose(payload []byte, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for !o.mu.TryLock() {
		if time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
	}
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	h := Header{Fin: true, Opcode: OpClose, Length: uint64(len(payload))}
	p := append([]byte(nil), payload...)
	if o.ToServer {
		h.Masked, h.Key = true, newKey()
		Mask(h.Key, 0, p)
	}
	o.W.Write(append(h.Append(make([]byte, 0, MaxHeaderLen+len(p))), p...))
	o.closed = true
}

// newKey is a fresh mask key: RFC 6455 wants it unpredictable.
func newKey() [4]byte {
	var k [4]byte
	rand.Read(k[:])
	return k
}

// DefaultMaxCollect bounds what a rule may collect of one frame.
const DefaultMaxCollect = 1 << 20

// Relay passes one direction's frames from Src to Dst.
type Relay struct {
	Side Side
	// Mode is the masking in force (the profile's, or WS::masking's).
	Mode Masking
	// Hooks are the rules; nil passes frames on without stopping.
	Hooks Hooks
	Src   io.Reader
	// Dst is the end this direction writes to; Peer the other end, for
	// WS::disconnect's close frame.
	Dst, Peer *Out
	// MaxCollect bounds a collected frame (0: DefaultMaxCollect).
	MaxCollect int

	buf        []byte
	start, end int
	eof        error
	// wbuf is output not yet written: whole frames, and the start of
	// the one in hand, while held says the relay holds Dst (no other
	// writer may come between its frames' bytes). It is written before
	// the relay waits for input, when it grows past wbufMax, and before
	// a rule runs.
	wbuf     []byte
	held     bool
	f        Frame
	dropping bool // a dropped message's fragments are still coming
}

// wbufMax bounds the output a relay gathers before writing it: frames
// that arrived together leave in one write, a large payload goes as it
// is read.
const wbufMax = 16 << 10

// Run relays until Src ends: io.EOF at a frame boundary, or the error that
// ended it (a read error, ErrProtocol, ErrDisconnected, a hook's error).
// first is what was read from Src before the relay started.
func (r *Relay) Run(first []byte) error {
	if r.buf == nil {
		r.buf = make([]byte, 32<<10)
	}
	if len(first) > len(r.buf) {
		r.buf = make([]byte, len(first)+16<<10)
	}
	r.start, r.end = 0, copy(r.buf, first)
	defer r.release()
	for {
		h, err := r.header()
		if err != nil {
			return err
		}
		if err := r.frame(h); err != nil {
			return err
		}
	}
}

// hold takes Dst for the relay's frames.
func (r *Relay) hold() {
	if !r.held {
		r.Dst.mu.Lock()
		r.held = true
	}
}

// flush writes the gathered output.
func (r *Relay) flush() error {
	if len(r.wbuf) == 0 {
		return nil
	}
	err := r.write(r.wbuf)
	r.wbuf = r.wbuf[:0]
	return err
}

// release writes the gathered output and lets Dst go, between frames.
func (r *Relay) release() error {
	err := r.flush()
	if r.held {
		r.held = false
		r.Dst.mu.Unlock()
	}
	return err
}

// fill reads more of Src into the buffer; io.EOF once it ended. What was
// gathered for Dst leaves first: the relay may wait here.
func (r *Relay) fill() error {
	if err := r.flush(); err != nil {
		return err
	}
	if r.eof != nil {
		return r.eof
	}
	if r.start == r.end {
		r.start, r.end = 0, 0
	} else if r.end == len(r.buf) {
		r.end = copy(r.buf, r.buf[r.start:r.end])
		r.start = 0
	}
	n, err := r.Src.Read(r.buf[r.end:])
	r.end += n
	if err != nil && n == 0 {
		r.eof = err
		return err
	}
	return nil
}

// header reads the next frame's header: io.EOF when Src ended between
// frames.
func (r *Relay) header() (Header, error) {
	for {
		h, n, err := Parse(r.buf[r.start:r.end])
		if err != nil {
			return h, err
		}
		if n > 0 {
			r.start += n
			return h, nil
		}
		had := r.end - r.start
		if err := r.fill(); err != nil {
			if errors.Is(err, io.EOF) && had > 0 {
				return h, io.ErrUnexpectedEOF
			}
			return h, err
		}
	}
}

// frame passes one frame on, running the rules when there are any.
func (r *Relay) frame(h Header) error {
	control := h.IsControl()
	if r.Hooks == nil {
		if r.dropping && !control {
			r.dropping = !h.Fin
			return r.skip(h.Length)
		}
		if err := r.stream(h, h.Length, 0); err != nil {
			return err
		}
		if r.start == r.end {
			return r.release() // nothing more at hand: send what came
		}
		return nil
	}
	if err := r.release(); err != nil {
		return err
	}
	f := &r.f
	f.reset(r.Side, h, r.Mode == Preserve)
	if err := r.Hooks.Frame(f); err != nil {
		return err
	}
	for _, in := range f.inserts {
		if err := r.writeWhole(in.h, in.payload, true); err != nil {
			return err
		}
	}
	if !control && (r.dropping || f.dropMsg) {
		// A dropped message drops its later fragments too.
		f.drop = true
		r.dropping = !h.Fin
	}
	var err error
	switch {
	case f.drop:
		err = r.skip(h.Length)
	case f.collect >= 0 || f.pre != nil || f.post != nil || f.replSet:
		err = r.edited(h, f)
	default:
		err = r.stream(h, h.Length, 0)
	}
	if err == nil {
		err = r.release()
	}
	if err != nil {
		return err
	}
	if err := r.Hooks.Done(f); err != nil {
		return err
	}
	if f.closeSet {
		p := ClosePayload(f.closeCode, f.closeWhy)
		r.Dst.writeClose(p, time.Second)
		r.Peer.writeClose(p, time.Second)
		return ErrDisconnected
	}
	return nil
}

// outKey is the key a client frame leaves with: its own, or a new one
// when remasking.
func (r *Relay) outKey(h Header) [4]byte {
	if r.Mode == Remask && r.Side == FromClient && h.Masked {
		return newKey()
	}
	return h.Key
}

// stream passes on a frame whose header is h and whose remaining payload
// bytes, from offset pos, are still to be read, re-masking them when the
// key changes. The output gathers in wbuf (the caller releases it).
func (r *Relay) stream(h Header, remaining uint64, pos uint64) error {
	out := h
	out.Key = r.outKey(h)
	x := KeyXOR(h.Key, out.Key)
	r.hold()
	r.wbuf = out.Append(r.wbuf)
	for remaining > 0 {
		if r.start == r.end {
			if err := r.fill(); err != nil {
				return eofInFrame(err)
			}
		}
		k := min(remaining, uint64(r.end-r.start))
		chunk := r.buf[r.start : r.start+int(k)]
		if h.Masked {
			Mask(x, pos, chunk)
		}
		r.start += int(k)
		pos += k
		remaining -= k
		if err := r.put(chunk); err != nil {
			return err
		}
	}
	return nil
}

// put adds payload bytes to the output: gathered while they fit,
// written at once (after what was gathered) when they do not.
func (r *Relay) put(chunk []byte) error {
	if len(r.wbuf)+len(chunk) <= wbufMax {
		r.wbuf = append(r.wbuf, chunk...)
		return nil
	}
	if err := r.flush(); err != nil {
		return err
	}
	return r.write(chunk)
}

func (r *Relay) write(b []byte) error {
	if r.Dst.closed {
		return ErrDisconnected
	}
	_, err := r.Dst.W.Write(b)
	return err
}

func eofInFrame(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// skip reads past n payload bytes.
func (r *Relay) skip(n uint64) error {
	for n > 0 {
		if r.start == r.end {
			if err := r.fill(); err != nil {
				return eofInFrame(err)
			}
		}
		k := uint64(r.end - r.start)
		if k > n {
			k = n
		}
		r.start += int(k)
		n -= k
	}
	return nil
}

// edited collects what the rules asked of the frame (all of it when they
// edit its ends), runs WS_*_DATA, and passes on the frame with its new
// payload and length.
func (r *Relay) edited(h Header, f *Frame) error {
	want := h.Length
	if f.collect > 0 && f.post == nil && !f.replSet && uint64(f.collect) < want {
		want = uint64(f.collect)
	}
	max := r.MaxCollect
	if max <= 0 {
		max = DefaultMaxCollect
	}
	if want > uint64(max) {
		return fmt.Errorf("%w: %d bytes (at most %d)", ErrTooLarge, h.Length, max)
	}
	f.payload = f.payload[:0]
	for uint64(len(f.payload)) < want {
		if r.start == r.end {
			if err := r.fill(); err != nil {
				return eofInFrame(err)
			}
		}
		k := min(want-uint64(len(f.payload)), uint64(r.end-r.start))
		f.payload = append(f.payload, r.buf[r.start:r.start+int(k)]...)
		r.start += int(k)
	}
	if h.Masked && !f.preserve {
		Mask(h.Key, 0, f.payload)
	}
	if f.collect >= 0 {
		if err := r.Hooks.Data(f); err != nil {
			return err
		}
		if f.drop {
			// Dropped once its payload was read (WS::frame drop in
			// WS_*_DATA).
			return r.skip(h.Length - want)
		}
	}
	body := f.payload
	if f.replSet {
		body = f.repl
	}
	if f.pre != nil || f.post != nil {
		body = append(append(append([]byte(nil), f.pre...), body...), f.post...)
	}
	rest := h.Length - want
	out := h
	out.Length = uint64(len(body)) + rest
	out.Key = r.outKey(h)
	if h.Masked && !f.preserve {
		body = append([]byte(nil), body...)
		Mask(out.Key, 0, body)
	}
	if rest == 0 {
		return r.writeWhole(out, body, false)
	}
	// The frame's tail streams after the collected head: unmasked with
	// the original key at its place in the original, masked with the
	// new key at its place in the new payload.
	r.hold()
	r.wbuf = out.Append(r.wbuf)
	if err := r.put(body); err != nil {
		return err
	}
	pos, npos := want, uint64(len(body))
	for rest > 0 {
		if r.start == r.end {
			if err := r.fill(); err != nil {
				return eofInFrame(err)
			}
		}
		k := min(rest, uint64(r.end-r.start))
		chunk := r.buf[r.start : r.start+int(k)]
		if h.Masked && !f.preserve {
			Mask(h.Key, pos, chunk)
			Mask(out.Key, npos, chunk)
		}
		r.start += int(k)
		if err := r.put(chunk); err != nil {
			return err
		}
		pos, npos, rest = pos+k, npos+k, rest-k
	}
	return nil
}

// writeWhole adds a frame whose payload is at hand (already masked
// unless mask) to the output.
func (r *Relay) writeWhole(h Header, payload []byte, mask bool) error {
	r.hold()
	r.wbuf = h.Append(r.wbuf)
	n := len(r.wbuf)
	r.wbuf = append(r.wbuf, payload...)
	if mask && h.Masked {
		Mask(h.Key, 0, r.wbuf[n:])
	}
	if len(r.wbuf) >= wbufMax {
		return r.flush()
	}
	return nil
}
