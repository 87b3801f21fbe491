package daemon

import (
	"slices"
	"testing"
)

// TestOwnDestsTranslated: the destinations the daemon's own parts
// connect to reach the plane (Config.OwnDests), for the steering to pass
// over: sys syslog's remote servers, a net dns-resolver's forward-zones
// nameservers, the servers of a virtual's auth profile (tacacs here,
// one written without a port: 49); a host name is not.
func TestOwnDestsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"modify sys syslog remote-servers add { r1 { host 127.253.8.12 remote-port 20514 } }",
		"create net dns-resolver r1 forward-zones { . { nameservers { 127.253.8.53:20053 { } } } }",
		"create ltm pool p members add { 127.253.8.11:8080 }",
		"create ltm auth tacacs tac servers add { 127.253.8.20:4949 127.253.8.21 tac.example } secret tacsecret service ppp protocol ip",
		"create ltm auth profile tacprof defaults-from tacacs config tac idle-timeout 0",
		"create ltm virtual vs destination 127.253.8.1:80 pool p profiles replace-all-with { tcp http } auth { tacprof }",
	)
	tr := e.translate(e.Config())
	var got []string
	for _, d := range tr.dc.OwnDests {
		got = append(got, d.String())
	}
	slices.Sort(got)
	want := []string{"127.253.8.12:20514", "127.253.8.20:4949", "127.253.8.21:49", "127.253.8.53:20053"}
	if !slices.Equal(got, want) {
		t.Errorf("OwnDests %v, want %v (skipped %q)", got, want, tr.skipped)
	}
}
