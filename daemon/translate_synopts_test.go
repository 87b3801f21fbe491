package daemon

import (
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
	"github.com/openltm/openltm/dataplane/synhdr"
)

// TestSYNOptionsTranslated: tcp-options reaches the client side and
// proxy-mss, when a profile sets it, the server side (the profiles'
// context decides which); left at their defaults both cost nothing;
// a tcp-options BIG-IP refuses is refused and changes nothing.
func TestSYNOptionsTranslated(t *testing.T) {
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p members add { 127.69.4.11:80 }",
		`create ltm profile tcp opts tcp-options "{28 first} {253 last}"`,
		"create ltm profile tcp mss proxy-mss enabled",
		"create ltm profile tcp mss_child defaults-from mss",
		"create ltm profile tcp mss_off proxy-mss disabled",
	} {
		if out, err := run(t, s, c); err != "" || strings.Contains(out, "not act") {
			t.Fatalf("%s: %s %s", c, out, err)
		}
	}
	picks, _ := synhdr.ParsePicks("{28 first} {253 last}")
	opts := &dataplane.TCPSide{TCPOptions: picks}
	proxy := &dataplane.TCPSide{ProxyMSS: true}
	for _, c := range []struct {
		name, profiles string
		client, server *dataplane.TCPSide
	}{
		{"defaults", "tcp", nil, nil},
		{"tcp-options", "opts", opts, nil},
		{"proxy-mss", "mss", nil, proxy},
		{"proxy-mss inherited", "mss_child", nil, proxy},
		{"proxy-mss disabled", "mss_off", nil, nil},
		{"per side", "opts { context clientside } mss { context serverside }", opts, proxy},
		{"proxy-mss on the client side only", "mss { context clientside } tcp { context serverside }", nil, nil},
	} {
		run(t, s, "delete ltm virtual v")
		cmd := "create ltm virtual v destination 127.69.4.1:80 pool p profiles replace-all-with { " + c.profiles + " }"
		if out, err := run(t, s, cmd); err != "" {
			t.Fatalf("%s: %s %s", c.name, out, err)
		}
		dc, skipped := Translate(e.schema, e.Config())
		if len(skipped) != 0 {
			t.Fatalf("%s: skipped %v", c.name, skipped)
		}
		v := dc.Virtuals["/Common/v"]
		if !sameSide(v.ClientTCP, c.client) || !sameSide(v.ServerTCP, c.server) {
			t.Errorf("%s: client %+v server %+v; want %+v %+v", c.name, v.ClientTCP, v.ServerTCP, c.client, c.server)
		}
	}
	for _, bad := range []string{
		`modify ltm profile tcp opts tcp-options "{1 first}"`,
		`modify ltm profile tcp opts tcp-options "{28 middle}"`,
		`modify ltm profile tcp opts tcp-options "{28 first} {28 last}"`,
		`modify ltm profile tcp opts tcp-options "28 first"`,
		"modify ltm profile tcp opts proxy-mss sometimes",
	} {
		before := e.Config()
		if _, err := run(t, s, bad); err == "" {
			t.Errorf("%s: accepted", bad)
		}
		if e.Config() != before {
			t.Errorf("%s: the configuration changed", bad)
		}
	}
}
