package daemon

import (
	"testing"
	"time"
)

// TestAlertTimeoutTranslated: client-ssl and server-ssl alert-timeout
// reach the virtual's TLS in seconds; indefinite (the default) is 0,
// which arms no timer; a word other than a number or indefinite is
// refused and nothing changed.
func TestAlertTimeoutTranslated(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.35.2.11:443 }",
		"create ltm profile client-ssl cs_short defaults-from clientssl alert-timeout 7",
		"create ltm profile server-ssl ss_short defaults-from serverssl alert-timeout 3",
		"create ltm virtual v_short destination 127.35.2.1:443 pool p profiles replace-all-with { tcp cs_short ss_short }",
		"create ltm virtual v_default destination 127.35.2.2:443 pool p profiles replace-all-with { tcp clientssl serverssl }",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	if _, err := run(t, s, "modify ltm profile client-ssl cs_short alert-timeout soon"); err == "" {
		t.Fatal("alert-timeout soon was taken")
	}
	tr := e.translate(e.Config())
	for _, tc := range []struct {
		vs             string
		client, server time.Duration
	}{
		{"/Common/v_short", 7 * time.Second, 3 * time.Second},
		{"/Common/v_default", 0, 0},
	} {
		v := tr.dc.Virtuals[tc.vs]
		if v == nil || v.TLS == nil {
			t.Fatalf("%s: %+v\n%q", tc.vs, v, tr.kept)
		}
		if v.TLS.ClientAlert != tc.client || v.TLS.ServerAlert != tc.server {
			t.Errorf("%s: client %v server %v, want %v %v", tc.vs, v.TLS.ClientAlert, v.TLS.ServerAlert, tc.client, tc.server)
		}
	}
}
