package daemon

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
	"github.com/openltm/openltm/objects"
)

// snmpdAgent is net-snmp's snmpd answering community public on addr
// (udp) until stop; start runs it again on the same address.
type snmpdAgent struct {
	addr string
	dir  string
	cmd  *exec.Cmd
}

func (a *snmpdAgent) start(t *testing.T) {
	t.Helper()
	const snmpd = "/usr/sbin/snmpd"
	if _, err := os.Stat(snmpd); err != nil {
		t.Skip("net-snmp's snmpd (Debian snmpd) is needed for this test")
	}
	if a.dir == "" {
		a.dir = t.TempDir()
	}
	conf := filepath.Join(a.dir, "snmpd.conf")
	if err := os.WriteFile(conf, []byte("rocommunity public 127.0.0.0/8\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(snmpd, "-f", "-Lo", "-C", "-c", conf, "-M", "/nonexistent", "-I", "-smux", "udp:"+a.addr)
	a.cmd.Env = append(os.Environ(), "SNMP_PERSISTENT_DIR="+a.dir, "MIBS=")
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
}

func (a *snmpdAgent) stop() {
	if a.cmd != nil {
		a.cmd.Process.Kill()
		a.cmd.Wait()
		a.cmd = nil
	}
}

// A gtm server watched by a gtm snmp monitor: each virtual server is up
// while the SNMP agent at its address (on the monitor's port) answers,
// out of the wide IP's answers and named with its monitor in `show gtm
// pool` while the agent is stopped, and back when it runs again.
func TestGTMSNMPMonitorFollowsAgent(t *testing.T) {
	t.Parallel()
	a := &snmpdAgent{addr: "127.126.2.11:16120"}
	a.start(t)
	t.Cleanup(a.stop)
	b := &snmpdAgent{addr: "127.126.2.12:16120"}
	b.start(t)
	t.Cleanup(b.stop)

	e, g := openWithGSLB(t)
	s := e.NewSession("admin").(*Session)
	for _, cmd := range []string{
		"create gtm monitor snmp host_snmp { defaults-from snmp_gtm port 16120 interval 1 timeout 6 probe-timeout 2 probe-attempts 1 }",
		"create gtm datacenter dc1",
		"create gtm server hosts datacenter dc1 product generic-host monitor host_snmp addresses add { 127.126.2.11 127.126.2.12 } virtual-servers add { web1 { destination 127.126.2.11:80 } web2 { destination 127.126.2.12:80 } }",
		"create gtm pool a web members add { hosts:web1 hosts:web2 } max-answers-returned 2",
		"create gtm wideip a web.example.com pools add { web }",
	} {
		out, errText := run(t, s, cmd)
		if errText != "" {
			t.Fatalf("%s: %s", cmd, errText)
		}
		if strings.Contains(out, "kept") {
			t.Errorf("%s: %s", cmd, out)
		}
	}
	answer := func() string { return ask(t, g, "web.example.com", "127.126.2.5") }
	both := func() bool {
		x := answer()
		return strings.Contains(x, "127.126.2.11") && strings.Contains(x, "127.126.2.12")
	}
	eventually(t, 30*time.Second, "both virtual servers up", both)

	b.stop()
	eventually(t, 30*time.Second, "web2 out of the answers", func() bool {
		x := answer()
		return strings.Contains(x, "127.126.2.11") && !strings.Contains(x, "127.126.2.12")
	})
	if out, _ := run(t, s, "show gtm pool a web members"); !strings.Contains(out, "/Common/host_snmp:") {
		t.Errorf("agent stopped: show gtm pool does not name the monitor:\n%s", out)
	}
	b.start(t)
	eventually(t, 30*time.Second, "web2 back in the answers", both)
}

// The gtm snmp monitor's port, or its destination's, is where the probe
// asks, with snmp_gtm's timing; snmp-link asks the same way.
func TestTranslateGTMSNMPMonitor(t *testing.T) {
	const conf = `
gtm monitor snmp /Common/plain { defaults-from /Common/snmp_gtm }
gtm monitor snmp /Common/ported { defaults-from /Common/snmp_gtm port 1161 community monitoring version v2c }
gtm monitor snmp /Common/dest { defaults-from /Common/snmp_gtm destination *:2161 port 1161 }
gtm monitor snmp-link /Common/link { defaults-from /Common/snmp_link port 1162 }
gtm datacenter /Common/dc1 { }
gtm server /Common/h {
    datacenter /Common/dc1
    product generic-host
    addresses { 127.126.3.1 { } }
    virtual-servers {
        plain { destination 127.126.3.1:80 monitor /Common/plain }
        ported { destination 127.126.3.1:81 monitor /Common/ported }
        dest { destination 127.126.3.1:82 monitor /Common/dest }
        link { destination 127.126.3.1:83 monitor /Common/link }
        builtin { destination 127.126.3.1:84 monitor /Common/snmp_gtm }
    }
}
`
	gc, kept, err := TranslateGSLB(objects.Default, gtmConfig(t, conf))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kept {
		if strings.Contains(k, "snmp") || strings.Contains(k, "/Common/plain") {
			t.Errorf("kept: %s", k)
		}
	}
	vs := map[string]gslb.Monitor{}
	for _, v := range gc.Servers["/Common/h"].VirtualServers {
		vs[v.Name] = v.Monitor
	}
	for _, tc := range []struct {
		vs        string
		port      uint16 // the probe's destination port (0: the virtual server's address, port 161)
		community string
		v2c       bool
	}{
		{"plain", 0, "public", false},
		{"ported", 1161, "monitoring", true},
		{"dest", 2161, "public", false},
		{"link", 1162, "public", false},
		{"builtin", 0, "public", false},
	} {
		m := vs[tc.vs]
		if m.Spec == nil || m.Spec.SNMP == nil {
			t.Errorf("%s: no SNMP probe: %+v", tc.vs, m)
			continue
		}
		c := m.Spec.SNMP
		if got := m.Destination.Port(); got != tc.port || c.Port != tc.port {
			t.Errorf("%s: probe port %d, agent port %d; want %d", tc.vs, got, c.Port, tc.port)
		}
		if c.Community != tc.community || c.V2c != tc.v2c || c.Agent != "" || len(c.User) != 0 {
			t.Errorf("%s: agent %+v", tc.vs, c)
		}
		if sp := m.Spec; sp.Attempts != 3 || sp.ProbeTimeout != 5*time.Second || sp.Interval != 90*time.Second || sp.Timeout != 180*time.Second {
			t.Errorf("%s: attempts %d, probe-timeout %v, interval %v, timeout %v; want snmp_gtm's 3, 5s, 90s, 180s",
				tc.vs, sp.Attempts, sp.ProbeTimeout, sp.Interval, sp.Timeout)
		}
	}
}
