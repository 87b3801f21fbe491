package objects

import (
	"strings"
	"testing"
)

// TestLTMGlobalSettings: the three singletons take BIG-IP's values and
// ranges, infinite where a threshold takes it, and refuse the rest.
func TestLTMGlobalSettings(t *testing.T) {
	for _, c := range []struct {
		conf, err string
	}{
		{`ltm global-settings connection { global-syn-challenge-threshold infinite default-vs-syn-challenge-threshold 128 }`, ""},
		{`ltm global-settings connection { default-vs-syn-challenge-threshold 1048576 global-syn-challenge-threshold 4194304 }`, ""},
		{`ltm global-settings connection { default-vs-syn-challenge-threshold 127 }`, "use infinite or an integer from 128 to 1048576"},
		{`ltm global-settings connection { global-syn-challenge-threshold 4194305 }`, "out of range"},
		{`ltm global-settings connection { global-syn-challenge-threshold -1 }`, "use infinite or an integer"},
		{`ltm global-settings connection { default-vs-syn-challenge-threshold lots }`, "is not a valid value"},
		{`ltm global-settings connection { adaptive-reaper-hiwater 101 }`, "out of range"},
		{`ltm global-settings connection { vlan-keyed-conn disabled auto-lasthop disabled }`, ""},
		{`ltm global-settings general { share-single-mac unique maintenance-mode enabled }`, ""},
		{`ltm global-settings general { share-single-mac many }`, "is not a valid value"},
		{`ltm global-settings traffic-control { max-reject-rate 1000 reject-unmatched disabled }`, ""},
		{`ltm global-settings traffic-control { max-reject-rate 0 }`, "out of range"},
		{`ltm global-settings traffic-control { min-path-mtu 67 }`, "out of range"},
		{`ltm global-settings traffic-control { port-find-threshold-trigger 13 }`, "out of range"},
		{`ltm global-settings traffic-control { bogus 1 }`, "unknown property"},
	} {
		_, err := Default.ReadConfig("t.conf", []byte(c.conf), nil)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%s: %v", c.conf, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: error %v, want %q", c.conf, err, c.err)
		}
	}
}

// TestLTMGlobalSettingsKept: every row but description, max-reject-rate,
// maintenance-mode and global-flow-eviction-policy is kept, and says why.
func TestLTMGlobalSettingsKept(t *testing.T) {
	for _, k := range ltmGlobalKinds() {
		if !k.Singleton {
			t.Errorf("%s is not a singleton", k.Key())
		}
		for _, p := range k.Props {
			acted := p.Name == "description" || p.Name == "max-reject-rate" || p.Name == "maintenance-mode" || p.Name == "global-flow-eviction-policy"
			if p.Passive == acted {
				t.Errorf("%s %s: passive %v", k.Key(), p.Name, p.Passive)
			}
			if p.Passive && !strings.HasPrefix(p.Help, "kept: ") {
				t.Errorf("%s %s: kept without a reason", k.Key(), p.Name)
			}
		}
	}
}
