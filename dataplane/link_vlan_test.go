package dataplane

import (
	"bufio"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/rules"
)

// TestLinkVLANID: LINK::vlan_id answers the tag of the VLAN whose
// interface the client's connection came in on. Loopback connections
// arrive on lo, which the rules' environment maps to tag 91 as the
// daemon maps a net vlan naming lo; the listener keeps arrivals only
// because the rule reads them (no VLAN list here). An L4 virtual and an
// HTTP one answer it; a UDP virtual cannot tell and errs.
func TestLinkVLANID(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("skipped: only Linux tells a connection's arrival interface")
	}
	t.Parallel()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	prog := func(t *testing.T, body string) Rules {
		r, err := rules.Compile("/Common/link", body)
		if err != nil {
			t.Fatal(err)
		}
		env := &rules.Env{Log: (&ruleLog{}).log, VLANTag: func(ifindex int) (int, bool) { return 91, ifindex == lo.Index }}
		if !rules.NewProgram(env, r).ReadsLink() {
			t.Fatal("the program does not say it reads the arrival VLAN")
		}
		return NewRules(rules.NewProgram(env, r))
	}
	t.Run("L4", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := basic("127.91.4.1:8000", "127.91.4.2:9000")
		cfg.Virtuals["/Common/vs"].Rules = prog(t, `when CLIENT_ACCEPTED { TCP::respond "vlan [LINK::vlan_id]\n"; TCP::close }`)
		mustApply(t, p, cfg)
		c := dial(t, "127.91.4.1:8000")
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil || line != "vlan 91\n" {
			t.Errorf("L4: %q, %v; want vlan 91", line, err)
		}
	})
	t.Run("HTTP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := mblbConfig("127.91.4.3:80", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}, "127.91.4.4:80")
		cfg.Virtuals["/Common/vs"].Rules = prog(t, `when HTTP_REQUEST { HTTP::respond 200 content [LINK::vlan_id] }`)
		mustApply(t, p, cfg)
		resp, body, err := dialHTTPVS(t, "127.91.4.3:80").do(httpReq("a", "/"))
		if err != nil || resp.StatusCode != http.StatusOK || body != strconv.Itoa(91) {
			t.Errorf("HTTP: %v %q, want 91", err, body)
		}
	})
	t.Run("UDP", func(t *testing.T) {
		p, _ := newPlane(t)
		cfg := udpBasic("127.91.4.5:53", "127.91.4.6:5300")
		setVirtualRules(cfg, "/Common/vs", prog(t, `when CLIENT_DATA { catch {LINK::vlan_id} e; UDP::respond $e; UDP::drop }`))
		mustApply(t, p, cfg)
		if got := dialUDP(t, "", "127.91.4.5:53").mustAsk("q"); !strings.Contains(got, "cannot tell which VLAN") {
			t.Errorf("UDP: %q", got)
		}
	})
}
