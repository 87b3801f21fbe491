package dataplane

import (
	"bufio"
	"net/http"
	"strings"
	"testing"
	"time"

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

// TestProfileAttrOnEachPath: PROFILE::<type> ATTR and PROFILE::list read
// the settings the translation filled on L4, UDP and HTTP virtuals, the
// running side's tcp profile where there is one per side.
func TestProfileAttrOnEachPath(t *testing.T) {
	t.Parallel()
	tcp := func(name, ctx, idle string) rules.ProfileRef {
		return rules.ProfileRef{Type: "tcp", Name: name, Context: ctx, Attrs: map[string]string{"idle-timeout": idle}}
	}
	t.Run("L4", func(t *testing.T) {
		p, _ := newPlane(t)
		echoMember(t, "127.91.2.2:9000")
		cfg := basic("127.91.2.1:8000", "127.91.2.2:9000")
		cfg.Virtuals["/Common/vs"].Profiles = []rules.ProfileRef{tcp("/Common/wan", "clientside", "120"), tcp("/Common/lan", "serverside", "30")}
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when SERVER_CONNECTED { TCP::respond "[PROFILE::tcp idle_timeout]/[clientside {PROFILE::tcp idle_timeout}]/[PROFILE::list tcp]\n" }`)
		mustApply(t, p, cfg)
		c := dial(t, "127.91.2.1:8000")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "30/120//Common/wan /Common/lan\n" {
			t.Errorf("L4: %q", line)
		}
	})
	t.Run("UDP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := udpBasic("127.91.2.3:53", "127.91.2.4:5300")
		cfg.Virtuals["/Common/vs"].Profiles = []rules.ProfileRef{{Type: "udp", Name: "/Common/udp", Attrs: map[string]string{"idle-timeout": "60", "datagram-load-balancing": "disabled"}}}
		r, _ := compileRules(t, `when CLIENT_DATA { if {[catch {PROFILE::udp bogus} e]} { UDP::respond "[PROFILE::udp datagram_load_balancing] $e" } ; UDP::drop }`)
		setVirtualRules(cfg, "/Common/vs", r)
		mustApply(t, p, cfg)
		if got := dialUDP(t, "", "127.91.2.3:53").mustAsk("q"); got != `disabled PROFILE::udp: unknown attribute "bogus" of udp profile /Common/udp` {
			t.Errorf("UDP: %q", got)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := mblbConfig("127.91.2.5:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.91.2.6:80")
		cfg.Virtuals["/Common/vs"].Profiles = []rules.ProfileRef{tcp("/Common/tcp", "", "300"), {Type: "http", Name: "/Common/web", Attrs: map[string]string{"redirect-rewrite": "matching"}}}
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when HTTP_REQUEST { HTTP::respond 200 content "[PROFILE::http redirect_rewrite] [PROFILE::tcp idle_timeout]" }`)
		mustApply(t, p, cfg)
		resp, body, err := dialHTTPVS(t, "127.91.2.5:80").do(httpReq("a", "/"))
		if err != nil || resp.StatusCode != http.StatusOK || body != "matching 300" {
			t.Errorf("HTTP: %v %q", err, body)
		}
	})
}
