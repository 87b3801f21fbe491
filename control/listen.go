package control

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrInUse means another ltmd owns the socket path (it answers there, or it
// holds the path's lock while starting up). tmsh reacts by connecting to it.
var ErrInUse = errors.New("another ltmd is already serving this socket")

// Listen creates the control socket at path for a daemon: the parent
// directory is created 0700 when missing, the socket is made 0600, a stale
// socket left by a dead daemon is removed, and a live one is never touched.
//
// Ownership is decided by an exclusive lock on path+".lock", held until the
// listener is closed; the kernel drops it when the process dies, so a crash
// never leaves the path claimed. Two daemons (or two tmsh starting embedded
// daemons) racing for one path cannot both win.
func Listen(path string) (net.Listener, error) {
	r, err := Reserve(path)
	if err != nil {
		return nil, err
	}
	return r.Listen()
}

// Reservation holds a socket path's lock before the socket exists, so a
// daemon can claim its path first and create the socket only once it is
// ready to answer: a client (or a script waiting for the socket) then never
// reaches a daemon whose configuration is not up yet.
type Reservation struct {
	path string
	lock *os.File
}

// Reserve takes path's lock and removes a stale socket, as Listen does,
// without listening yet. control.ErrInUse means another daemon owns it.
func Reserve(path string) (*Reservation, error) {
	if path == "" {
		return nil, errors.New("empty control socket path")
	}
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("control socket path %s is %d bytes long; unix sockets allow at most %d", path, len(path), maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("control socket directory: %w", err)
	}
	if err := checkDirOwner(filepath.Dir(path)); err != nil {
		return nil, err
	}
	lock, err := os.OpenFile(path+".lock", os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (%s)", ErrInUse, path)
		}
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	fail := func(err error) (*Reservation, error) {
		lock.Close()
		return nil, err
	}

	// The lock is ours, but a daemon that predates the lock file, or whose
	// lock file was deleted, may still answer: never steal a live socket.
	if fi, err := os.Lstat(path); err == nil {
		if fi.Mode()&os.ModeSocket == 0 {
			return fail(fmt.Errorf("%s exists and is not a socket; refusing to replace it", path))
		}
		if answers(path) {
			return fail(fmt.Errorf("%w (%s)", ErrInUse, path))
		}
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fail(fmt.Errorf("removing stale control socket: %w", err))
		}
	}
	return &Reservation{path: path, lock: lock}, nil
}

// Listen creates the socket; the listener owns the lock from then on and
// releases it when closed. On error the reservation is released.
func (r *Reservation) Listen() (net.Listener, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: r.path, Net: "unix"})
	if err != nil {
		r.Release()
		return nil, err
	}
	if err := os.Chmod(r.path, 0o600); err != nil {
		ln.Close()
		r.Release()
		return nil, fmt.Errorf("control socket mode: %w", err)
	}
	return &lockedListener{UnixListener: ln, lock: r.lock}, nil
}

// Release gives the path up without ever listening (the daemon failed to
// start).
func (r *Reservation) Release() { r.lock.Close() }

// maxSocketPath is what sockaddr_un holds on Linux, less the terminator.
const maxSocketPath = 107

// answers reports whether something accepts connections on path.
func answers(path string) bool {
	c, err := net.DialTimeout("unix", path, time.Second)
	if err != nil {
		return !errors.Is(err, syscall.ECONNREFUSED) && !errors.Is(err, syscall.ENOENT)
	}
	c.Close()
	return true
}

// lockedListener releases the path's lock after the socket file is gone.
type lockedListener struct {
	*net.UnixListener
	lock *os.File
	once sync.Once
	err  error
}

// Close stops listening, removes the socket file and releases the lock.
func (l *lockedListener) Close() error {
	l.once.Do(func() {
		l.err = l.UnixListener.Close()
		l.lock.Close()
	})
	return l.err
}

// checkDirOwner refuses a socket directory owned by another ordinary user:
// whoever owns it could swap the socket for their own and read every
// command sent to it.
func checkDirOwner(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if own := uint32(os.Getuid()); st.Uid != own && st.Uid != 0 {
		return fmt.Errorf("control socket directory %s belongs to uid %d, not to this user (uid %d)", dir, st.Uid, own)
	}
	return nil
}
