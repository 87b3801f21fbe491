package wsframe

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// wire is a frame as a test writes or reads it: the payload unmasked.
type wire struct {
	fin    bool
	op     uint8
	masked bool
	key    [4]byte
	data   string
}

func encode(fs ...wire) []byte {
	var b []byte
	for _, f := range fs {
		h := Header{Fin: f.fin, Opcode: f.op, Masked: f.masked, Key: f.key, Length: uint64(len(f.data))}
		b = h.Append(b)
		p := []byte(f.data)
		if f.masked {
			Mask(f.key, 0, p)
		}
		b = append(b, p...)
	}
	return b
}

func decode(t *testing.T, b []byte) []wire {
	t.Helper()
	var out []wire
	for len(b) > 0 {
		h, n, err := Parse(b)
		if err != nil || n == 0 {
			t.Fatalf("output does not frame: n %d err %v (%q)", n, err, b)
		}
		p := append([]byte(nil), b[n:n+int(h.Length)]...)
		if h.Masked {
			Mask(h.Key, 0, p)
		}
		out = append(out, wire{fin: h.Fin, op: h.Opcode, masked: h.Masked, key: h.Key, data: string(p)})
		b = b[n+int(h.Length):]
	}
	return out
}

// hooks is a rule written in Go.
type hooks struct {
	frame, data, done func(f *Frame) error
	events            []string
}

func (h *hooks) Frame(f *Frame) error {
	h.events = append(h.events, "frame")
	if h.frame != nil {
		return h.frame(f)
	}
	return nil
}

func (h *hooks) Data(f *Frame) error {
	h.events = append(h.events, "data:"+string(f.Payload()))
	if h.data != nil {
		return h.data(f)
	}
	return nil
}

func (h *hooks) Done(f *Frame) error {
	h.events = append(h.events, "done")
	if h.done != nil {
		return h.done(f)
	}
	return nil
}

// chunked hands out its bytes a few at a time, so that headers and
// payloads arrive split.
type chunked struct {
	b []byte
	n int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	k := min(c.n, len(p), len(c.b))
	copy(p, c.b[:k])
	c.b = c.b[k:]
	return k, nil
}

var k1 = [4]byte{0xA1, 0xB2, 0xC3, 0xD4}

func run(t *testing.T, side Side, mode Masking, h Hooks, in []byte, step int) ([]wire, []wire, error) {
	t.Helper()
	dst, peer, err := runRaw(side, mode, h, in, step)
	return decode(t, dst), decode(t, peer), err
}

func runRaw(side Side, mode Masking, h Hooks, in []byte, step int) ([]byte, []byte, error) {
	var dst, peer bytes.Buffer
	r := &Relay{Side: side, Mode: mode, Hooks: h, Src: &chunked{b: in, n: step},
		Dst: &Out{W: &dst, ToServer: side == FromClient}, Peer: &Out{W: &peer, ToServer: side != FromClient}, MaxCollect: 1 << 16}
	err := r.Run(nil)
	return dst.Bytes(), peer.Bytes(), err
}

func TestRelay(t *testing.T) {
	big := string(bytes.Repeat([]byte("0123456789"), 700))
	type tc struct {
		name  string
		side  Side
		mode  Masking
		hooks *hooks
		in    []wire
		want  []wire
		peer  []wire
		err   error
		check func(t *testing.T, h *hooks, out []wire)
	}
	for _, c := range []tc{{
		name: "passes client frames as they came",
		in:   []wire{{true, OpText, true, k1, "hello"}, {false, OpBinary, true, k1, big}, {true, OpContinuation, true, k1, "end"}, {true, OpPing, true, k1, "p"}},
		want: []wire{{true, OpText, true, k1, "hello"}, {false, OpBinary, true, k1, big}, {true, OpContinuation, true, k1, "end"}, {true, OpPing, true, k1, "p"}},
	}, {
		name:  "hooks that do nothing change nothing",
		hooks: &hooks{},
		in:    []wire{{true, OpText, true, k1, "hello"}, {true, OpBinary, true, k1, big}},
		want:  []wire{{true, OpText, true, k1, "hello"}, {true, OpBinary, true, k1, big}},
		check: func(t *testing.T, h *hooks, _ []wire) {
			if len(h.events) != 4 {
				t.Errorf("events %q", h.events)
			}
		},
	}, {
		name: "remask gives client frames new keys",
		mode: Remask,
		in:   []wire{{true, OpText, true, k1, "hello"}, {true, OpBinary, true, k1, big}},
		check: func(t *testing.T, _ *hooks, out []wire) {
			if len(out) != 2 || out[0].data != "hello" || out[1].data != big || out[0].key == k1 || out[1].key == k1 || !out[0].masked {
				t.Errorf("out %+v", out)
			}
		},
	}, {
		name: "server frames are not remasked",
		side: FromServer, mode: Remask,
		in:   []wire{{true, OpText, false, [4]byte{}, "hi"}},
		want: []wire{{true, OpText, false, [4]byte{}, "hi"}},
	}, {
		name: "collect the whole frame and replace part of it",
		hooks: &hooks{frame: func(f *Frame) error { f.Collect(0); return nil },
			data: func(f *Frame) error { return f.ReplacePayload(4, 5, []byte("slow")) }},
		in:   []wire{{true, OpText, true, k1, "the quick fox"}},
		want: []wire{{true, OpText, true, k1, "the slow fox"}},
		check: func(t *testing.T, h *hooks, _ []wire) {
			if h.events[1] != "data:the quick fox" {
				t.Errorf("events %q", h.events)
			}
		},
	}, {
		name: "collect the start of a long frame, the rest streams",
		hooks: &hooks{frame: func(f *Frame) error { f.Collect(10); return nil },
			data: func(f *Frame) error { return f.ReplacePayload(0, 10, []byte("ABC")) }},
		in:   []wire{{true, OpBinary, true, k1, big}},
		want: []wire{{true, OpBinary, true, k1, "ABC" + big[10:]}},
	}, {
		name: "prepend, append and replace",
		hooks: &hooks{frame: func(f *Frame) error {
			if f.Header().Opcode == OpText {
				f.Replace([]byte("middle"))
				f.Prepend([]byte("<"))
				return f.Append([]byte(">"))
			}
			return nil
		}},
		side: FromServer,
		in:   []wire{{true, OpText, false, [4]byte{}, "x"}, {true, OpBinary, false, [4]byte{}, "keep"}},
		want: []wire{{true, OpText, false, [4]byte{}, "<middle>"}, {true, OpBinary, false, [4]byte{}, "keep"}},
	}, {
		name:  "drop a frame",
		hooks: &hooks{frame: func(f *Frame) error { f.Drop(); return nil }},
		in:    []wire{{true, OpText, true, k1, "gone"}},
		check: func(t *testing.T, h *hooks, out []wire) {
			if len(out) != 0 || len(h.events) != 2 {
				t.Errorf("out %+v events %q", out, h.events)
			}
		},
	}, {
		name: "drop a frame once its payload is read",
		hooks: &hooks{frame: func(f *Frame) error { f.Collect(2); return nil },
			data: func(f *Frame) error {
				if string(f.Payload()) == "dr" {
					f.Drop()
				}
				return nil
			}},
		in:   []wire{{true, OpText, true, k1, "drop it"}, {true, OpText, true, k1, "keep it"}},
		want: []wire{{true, OpText, true, k1, "keep it"}},
	}, {
		name: "drop a message: its fragments go, a ping between them stays",
		hooks: &hooks{frame: func(f *Frame) error {
			if f.Header().Opcode == OpText {
				f.DropMessage()
			}
			return nil
		}},
		in: []wire{{false, OpText, true, k1, "a"}, {true, OpPing, true, k1, "p"}, {false, OpContinuation, true, k1, "b"},
			{true, OpContinuation, true, k1, "c"}, {true, OpBinary, true, k1, "next"}},
		want: []wire{{true, OpPing, true, k1, "p"}, {true, OpBinary, true, k1, "next"}},
	}, {
		name: "insert a frame before the current one",
		side: FromServer,
		hooks: &hooks{frame: func(f *Frame) error {
			f.Insert(OpText, []byte("first"), KeyOf(7), true)
			f.Insert(OpBinary, []byte("plain"), [4]byte{}, false)
			return nil
		}},
		in:   []wire{{true, OpText, false, [4]byte{}, "second"}},
		want: []wire{{true, OpText, true, KeyOf(7), "first"}, {true, OpBinary, false, [4]byte{}, "plain"}, {true, OpText, false, [4]byte{}, "second"}},
	}, {
		name: "preserve: the payload stays masked and cannot change",
		mode: Preserve,
		hooks: &hooks{frame: func(f *Frame) error {
			if err := f.Append([]byte("x")); !errors.Is(err, ErrPreserved) {
				t.Errorf("append with preserve: %v", err)
			}
			f.Collect(0)
			return nil
		}},
		in:   []wire{{true, OpText, true, k1, "abcd"}},
		want: []wire{{true, OpText, true, k1, "abcd"}},
		check: func(t *testing.T, h *hooks, _ []wire) {
			masked := []byte("abcd")
			Mask(k1, 0, masked)
			if h.events[1] != "data:"+string(masked) {
				t.Errorf("collected %q, want the masked bytes", h.events[1])
			}
		},
	}, {
		name:  "disconnect after the frame: close frames both ways",
		hooks: &hooks{done: func(f *Frame) error { f.Disconnect(1000, "bye"); return nil }},
		in:    []wire{{true, OpText, true, k1, "last"}, {true, OpText, true, k1, "never"}},
		err:   ErrDisconnected,
		check: func(t *testing.T, _ *hooks, out []wire) {
			if len(out) != 2 || out[0].data != "last" || out[1].op != OpClose || out[1].data != "\x03\xe8bye" || !out[1].masked {
				t.Errorf("out %+v", out)
			}
		},
		peer: []wire{{true, OpClose, false, [4]byte{}, "\x03\xe8bye"}},
	}, {
		name:  "a hook's error ends the relay",
		hooks: &hooks{frame: func(f *Frame) error { return io.ErrClosedPipe }},
		in:    []wire{{true, OpText, true, k1, "x"}},
		err:   io.ErrClosedPipe,
		want:  nil,
	}} {
		for _, step := range []int{1, 3, 1 << 20} {
			var h Hooks
			if c.hooks != nil {
				c.hooks.events = nil
				h = c.hooks
			}
			out, peer, err := run(t, c.side, c.mode, h, encode(c.in...), step)
			if c.err == nil {
				c.err = io.EOF // the source ended between frames
			}
			if !errors.Is(err, c.err) {
				t.Errorf("%s (reads of %d): err %v, want %v", c.name, step, err, c.err)
			}
			if c.want != nil || c.check == nil {
				if len(out) != len(c.want) {
					t.Errorf("%s (reads of %d): %d frames, want %d: %+v", c.name, step, len(out), len(c.want), out)
				} else {
					for i := range out {
						if out[i] != c.want[i] {
							t.Errorf("%s (reads of %d): frame %d %+v, want %+v", c.name, step, i, out[i], c.want[i])
						}
					}
				}
			}
			if c.peer != nil && (len(peer) != len(c.peer) || peer[0] != c.peer[0]) {
				t.Errorf("%s: the other end got %+v, want %+v", c.name, peer, c.peer)
			}
			if c.check != nil {
				c.check(t, c.hooks, out)
			}
		}
	}
}

func TestRelayEnds(t *testing.T) {
	full := encode(wire{true, OpText, true, k1, "hello"})
	for _, c := range []struct {
		name string
		in   []byte
		err  error
	}{
		{"at a frame boundary", full, io.EOF},
		{"inside a header", full[:1], io.ErrUnexpectedEOF},
		{"inside a payload", full[:len(full)-1], io.ErrUnexpectedEOF},
		{"a bad frame", []byte{0x83, 0}, ErrProtocol},
	} {
		_, _, err := runRaw(FromClient, Unmask, nil, c.in, 2)
		if !errors.Is(err, c.err) {
			t.Errorf("%s: %v, want %v", c.name, err, c.err)
		}
	}
	// A frame over MaxCollect that a rule collects whole.
	big := encode(wire{true, OpBinary, true, k1, string(make([]byte, 1<<16+1))})
	_, _, err := runRaw(FromClient, Unmask, &hooks{frame: func(f *Frame) error { f.Collect(0); return nil }}, big, 1<<20)
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("collecting a large frame: %v", err)
	}
}

// countingWriter counts the writes a relay makes.
type countingWriter struct {
	bytes.Buffer
	writes int
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.writes++
	return w.Buffer.Write(p)
}

// TestRelayGathersWrites: frames that arrive in one read leave in one
// write; a large payload goes as it is read, not gathered whole.
func TestRelayGathersWrites(t *testing.T) {
	small := encode(wire{true, OpText, true, k1, "a"}, wire{true, OpText, true, k1, "bb"}, wire{true, OpPing, true, k1, "p"})
	big := encode(wire{true, OpBinary, true, k1, string(bytes.Repeat([]byte("z"), 100<<10))})
	for _, c := range []struct {
		name      string
		in        []byte
		hooks     Hooks
		maxWrites int
	}{
		{"three small frames", small, nil, 1},
		{"three small frames with rules", small, &hooks{}, 3},
		{"one large frame", big, nil, 100},
	} {
		w := &countingWriter{}
		r := &Relay{Side: FromClient, Hooks: c.hooks, Src: &chunked{b: c.in, n: 1 << 20}, Dst: &Out{W: w, ToServer: true}, Peer: &Out{W: io.Discard}}
		if err := r.Run(nil); !errors.Is(err, io.EOF) {
			t.Fatalf("%s: %v", c.name, err)
		}
		if !bytes.Equal(w.Bytes(), c.in) {
			t.Fatalf("%s: output differs from input", c.name)
		}
		if w.writes > c.maxWrites || w.writes == 0 {
			t.Errorf("%s: %d writes, want 1 to %d", c.name, w.writes, c.maxWrites)
		}
	}
}
