//go:build linux

package sendbatch

import (
	"bytes"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

func needRings(t *testing.T) {
	t.Helper()
	if !Supported() {
		t.Skip("the kernel gives this process no io_uring (Linux 5.18 or later, not disabled by seccomp or kernel.io_uring_disabled): the loops write one socket at a time")
	}
}

// newBatch is a ring for size sends, closed when the test ends.
func newBatch(t *testing.T, size int) *Batch {
	t.Helper()
	b, err := New(size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

// pair is a connected stream socket pair, both ends non-blocking.
func pair(t *testing.T) (int, int) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fds[0]); unix.Close(fds[1]) })
	return fds[0], fds[1]
}

func iov(bufs ...[]byte) []unix.Iovec {
	var v []unix.Iovec
	for _, b := range bufs {
		var e unix.Iovec
		e.Base = &b[0]
		e.SetLen(len(b))
		v = append(v, e)
	}
	return v
}

func readAll(t *testing.T, fd int) []byte {
	t.Helper()
	var out []byte
	buf := make([]byte, 1<<16)
	for {
		n, err := unix.Read(fd, buf)
		if n <= 0 || err != nil {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

// fill writes to fd until its socket takes no more.
func fill(t *testing.T, fd int) {
	t.Helper()
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, 4096)
	junk := make([]byte, 4096)
	for i := 0; i < 10000; i++ {
		if _, err := unix.Write(fd, junk); err == unix.EAGAIN {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("the socket took 40 MB without filling")
}

// Each staged send reaches its own socket, in one buffer or several, and
// the results say what each socket took or why it took nothing, however
// many sends the batch carries (one goes without the ring).
func TestSubmit(t *testing.T) {
	needRings(t)
	type send struct {
		bufs [][]byte
		full bool // the socket is full: EAGAIN, nothing taken
		shut bool // the peer has closed: EPIPE, and no SIGPIPE
	}
	cases := []struct {
		name  string
		sends []send
	}{
		{"one buffer, alone", []send{{bufs: [][]byte{[]byte("alone")}}}},
		{"several buffers, alone", []send{{bufs: [][]byte{[]byte("a"), []byte("bc"), []byte("def")}}}},
		{"three sockets", []send{
			{bufs: [][]byte{[]byte("first")}},
			{bufs: [][]byte{[]byte("sec"), []byte("ond")}},
			{bufs: [][]byte{bytes.Repeat([]byte("3"), 3000)}},
		}},
		{"a full socket among others", []send{
			{bufs: [][]byte{[]byte("before")}},
			{bufs: [][]byte{[]byte("blocked")}, full: true},
			{bufs: [][]byte{[]byte("after")}},
		}},
		{"a closed peer among others", []send{
			{bufs: [][]byte{[]byte("x")}, shut: true},
			{bufs: [][]byte{[]byte("y")}},
		}},
		{"a full socket alone", []send{{bufs: [][]byte{[]byte("z")}, full: true}}},
	}
	b := newBatch(t, 8)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var readers []int
			for i, s := range c.sends {
				w, r := pair(t)
				if s.full {
					fill(t, w)
				}
				if s.shut {
					unix.Close(r)
					r = -1
				}
				readers = append(readers, r)
				if !b.Add(w, iov(s.bufs...)) {
					t.Fatalf("Add %d refused", i)
				}
			}
			res := b.Submit()
			if len(res) != len(c.sends) {
				t.Fatalf("%d results for %d sends", len(res), len(c.sends))
			}
			for i, s := range c.sends {
				want := bytes.Join(s.bufs, nil)
				switch {
				case s.full:
					if res[i] != (Result{Err: syscall.EAGAIN}) {
						t.Errorf("send %d to a full socket: %+v, want EAGAIN", i, res[i])
					}
				case s.shut:
					if res[i] != (Result{Err: syscall.EPIPE}) {
						t.Errorf("send %d to a closed peer: %+v, want EPIPE", i, res[i])
					}
				default:
					if res[i] != (Result{N: len(want)}) {
						t.Errorf("send %d: %+v, want %d bytes", i, res[i], len(want))
					}
					if got := readAll(t, readers[i]); !bytes.Equal(got, want) {
						t.Errorf("socket %d read %q, want %q", i, got, want)
					}
				}
			}
			if b.Len() != 0 {
				t.Errorf("%d sends left staged", b.Len())
			}
		})
	}
}

// A batch takes Cap sends, refuses more until submitted, and serves again
// after: the ring's indexes wrap as the loop goes on.
func TestCapAndReuse(t *testing.T) {
	needRings(t)
	b := newBatch(t, 4)
	w, r := pair(t)
	msg := []byte("m")
	for round := 0; round < 5; round++ {
		for i := 0; i < b.Cap(); i++ {
			if !b.Add(w, iov(msg)) {
				t.Fatalf("round %d: send %d refused below Cap %d", round, i, b.Cap())
			}
		}
		if b.Add(w, iov(msg)) {
			t.Fatalf("round %d: a send past Cap was taken", round)
		}
		for i, res := range b.Submit() {
			if res != (Result{N: 1}) {
				t.Fatalf("round %d, send %d: %+v", round, i, res)
			}
		}
		if got := readAll(t, r); len(got) != b.Cap() {
			t.Fatalf("round %d: read %d bytes, want %d", round, len(got), b.Cap())
		}
	}
	if b.Add(w, nil) {
		t.Fatal("an empty send was taken")
	}
	if res := b.Submit(); res != nil {
		t.Fatalf("an empty batch returned %v", res)
	}
}

// A descriptor that is no socket fails its own send only.
func TestBadDescriptor(t *testing.T) {
	needRings(t)
	b := newBatch(t, 4)
	w, r := pair(t)
	msg := []byte("ok")
	b.Add(1<<20, iov(msg))
	b.Add(w, iov(msg))
	res := b.Submit()
	if res[0].Err != syscall.EBADF || res[1] != (Result{N: 2}) {
		t.Fatalf("results %+v, want EBADF then 2 bytes", res)
	}
	if got := readAll(t, r); string(got) != "ok" {
		t.Fatalf("read %q", got)
	}
}

func TestNewSize(t *testing.T) {
	for _, n := range []int{0, 3, -1} {
		if _, err := New(n); err == nil {
			t.Errorf("New(%d) made a ring", n)
		}
	}
}

// The layouts the kernel reads must be its own.
func TestLayout(t *testing.T) {
	if s := unsafe.Sizeof(sqe{}); s != sqeSize {
		t.Errorf("sqe is %d bytes, want %d", s, sqeSize)
	}
	if s := unsafe.Sizeof(cqe{}); s != cqeSize {
		t.Errorf("cqe is %d bytes, want %d", s, cqeSize)
	}
	if s := unsafe.Sizeof(params{}); s != 120 {
		t.Errorf("params is %d bytes, want 120", s)
	}
}

// A ring whose io_uring_enter(2) fails for good fails its batch's sends
// as failed writes and takes no more (Add), and SendNow writes in its
// place.
func TestBrokenRing(t *testing.T) {
	needRings(t)
	b := newBatch(t, 4)
	w1, r1 := pair(t)
	w2, _ := pair(t)
	b.Add(w1, iov([]byte("a")))
	b.Add(w2, iov([]byte("b")))
	unix.Close(b.fd) // the ring's descriptor goes: every enter fails
	b.fd = -1
	for i, res := range b.Submit() {
		if res.Err != syscall.EBADF {
			t.Errorf("send %d on a broken ring: %+v, want EBADF", i, res)
		}
	}
	if b.Add(w1, iov([]byte("c"))) {
		t.Fatal("a broken ring took a send")
	}
	if res := SendNow(w1, iov([]byte("d"), []byte("ef"))); res != (Result{N: 3}) {
		t.Fatalf("SendNow: %+v", res)
	}
	if got := readAll(t, r1); string(got) != "def" {
		t.Fatalf("read %q, want %q", got, "def")
	}
	if res := SendNow(w1, nil); res != (Result{}) {
		t.Fatalf("SendNow of nothing: %+v", res)
	}
}
