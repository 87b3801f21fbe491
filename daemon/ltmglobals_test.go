package daemon

import (
	"testing"
)

// TestRejectRateSources: the plane's reject rate comes from ltm
// global-settings traffic-control max-reject-rate when it is given, else
// from sys db tm.maxrejectrate, else BIG-IP's default, 250.
func TestRejectRateSources(t *testing.T) {
	for _, c := range []struct {
		name, conf string
		want       int64
		fromTC     bool
		db         string
	}{
		{"defaults", ``, 250, false, ""},
		{"db key", `sys db tm.maxrejectrate { value "7" }`, 7, false, "7"},
		{"traffic-control", `ltm global-settings traffic-control { max-reject-rate 3 }`, 3, true, ""},
		{"both: traffic-control wins", `sys db tm.maxrejectrate { value "7" }
ltm global-settings traffic-control { max-reject-rate 3 }`, 3, true, "7"},
		{"traffic-control at its default still given", `sys db tm.maxrejectrate { value "0" }
ltm global-settings traffic-control { max-reject-rate 250 }`, 250, true, "0"},
		{"other rows leave the db key", `sys db tm.maxrejectrate { value "0" }
ltm global-settings traffic-control { reject-unmatched disabled }`, 0, false, "0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, fromTC, db := rejectRate(gtmConfig(t, c.conf))
			if n != c.want || fromTC != c.fromTC || db != c.db {
				t.Fatalf("rejectRate = %d, %v, %q; want %d, %v, %q", n, fromTC, db, c.want, c.fromTC, c.db)
			}
		})
	}
	if n, fromTC, db := rejectRate(nil); n != 250 || fromTC || db != "" {
		t.Fatalf("rejectRate(nil) = %d, %v, %q", n, fromTC, db)
	}
}

// TestMaintenanceMode: ltm global-settings general maintenance-mode
// enabled leaves every virtual server of the translation disabled.
func TestMaintenanceMode(t *testing.T) {
	const vs = `ltm pool /Common/p { members { /Common/127.181.9.11:80 { address 127.181.9.11 } } }
ltm virtual /Common/v { destination /Common/127.181.9.1:80 ip-protocol tcp pool /Common/p profiles { /Common/tcp { } } }
`
	for _, c := range []struct {
		conf string
		want bool // the virtual enabled
	}{
		{vs, true},
		{vs + `ltm global-settings general { maintenance-mode disabled }`, true},
		{vs + `ltm global-settings general { maintenance-mode enabled }`, false},
	} {
		v := translatedVirtual(t, c.conf, c.conf)
		if v.Enabled != c.want {
			t.Errorf("%s: enabled %v, want %v", c.conf, v.Enabled, c.want)
		}
	}
}
