package control

import (
	"errors"
	"strings"
	"testing"
)

func TestResolvePaths(t *testing.T) {
	home := func() (string, error) { return "/home/ann", nil }
	noHome := func() (string, error) { return "", errors.New("no home") }
	long := "/" + strings.Repeat("d", 120)
	tests := []struct {
		name              string
		stateFlag, sockFl string
		env               map[string]string
		home              func() (string, error)
		want              Paths
	}{
		{"home defaults", "", "", nil, home,
			Paths{"/home/ann/.local/state/openltm", "/home/ann/.local/state/openltm/ltmd.sock"}},
		{"xdg dirs", "", "", map[string]string{"XDG_STATE_HOME": "/xs", "XDG_RUNTIME_DIR": "/run/user/7"}, home,
			Paths{"/xs/openltm", "/run/user/7/openltm/ltmd.sock"}},
		{"explicit state dir owns its socket", "/srv/ltm", "", map[string]string{"XDG_RUNTIME_DIR": "/run/user/7"}, home,
			Paths{"/srv/ltm", "/srv/ltm/ltmd.sock"}},
		{"state dir from env", "", "", map[string]string{"OPENLTM_STATE_DIR": "/e", "XDG_RUNTIME_DIR": "/run/user/7"}, home,
			Paths{"/e", "/e/ltmd.sock"}},
		{"socket env wins", "/srv/ltm", "", map[string]string{"OPENLTM_SOCKET": "/s.sock"}, home,
			Paths{"/srv/ltm", "/s.sock"}},
		{"flags win", "/a", "/b.sock", map[string]string{"OPENLTM_SOCKET": "/s.sock", "OPENLTM_STATE_DIR": "/e"}, home,
			Paths{"/a", "/b.sock"}},
		{"no home", "", "", nil, noHome,
			Paths{"/tmp/openltm-7/state", "/tmp/openltm-7/state/ltmd.sock"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			getenv := func(k string) string { return tt.env[k] }
			got := resolvePaths(tt.stateFlag, tt.sockFl, getenv, tt.home, 7, "/tmp")
			if got != tt.want {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	got := resolvePaths(long, "", func(string) string { return "" }, home, 7, "/tmp")
	if !strings.HasPrefix(got.Socket, "/tmp/openltm-7/ltmd-") || len(got.Socket) > maxSocketPath {
		t.Fatalf("long state dir gave socket %q", got.Socket)
	}
}
