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
	// hold stops handing out input once a key that ends the read (Enter,
	// the trigger) was handed out: go-prompt's reader may fetch more
	// before the line is taken, and whatever it fetched then is dropped.
	// Held input waits in the queue or the kernel for the next read.
	hold bool
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
	return t.restore()
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

// take notes the keys that matter to the shell and splits a paste.
func (t *tty) take(b []byte) []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lastCtrlD = len(b) == 1 && b[0] == 0x04
	if len(b) == 1 && b[0] == 0x03 {
		t.interrupted = true
	}
	pieces := splitPaste(b)
	t.queue = append(t.queue, pieces[1:]...)
	t.hold = endsRead(pieces[0])
	return pieces[0]
}

// endsRead reports whether go-prompt ends the line read on this key.
func endsRead(b []byte) bool {
	return len(b) == 1 && (b[0] == '\r' || b[0] == '\n')
}

// splitPaste cuts a pasted chunk so every line break arrives as its own
// Enter key: go-prompt treats a chunk as one key and would otherwise insert
// the whole block as text and run nothing. Tabs become spaces, as a tab in
// a paste is layout, not a request for completion.
func splitPaste(b []byte) [][]byte {
	if len(b) < 2 || b[0] == 0x1b || !bytes.ContainsAny(b, "\r\n") {
		return [][]byte{b}
	}
	b = bytes.ReplaceAll(b, []byte("\r\n"), []byte("\r"))
	b = bytes.ReplaceAll(b, []byte("\n"), []byte("\r"))
	b = bytes.ReplaceAll(b, []byte("\t"), []byte("    "))
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\r')
		if i < 0 {
			out = append(out, b)
			break
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		out = append(out, []byte{'\r'})
		b = b[i+1:]
	}
	return out
}

// begin readies the flags for a new line read.
func (t *tty) begin() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.trigger, t.fired, t.help, t.helpText, t.interrupted, t.lastCtrlD, t.hold = false, false, false, "", false, false, false
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
