package daemon

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane"
)

// TestGroupTextLeavesDeviceLocal checks what config sync carries: the
// device's own cm device, its hostname and its non-floating self IPs stay
// on the device, and a group text applied keeps them.
func TestGroupTextLeavesDeviceLocal(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"mv cm device bigip1 to devA",
		"modify cm device devA configsync-ip 127.0.0.1",
		"modify sys global-settings hostname a.example.com",
		"create net vlan internal",
		"create net self local_self address 10.1.0.1/24 vlan internal",
		"create net self float_self address 10.1.0.100/24 vlan internal traffic-group traffic-group-1",
		"create ltm pool web",
		"create ltm pool gw",
		"create sys ha-group hg1 pools add { gw { weight 50 } }",
		"create ltm rule r1 {\nwhen CLIENT_ACCEPTED {\nlog local0. \"hello\"\n}\n}",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	text := groupText(e.Config())
	for _, want := range []string{"ltm pool /Common/web", "net self /Common/float_self", "net vlan /Common/internal"} {
		if !strings.Contains(text, want) {
			t.Errorf("group text lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"cm device", "a.example.com", "local_self", "sys ha-group"} {
		if strings.Contains(text, not) {
			t.Errorf("group text carries device-local %q:\n%s", not, text)
		}
	}

	// The rule's body has lines in the first column: it is read in
	// several chunks, none of them an object's text.
	if !strings.Contains(text, "\nwhen CLIENT_ACCEPTED") {
		t.Fatalf("the rule is not printed with a first-column body:\n%s", text)
	}

	// Another device's text, applied here: its pool arrives, this
	// device's own objects stay, the rule is unchanged.
	other := strings.Replace(text, "ltm pool /Common/web", "ltm pool /Common/web2", 1)
	e.mu.Lock()
	err := e.applyGroupLocked(t.Context(), "test text", "admin", "sync", other, nil)
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	cfg := e.Config()
	if cfg.Get(ltmPool, "/Common/web2") == nil || cfg.Get(ltmPool, "/Common/web") != nil {
		t.Errorf("the group's pools were not applied:\n%s", cfg.Text())
	}
	if got := groupText(cfg); got != other {
		t.Errorf("applied configuration prints as\n%s\nnot as the group text\n%s", got, other)
	}
	if e.selfName() != "devA" || e.Hostname() != "a.example.com" || cfg.Get(netSelf, "/Common/local_self") == nil ||
		cfg.Get(sysHAGroup, "/Common/hg1") == nil {
		t.Errorf("device-local objects lost: device %s, hostname %s\n%s", e.selfName(), e.Hostname(), cfg.Text())
	}
}

// TestDropStandby checks which virtual servers a device standby for
// traffic-group-1 leaves out: those on its floating addresses, not those
// on traffic-group-local-only ones.
func TestDropStandby(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool p",
		"create ltm virtual-address 127.0.61.2 traffic-group traffic-group-local-only",
		"create cm traffic-group tg2",
		"create ltm virtual-address 127.0.61.3 traffic-group tg2",
		"create ltm virtual floating_default destination 127.0.61.1:80 pool p",
		"create ltm virtual local destination 127.0.61.2:80 pool p",
		"create ltm virtual floating_tg2 destination 127.0.61.3:80 pool p",
		"create net vlan internal",
		"create net self local_self address 127.0.61.10/24 vlan internal",
		"create net self float_self address 127.0.61.11/24 vlan internal traffic-group traffic-group-1",
		"create net self float_tg2 address 127.0.61.12/24 vlan internal traffic-group /Common/tg2",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	names := func(dc *dataplane.Config) []string {
		var out []string
		for n := range dc.Virtuals {
			out = append(out, n)
		}
		sort.Strings(out)
		return out
	}
	for _, tc := range []struct {
		float *floatState
		want  []string
		self  string // the self IPs used, in SNAT automap's order
		show  string // show net self's line for float_tg2
	}{
		{nil, []string{"/Common/floating_default", "/Common/floating_tg2", "/Common/local"}, "", "yes       bigip1"},
		{&floatState{active: map[string]bool{}}, []string{"/Common/local"}, "[127.0.61.10]", "yes       -"},
		{&floatState{active: map[string]bool{"traffic-group-1": true}}, []string{"/Common/floating_default", "/Common/local"},
			"[127.0.61.11 127.0.61.10]", "yes       -"},
		{&floatState{active: map[string]bool{"tg2": true}}, []string{"/Common/floating_tg2", "/Common/local"},
			"[127.0.61.12 127.0.61.10]", "yes       bigip1"},
	} {
		e.float.Store(tc.float)
		tr := e.translate(e.Config())
		if got := names(tr.dc); !slices.Equal(got, tc.want) {
			t.Errorf("active %v: virtuals %v, want %v", tc.float, got, tc.want)
		}
		if tc.self == "" {
			if len(tr.dc.SelfIPs) != 3 {
				t.Errorf("standalone: self IPs %v, want all three", tr.dc.SelfIPs)
			}
		} else if got := fmt.Sprint(tr.dc.SelfIPs); got != tc.self {
			t.Errorf("active %v: self IPs %s, want %s", tc.float, got, tc.self)
		}
		out, errText := run(t, s, "show net self")
		if errText != "" {
			t.Fatal(errText)
		}
		if !strings.Contains(out, "local_self               127.0.61.10/24       traffic-group-local-only     no        bigip1") ||
			!strings.Contains(out, "float_tg2                127.0.61.12/24       tg2                          "+tc.show) {
			t.Errorf("active %v: show net self:\n%s", tc.float, out)
		}
	}
	e.float.Store(nil)
}

// TestCMCommandsStandalone: a device started without an etcd cluster
// renames itself and shows itself standalone; group commands say what
// they need.
func TestCMCommandsStandalone(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, tc := range []struct{ cmd, out, err string }{
		{cmd: "show cm sync-status", out: "Status   Standalone"},
		{cmd: "show cm failover-status", out: "Status   ACTIVE"},
		{cmd: "mv cm device nosuch to x", err: "this device is bigip1"},
		{cmd: "mv cm device bigip1 to bad/name", err: "device name"},
		{cmd: "mv cm device bigip1 to", err: "mv cm device takes a name"},
		{cmd: "mv cm device bigip1 to devA"},
		{cmd: "list cm device", out: "cm device devA {\n    self-device true\n}"},
		{cmd: "mv cm device devA to devB"},
		{cmd: "modify cm device devB configsync-ip 127.0.0.1"},
		{cmd: "list cm device devB", out: "configsync-ip 127.0.0.1"},
		{cmd: "modify cm device devB unicast-address { { ip 127.0.0.1 port 1027 } { ip 127.0.0.2 } }"},
		{cmd: "modify cm device devB unicast-address { { ip nowhere } }", err: `unicast-address ip "nowhere" is not an IP address`},
		{cmd: "modify cm device devB unicast-address { { ip 127.0.0.1 port 0 } }", err: "valid ports are 1-65535"},
		{cmd: "list cm device devB", out: "port 1027"},
		{cmd: "create cm device-group dg devices add { devB } type sync-failover", err: "--cluster-endpoints"},
		{cmd: "run cm config-sync to-group dg", err: "--cluster-endpoints"},
		{cmd: "modify cm trust-domain Root ca-devices add { 127.0.0.2 } name b username u password p", err: "--cluster-endpoints"},
		{cmd: "run sys failover standby", err: "not in a sync-failover device group"},
		{cmd: "run sys nothing", err: "unknown command"},
	} {
		out, err := run(t, s, tc.cmd)
		if (tc.err == "") != (err == "") || !strings.Contains(err, tc.err) {
			t.Errorf("%s: error %q, want %q", tc.cmd, err, tc.err)
		}
		if !strings.Contains(out, tc.out) {
			t.Errorf("%s: output %q, want %q", tc.cmd, out, tc.out)
		}
	}
	if got, err := e.unicastAddrs(); err != nil || fmt.Sprint(got) != "[127.0.0.1:1027 127.0.0.2:1026]" {
		t.Errorf("unicast addresses %v (%v)", got, err)
	}
	if e.selfName() != "devB" {
		t.Errorf("device is %s", e.selfName())
	}
	if p := s.Prompt(); p.SyncStatus != "" || p.Failover != "" {
		t.Errorf("standalone prompt %+v", p)
	}
}

func TestNextChunk(t *testing.T) {
	for _, tc := range []struct {
		text  string
		parts []string
	}{
		{"", nil},
		{"#TMSH-VERSION: 15.1.0\n\nltm pool /Common/a { }\n", []string{"#TMSH-VERSION: 15.1.0\n\n", "ltm pool /Common/a { }\n"}},
		{"ltm pool /Common/a {\n    members none\n}\nltm node /Common/n {\n    address 10.0.0.1\n}\n",
			[]string{"ltm pool /Common/a {\n    members none\n}\n", "ltm node /Common/n {\n    address 10.0.0.1\n}\n"}},
		{"ltm rule /Common/r {\nwhen X {\n}\n}\nltm pool /Common/a { }", []string{"ltm rule /Common/r {\n", "when X {\n}\n}\n", "ltm pool /Common/a { }"}},
	} {
		var got []string
		for rest := tc.text; rest != ""; {
			c := nextChunk(rest)
			got = append(got, c)
			rest = rest[len(c):]
		}
		if !slices.Equal(got, tc.parts) {
			t.Errorf("%q: chunks %q, want %q", tc.text, got, tc.parts)
		}
	}
}

// An HA group read from the configuration: its bonus, its pools' settings
// (threshold as minimum-threshold, sufficient-threshold all as 0) and
// disabled, with no dataplane (no member counted up).
func TestHAGroupsFromConfig(t *testing.T) {
	e := openTest(t, t.TempDir())
	defer e.Close()
	s := e.NewSession("admin").(*Session)
	for _, c := range []string{
		"create ltm pool gw",
		"create ltm pool gw2",
		"create sys ha-group hg1 active-bonus 20 pools add { gw { weight 60 threshold 2 } gw2 { weight 30 sufficient-threshold 3 } }",
		"create sys ha-group hg2 disabled",
	} {
		if _, err := run(t, s, c); err != "" {
			t.Fatalf("%s: %s", c, err)
		}
	}
	gs := e.haGroups(e.Config())
	g := gs["/Common/hg1"]
	if !g.Enabled || g.ActiveBonus != 20 || len(g.Pools) != 2 || g.Score() != 0 {
		t.Fatalf("hg1 %+v", g)
	}
	if p := g.Pools[0]; p.Name != "/Common/gw" || p.Weight != 60 || p.MinThreshold != 2 || p.SufficientThreshold != 0 {
		t.Errorf("gw %+v", p)
	}
	if p := g.Pools[1]; p.Weight != 30 || p.SufficientThreshold != 3 {
		t.Errorf("gw2 %+v", p)
	}
	if g := gs["/Common/hg2"]; g.Enabled || g.ActiveBonus != 10 {
		t.Errorf("hg2 %+v", g)
	}
}
