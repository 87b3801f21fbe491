package state

import (
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

func TestPoolOffline(t *testing.T) {
	up, disabled, checking := fixture{mon: MonUp}, fixture{session: config.SessionUserDisabled}, fixture{mon: MonChecking}
	down, forced := fixture{mon: MonDown}, fixture{state: config.StateUserDown}
	for _, c := range []struct {
		name    string
		members []fixture
		want    bool
	}{
		{"empty", nil, false},
		{"all down", []fixture{down, forced, down}, true},
		{"one up", []fixture{down, up}, false},
		{"one disabled", []fixture{forced, disabled}, false},
		{"one checking", []fixture{down, checking}, false},
		{"node down", []fixture{{mon: MonUp, nodeMon: MonDown}}, true},
	} {
		p, _ := pool(c.members...)
		if got := p.Offline(); got != c.want {
			t.Errorf("%s: offline %v, want %v", c.name, got, c.want)
		}
	}
	if (*Pool)(nil).Offline() {
		t.Error("no pool is offline")
	}
}
