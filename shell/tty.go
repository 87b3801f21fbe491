//go:build linux || darwin || freebsd || netbsd || openbsd

package shell

import (
	"bytes"
	"errors"
	"sync"

	prompt "github.com/c-bata/go-prompt"
	"golang.org/x/sys/unix"
)

// ignoreKey is a key go-prompt knows and does nothing with. Feeding it
// makes go-prompt consult its exit checker, which is the only way to make
// a line read return early (for `?` help, a signal, or a hang-up).
var ignoreKey = []byte{0x1b, 0x5b, 0x45}

// errNoInput tells go-prompt's reader loop that nothing was typed yet.
var errNoInput = errors.New("no input yet")

// tty is go-prompt's console on our terms. go-prompt v0.2.6's own console
// re-applies raw mode when it means to restore the terminal, sets the
// shared descriptor non-blocking, panics when the window is 0x0 and feeds a
// pasted block as one key; this one restores the exact saved settings,
// polls instead, reports a usable size and splits pastes into lines.
type tty struct {
	fd    int
	saved *unix.Termios

	mu          sync.Mutex
	queue       [][]byte // pasted pieces not yet handed over
	trigger     bool     // hand ignoreKey over once, to end the read
	fired       bool
	stop        bool // ctx ended: leave
	eof         bool // the terminal hung up
	help        bool // `?` asked for help
	helpText    string
	lastCtrlD   bool
	interrupted bool // Ctrl-C was typed during this read
	resize      bool // the window changed size: redraw the line
	// hold stops handing out input once a key that ends the read (Enter,
	// the trigger) was handed out: go-prompt's reader may fetch more
	// before the line is taken, and whatever it fetched then is dropped.
	// Held input waits in the queue or the kernel for the next read.
	hold bool
	// pinned keeps the terminal raw between line reads (the lines of a
	// configuration typed after load sys config from-terminal): in the
	// cooked gap between two reads the kernel would take a typed-ahead
	// Ctrl-D as end of file and the next raw read would never see it.
	pinned bool
}

func newTTY(fd int) (*tty, error) {
	t, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return nil, err
	}
	return &tty{fd: fd, saved: t}, nil
}

// Setup implements prompt.ConsoleParser: raw input as go-prompt expects it
// (no echo, no line buffering, no signals from keys), output processing
// left on so "\n" still returns the carriage.
func (t *tty) Setup() error {
	raw := *t.saved
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Lflag &^= unix.ECHO | unix.ICANON | unix.IEXTEN | unix.ISIG | unix.ECHONL
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	return unix.IoctlSetTermios(t.fd, ioctlSetTermios, &raw)
}

// TearDown implements prompt.ConsoleParser: back to the settings the
// terminal had before the shell started.
func (t *tty) TearDown() error {
	t.mu.Lock()
	pinned := t.pinned
	t.mu.Unlock()
	if pinned {
		return nil
	}
	return t.restore()
}

// pin makes the terminal raw now and keeps it raw across line reads
// until the returned func is called, which restores it.
func (t *tty) pin() func() {
	t.Setup()
	t.mu.Lock()
	t.pinned = true
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.pinned = false
		t.mu.Unlock()
		t.restore()
	}
}

func (t *tty) restore() error {
	saved := *t.saved
	return unix.IoctlSetTermios(t.fd, ioctlSetTermios, &saved)
}

// GetWinSize implements prompt.ConsoleParser. A size of 0 (a fresh pty,
// some containers) would divide by zero in go-prompt's renderer; 80x24 is
// assumed instead.
func (t *tty) GetWinSize() *prompt.WinSize {
	ws := &prompt.WinSize{Row: 24, Col: 80}
	for _, fd := range []int{t.fd, 1} {
		if w, err := unix.IoctlGetWinsize(fd, unix.TIOCGWINSZ); err == nil && w.Col > 0 && w.Row > 0 {
			ws.Row, ws.Col = w.Row, w.Col
			break
		}
	}
	return ws
}

// Read implements prompt.ConsoleParser. It never blocks: go-prompt must be
// able to stop its reader between keys.
func (t *tty) Read() ([]byte, error) {
	t.mu.Lock()
	if t.hold {
		t.mu.Unlock()
		return nil, errNoInput
	}
	if t.trigger && !t.fired {
		t.fired, t.hold = true, true
		t.mu.Unlock()
		return ignoreKey, nil
	}
	if len(t.queue) > 0 {
		b := t.queue[0]
		t.queue = t.queue[1:]
		t.hold = endsRead(b)
		t.lastCtrlD = isCtrlD(b)
		t.mu.Unlock()
		return b, nil
	}
	t.mu.Unlock()

	fds := []unix.PollFd{{Fd: int32(t.fd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, 0)
	if err != nil || n == 0 {
		return nil, errNoInput
	}
	if fds[0].Revents&(unix.POLLHUP|unix.POLLERR|unix.POLLNVAL) != 0 && fds[0].Revents&unix.POLLIN == 0 {
		t.hangUp()
		return nil, errNoInput
	}
	buf := make([]byte, 1024)
	n, err = unix.Read(t.fd, buf)
	if n <= 0 {
		if err == nil || !errors.Is(err, unix.EAGAIN) && !errors.Is(err, unix.EINTR) {
			t.hangUp()
		}
		return nil, errNoInput
	}
	return t.take(buf[:n]), nil
}

// hangUp ends the read: the terminal is gone.
func (t *tty) hangUp() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.eof = true
	t.trigger = true
}

// take notes the keys that matter to the shell and splits the chunk into
// keys.
func (t *tty) take(b []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	pieces := splitInput(b)
	// Ctrl-D ends the read only as the key go-prompt is handed now; one
	// queued behind pasted lines is noted when its turn comes.
	t.lastCtrlD = isCtrlD(pieces[0])
	for _, p := range pieces {
		if len(p) == 1 && p[0] == 0x03 {
			t.interrupted = true
		}
	}
	t.queue = append(t.queue, pieces[1:]...)
	t.hold = endsRead(pieces[0])
	return pieces[0]
}

func isCtrlD(b []byte) bool { return len(b) == 1 && b[0] == 0x04 }

// endsRead reports whether go-prompt ends the line read on this key.
func endsRead(b []byte) bool {
	return len(b) == 1 && (b[0] == '\r' || b[0] == '\n')
}

// splitInput cuts one read from the terminal into what go-prompt can take:
// go-prompt treats each read as one key, so keys that arrive together (fast
// typing, key repeat, a slow link over SSH, a paste) would be inserted as
// text or dropped. Each escape sequence (CSI `ESC [ params final`, SS3
// `ESC O x`, Alt+key `ESC x`) and each control byte (Tab, Enter, Ctrl-keys,
// Backspace) becomes a key of its own, and each run of printable text one
// piece, which go-prompt inserts at the cursor.
//
// A chunk holding a line break after other input is a paste: every line
// break becomes an Enter key so each line runs, tabs become spaces (a tab in
// a paste is layout, not a request for completion) and `?` stays text.
// Otherwise `?` is a key of its own, as it asks for help.
func splitInput(b []byte) [][]byte {
	if len(b) <= 1 {
		return [][]byte{b}
	}
	paste := bytes.ContainsAny(b[1:], "\r\n")
	if paste {
		b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\r"))
		b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r"))
		b = bytes.ReplaceAll(b, []byte("\t"), []byte("    "))
	}
	var out [][]byte
	for len(b) > 0 {
		n := keyLen(b, !paste)
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// keyLen is the length of the key at the start of b; help makes `?` a key.
func keyLen(b []byte, help bool) int {
	switch c := b[0]; {
	case c == 0x1b:
		if len(b) == 1 {
			return 1
		}
		switch b[1] {
		case '[':
			// Parameter and intermediate bytes, then one final byte.
			for i := 2; i < len(b); i++ {
				if b[i] >= 0x40 && b[i] <= 0x7e {
					return i + 1
				}
				if b[i] < 0x20 || b[i] > 0x7e {
					return i // malformed: what follows is a key of its own
				}
			}
			return len(b)
		case 'O':
			return min(3, len(b))
		}
		if b[1] < 0x20 || b[1] == 0x7f {
			return 1
		}
		return 2
	case c < 0x20 || c == 0x7f || help && c == '?':
		return 1
	}
	i := 0
	for i < len(b) && b[i] >= 0x20 && b[i] != 0x7f && b[i] != 0x1b && !(help && b[i] == '?') {
		i++
	}
	return i
}

// begin readies the flags for a new line read.
func (t *tty) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trigger, t.fired, t.help, t.helpText, t.interrupted, t.lastCtrlD, t.hold, t.resize = false, false, false, "", false, false, false, false
	if t.stop || t.eof {
		t.trigger = true
	}
}

// endForResize ends the read in progress so that the line is drawn again
// at the new width: go-prompt's Input learns the window's size only when
// it starts, and erasing a wrapped line at the old width leaves pieces of
// it (a second prompt) on the screen.
func (t *tty) endForResize() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.trigger {
		t.resize, t.trigger = true, true
	}
}

// again readies the flags to read the same line once more, after a
// resize; what was typed so far (Ctrl-C included) is kept.
func (t *tty) again() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trigger, t.fired, t.hold, t.resize = false, false, false, false
	if t.stop || t.eof {
		t.trigger = true
	}
}

// endNow makes the read in progress return as soon as possible.
func (t *tty) endNow(help bool, helpText string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if help {
		t.help, t.helpText = true, helpText
	} else {
		t.stop = true
	}
	t.trigger = true
}

// exiting is go-prompt's exit checker: true once a trigger is pending.
func (t *tty) exiting() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.trigger
}
