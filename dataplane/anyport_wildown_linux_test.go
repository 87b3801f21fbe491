//go:build linux

package dataplane

import (
	"io"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortWildcardOwn: in a namespace of its own, with TCP and UDP
// wildcards on every port (and an IPv6 one) taking every address of
// the namespace, the plane's own destinations beyond pool members are
// passed over: the FQDN node's nameserver (sys dns name-servers, a UDP
// server on a local address the UDP wildcard would take) answers, the
// addresses the name resolves to become members reached through a
// host virtual, and when the answer changes the new address is passed
// over too (the re-apply the resolver's change makes); an IPv6 member on
// a local address, reached through an IPv6 host virtual whose
// connections leave from another local address (a snatpool), gets the
// plane's connection, not the IPv6 wildcard's; an http wildcard on a
// port carries HTTP to its member. None of the plane's own connections
// is counted by a wildcard.
func TestAnyPortWildcardOwn(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, args := range [][]string{
		{"-6", "route", "add", "local", "fd00:253::/64", "dev", "lo"},
		{"addr", "add", "fd00:253::1/128", "dev", "lo", "nodad"},
		{"addr", "add", "fd00:253::2/128", "dev", "lo", "nodad"},
		{"addr", "add", "fd00:253::3/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	z := startTestZone(t, "127.253.5.53")
	z.set("app.example", "127.253.5.11")
	startServer(t, "127.253.5.11:30001", "S1")
	startServer(t, "127.253.5.12:30001", "S2")
	startServer(t, "127.253.5.30:30030", "W") // the wildcards' member
	startUDPMember(t, "127.253.5.30:30030", "WU")
	v6 := startServer(t, "[fd00:253::2]:30001", "V6")
	startServer(t, "[fd00:253::3]:30003", "W6")
	startPortEcho(t, "127.253.5.20:30020", "H")
	p, _ := loggedPlane(t)

	cfg := basic("127.253.5.1:30080")
	cfg.NameServers = []string{z.addr}
	cfg.Nodes = map[string]*Node{"/Common/app.example": {Name: "/Common/app.example",
		FQDN: &FQDN{Name: "app.example", Interval: time.Second, DownInterval: time.Second, Autopopulate: true}}}
	cfg.Pools["/Common/pool"].FQDNMembers = []Member{{Node: "/Common/app.example", Addr: netip.AddrPortFrom(netip.Addr{}, 30001)}}
	add := func(name, dst, network, pl string) *Virtual {
		v := &Virtual{Name: name, Destination: ap(dst), Enabled: true,
			TranslateAddress: true, TranslatePort: true, Pool: pl, SNAT: SNAT{Type: SNATNone}}
		if network != "" {
			v.Network = netip.MustParsePrefix(network)
		}
		cfg.Virtuals[name] = v
		return v
	}
	withPool(cfg, "/Common/pw", "127.253.5.30:30030")
	withPool(cfg, "/Common/p6", "[fd00:253::2]:30001")
	withPool(cfg, "/Common/pw6", "[fd00:253::3]:30003")
	withPool(cfg, "/Common/ph", "127.253.5.20:30020")
	add("/Common/w", "0.0.0.0:0", "0.0.0.0/0", "/Common/pw")
	add("/Common/wu", "0.0.0.0:0", "0.0.0.0/0", "/Common/pw").Protocol = ProtoUDP
	add("/Common/w6", "[::]:0", "::/0", "/Common/pw6")
	h6 := add("/Common/h6", "[fd00:253::1]:30080", "", "/Common/p6")
	h6.SNAT = SNAT{Type: SNATPool, Pool: "/Common/sp6"}
	cfg.SnatPools = map[string][]netip.Addr{"/Common/sp6": {netip.MustParseAddr("fd00:253::1")}}
	add("/Common/wh", "0.0.0.0:30090", "0.0.0.0/0", "/Common/ph").MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)

	// The nameserver answered through the UDP wildcard's namespace.
	eventually(t, "the FQDN member", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.253.5.11:30001"
	})
	if got, err := askOnce("127.253.5.1:30080"); got != "S1 Response" {
		t.Errorf("through the FQDN member: %q (%v)", got, err)
	}
	// The answer changes: the new address is passed over at once.
	z.set("app.example", "127.253.5.12")
	eventually(t, "the new FQDN member", func() bool {
		return memberNames(p, "/Common/pool") == "/Common/_auto_127.253.5.12:30001"
	})
	if got, err := askOnce("127.253.5.1:30080"); got != "S2 Response" {
		t.Errorf("through the new FQDN member: %q (%v)", got, err)
	}
	// The IPv6 member, from the snatpool's address.
	if got, err := askOnce("[fd00:253::1]:30080"); got != "V6 Response" {
		t.Errorf("through the IPv6 host virtual: %q (%v)", got, err)
	}
	if r := v6.lastRemote(); r.Addr() != netip.MustParseAddr("fd00:253::1") {
		t.Errorf("the IPv6 member saw %v, want the snatpool's fd00:253::1", r)
	}
	// The wildcards still take what is theirs.
	if got, err := askOnce("[fd00:253::9]:30007"); got != "W6 Response" {
		t.Errorf("the IPv6 wildcard: %q (%v)", got, err)
	}
	if got, err := askOnce("127.253.5.11:30001"); got != "W Response" {
		t.Errorf("the old FQDN address, no longer a member: %q (%v)", got, err)
	}
	if got := dialUDP(t, "", "127.253.9.9:30054").mustAsk("u"); got != "WU:u" {
		t.Errorf("udp to the wildcard: %q", got)
	}
	// HTTP through the http wildcard on its port.
	hc := &http.Client{Timeout: 5 * time.Second}
	resp, err := hc.Get("http://127.253.9.9:30090/x")
	if err != nil {
		t.Fatalf("http wildcard: %v", err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.HasPrefix(string(body), "H ") || echoField(string(body), "host") != "127.253.9.9:30090" {
		t.Errorf("http wildcard: %d %q", resp.StatusCode, body)
	}
	for name, want := range map[string]uint64{"/Common/w": 1, "/Common/w6": 1, "/Common/wh": 1} {
		if v, _ := p.Virtual(name); v.ClientSide.TotConns != want {
			t.Errorf("%s: %d client connections, want %d (the clients' only)", name, v.ClientSide.TotConns, want)
		}
	}
}
