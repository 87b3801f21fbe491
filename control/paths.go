package control

import (
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
)

// Environment variables that choose where ltmd keeps its state and socket
// when no flag says otherwise.
const (
	EnvSocket   = "OPENLTM_SOCKET"
	EnvStateDir = "OPENLTM_STATE_DIR"
)

// Paths is where one daemon lives: its state directory and its socket.
type Paths struct {
	StateDir string
	Socket   string
}

// ResolvePaths applies the precedence shared by ltmd and tmsh, so both
// agree on where to meet without being told:
//
// State dir: stateDir flag, $OPENLTM_STATE_DIR, $XDG_STATE_HOME/openltm,
// ~/.local/state/openltm, then a per-uid directory under the temp dir.
//
// Socket: socket flag, $OPENLTM_SOCKET; then, when the state dir was chosen
// explicitly (flag or environment), <state dir>/ltmd.sock, so each state dir
// gets its own daemon; otherwise $XDG_RUNTIME_DIR/openltm/ltmd.sock, else
// <state dir>/ltmd.sock. A path too long for a unix socket is replaced by
// one under a per-uid temp directory, derived from the state dir.
func ResolvePaths(stateDir, socket string) Paths {
	return resolvePaths(stateDir, socket, os.Getenv, os.UserHomeDir, os.Getuid(), os.TempDir())
}

func resolvePaths(stateDir, socket string, getenv func(string) string, home func() (string, error), uid int, tmp string) Paths {
	explicit := true
	if stateDir == "" {
		stateDir = getenv(EnvStateDir)
	}
	if stateDir == "" {
		explicit = false
		switch xdg := getenv("XDG_STATE_HOME"); {
		case xdg != "":
			stateDir = filepath.Join(xdg, "openltm")
		default:
			if h, err := home(); err == nil && h != "" {
				stateDir = filepath.Join(h, ".local", "state", "openltm")
			} else {
				stateDir = filepath.Join(tmp, fmt.Sprintf("openltm-%d", uid), "state")
			}
		}
	}
	if abs, err := filepath.Abs(stateDir); err == nil {
		stateDir = abs
	}
	if socket == "" {
		socket = getenv(EnvSocket)
	}
	if socket == "" {
		rt := getenv("XDG_RUNTIME_DIR")
		if !explicit && rt != "" {
			socket = filepath.Join(rt, "openltm", "ltmd.sock")
		} else {
			socket = filepath.Join(stateDir, "ltmd.sock")
		}
		if len(socket) > maxSocketPath {
			h := fnv.New32a()
			h.Write([]byte(stateDir))
			socket = filepath.Join(tmp, fmt.Sprintf("openltm-%d", uid), fmt.Sprintf("ltmd-%08x.sock", h.Sum32()))
		}
	}
	if abs, err := filepath.Abs(socket); err == nil {
		socket = abs
	}
	return Paths{StateDir: stateDir, Socket: socket}
}
