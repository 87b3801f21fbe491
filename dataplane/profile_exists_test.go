package dataplane

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// TestProfileExistsOnEachPath: PROFILE::exists answers from the virtual's
// own profiles on L4, UDP and HTTP virtuals (the translation fills
// Virtual.Profiles), by type and by name.
func TestProfileExistsOnEachPath(t *testing.T) {
	t.Parallel()
	const ask = `[PROFILE::exists tcp]/[PROFILE::exists clientssl]/[PROFILE::exists udp]/[PROFILE::exists http web_http]/[PROFILE::exists oneconnect]`
	profiles := func(types ...string) []rules.ProfileRef {
		var out []rules.ProfileRef
		for _, typ := range types {
			name := "/Common/" + typ
			if typ == "http" {
				name = "/Common/web_http"
			}
			out = append(out, rules.ProfileRef{Type: typ, Name: name})
		}
		return out
	}

	t.Run("L4", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := basic("127.11.2.1:8000", "127.11.2.2:9000")
		cfg.Virtuals["/Common/vs"].Profiles = profiles("tcp", "clientssl")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { TCP::respond "`+ask+`\n"; TCP::close }`)
		mustApply(t, p, cfg)
		c := dial(t, "127.11.2.1:8000")
		got, _ := readAll(t, c)
		if strings.TrimSpace(got) != "1/1/0/0/0" {
			t.Errorf("L4: %q, want 1/1/0/0/0", got)
		}
	})
	t.Run("UDP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := udpBasic("127.11.2.3:53", "127.11.2.4:5300")
		cfg.Virtuals["/Common/vs"].Profiles = profiles("udp")
		r, _ := compileRules(t, `when CLIENT_DATA { UDP::respond "`+ask+`"; UDP::drop }`)
		setVirtualRules(cfg, "/Common/vs", r)
		mustApply(t, p, cfg)
		if got := dialUDP(t, "", "127.11.2.3:53").mustAsk("q"); got != "0/0/1/0/0" {
			t.Errorf("UDP: %q, want 0/0/1/0/0", got)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := mblbConfig("127.11.2.5:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.11.2.6:80")
		cfg.Virtuals["/Common/vs"].Profiles = profiles("tcp", "http", "oneconnect")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST { HTTP::respond 200 content "`+ask+`" }`)
		mustApply(t, p, cfg)
		resp, body, err := dialHTTPVS(t, "127.11.2.5:80").do(httpReq("a", "/"))
		if err != nil || resp.StatusCode != http.StatusOK || body != "1/0/0/1/1" {
			t.Errorf("HTTP: %v %q, want 1/0/0/1/1", err, body)
		}
	})
}
