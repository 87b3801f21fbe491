package control_test

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/openltm/openltm/control"
)

func TestListenSocketIsPrivate(t *testing.T) {
	path := filepath.Join(sockPath(t)+".d", "sub", "s.sock")
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, want socket 0600", fi.Mode())
	}
	di, err := os.Stat(filepath.Dir(path))
	if err != nil {
		t.Fatal(err)
	}
	if di.Mode().Perm() != 0o700 {
		t.Fatalf("created directory mode %v, want 0700", di.Mode().Perm())
	}
	os.RemoveAll(filepath.Dir(filepath.Dir(path)))
}

func TestListenRefusesALiveDaemon(t *testing.T) {
	path := sockPath(t)
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if _, err := control.Listen(path); !errors.Is(err, control.ErrInUse) {
		t.Fatalf("second Listen: %v, want ErrInUse", err)
	}

	// A listener that holds no lock (another program, an older daemon) is
	// still never replaced while it answers.
	other := sockPath(t)
	raw, err := net.Listen("unix", other)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := control.Listen(other); !errors.Is(err, control.ErrInUse) {
		t.Fatalf("Listen over a live socket: %v, want ErrInUse", err)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	path := sockPath(t)
	raw, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	raw.SetUnlinkOnClose(false)
	raw.Close() // a daemon that died: the file stays, nobody answers
	if _, err := os.Lstat(path); err != nil {
		t.Fatal(err)
	}
	ln, err := control.Listen(path)
	if err != nil {
		t.Fatalf("Listen over a stale socket: %v", err)
	}
	ln.Close()
	// After a clean close the path is free again.
	ln, err = control.Listen(path)
	if err != nil {
		t.Fatalf("Listen after close: %v", err)
	}
	ln.Close()
}

func TestListenNeverRemovesOtherFiles(t *testing.T) {
	path := sockPath(t)
	if err := os.WriteFile(path, []byte("precious"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := control.Listen(path); err == nil {
		t.Fatal("Listen replaced a regular file")
	}
	if b, _ := os.ReadFile(path); string(b) != "precious" {
		t.Fatal("the file was touched")
	}
}
