package gslb

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/openltm/openltm/dataplane/gslb/gslbtest"
	"github.com/openltm/openltm/dataplane/internal/config"
	"golang.org/x/sys/unix"
)

// listenerVLANsNetnsEnv carries the client namespaces' names to the
// test binary run again inside the server's namespace.
const listenerVLANsNetnsEnv = "OPENLTM_GTM_VLANS_NETNS"

// TestListenerVLANsNetns runs a gtm listener in a network namespace of
// its own with two veth interfaces, va and vb, each leading to a
// namespace with a client: for each VLAN setting the client behind va
// and the one behind vb get answers over UDP and TCP or not, as BIG-IP
// would. The listener's address is va's, which the client behind vb
// reaches through vb. The namespaces use 127.95.x addresses with
// route_localnet, so the host's own addresses and routes are not
// touched.
func TestListenerVLANsNetns(t *testing.T) {
	if ns := os.Getenv(listenerVLANsNetnsEnv); ns != "" {
		a, b, _ := strings.Cut(ns, ",")
		listenerVLANsInNetns(t, a, b)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root")
	}
	for _, tool := range []string{"ip", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed", tool)
		}
	}
	id := fmt.Sprint(os.Getpid())
	l, a, b := "oltmgl"+id, "oltmga"+id, "oltmgb"+id
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command("ip", "netns", "add", l).CombinedOutput(); err != nil {
		t.Skipf("skipped: cannot create a network namespace: %v: %s", err, strings.TrimSpace(string(out)))
	}
	exec.Command("ip", "netns", "del", l).Run()
	for _, ns := range []string{l, a, b} {
		ip("netns", "add", ns)
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
		ip("-n", ns, "link", "set", "lo", "up")
		ip("netns", "exec", ns, "sysctl", "-qw", "net.ipv4.conf.all.route_localnet=1")
	}
	for i, side := range []struct{ ns, here, there string }{{a, "va", "ca"}, {b, "vb", "cb"}} {
		ip("-n", l, "link", "add", side.here, "type", "veth", "peer", "name", side.there, "netns", side.ns)
		ip("netns", "exec", l, "sysctl", "-qw", "net.ipv4.conf."+side.here+".route_localnet=1")
		ip("netns", "exec", side.ns, "sysctl", "-qw", "net.ipv4.conf."+side.there+".route_localnet=1")
		ip("-n", l, "addr", "add", fmt.Sprintf("127.95.%d.1/24", 21+i), "dev", side.here)
		ip("-n", side.ns, "addr", "add", fmt.Sprintf("127.95.%d.2/24", 21+i), "dev", side.there)
		ip("-n", l, "link", "set", side.here, "up")
		ip("-n", side.ns, "link", "set", side.there, "up")
		if i == 1 {
			ip("-n", side.ns, "route", "add", "127.95.21.1/32", "dev", side.there)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", l, os.Args[0], "-test.run", "^TestListenerVLANsNetns$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), listenerVLANsNetnsEnv+"="+a+","+b)
	out, err := cmd.CombinedOutput()
	t.Logf("in namespace %s:\n%s", l, out)
	if err != nil {
		t.Fatalf("the test in the namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestListenerVLANsNetns") {
		t.Fatal("the test in the namespace did not pass")
	}
}

// queryIn is gslbtest.Query from network namespace ns (named by ip
// netns): the socket is made on a thread moved there for the while.
func queryIn(t *testing.T, ns string, srv netip.AddrPort, network string, timeout time.Duration) (*dns.Msg, error) {
	t.Helper()
	runtime.LockOSThread()
	self, err := os.Open("/proc/thread-self/ns/net")
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer self.Close()
	to, err := os.Open("/var/run/netns/" + ns)
	if err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	defer to.Close()
	if err := unix.Setns(int(to.Fd()), unix.CLONE_NEWNET); err != nil {
		runtime.UnlockOSThread()
		t.Fatal(err)
	}
	m, qerr := gslbtest.Query(netip.Addr{}, srv, network, "static.example.com", dns.TypeA, timeout)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, and ends with the goroutine.
		t.Fatalf("back to the test's namespace: %v", err)
	}
	runtime.UnlockOSThread()
	return m, qerr
}

// listenerVLANsInNetns is TestListenerVLANsNetns inside the server's
// namespace.
func listenerVLANsInNetns(t *testing.T, a, b string) {
	va, err := net.InterfaceByName("va")
	if err != nil {
		t.Fatal(err)
	}
	vb, err := net.InterfaceByName("vb")
	if err != nil {
		t.Fatal(err)
	}
	listen := netip.MustParseAddrPort("127.95.21.1:5353")
	s := newServer(t, testConfig(listen), Options{})
	for _, tc := range []struct {
		name     string
		vlans    *config.VLANFilter
		aOK, bOK bool
	}{
		{"every vlan", nil, true, true},
		{"enabled on va", &config.VLANFilter{Ifindex: []int{va.Index}, Device: "va"}, true, false},
		{"enabled on vb", &config.VLANFilter{Ifindex: []int{vb.Index}, Device: "vb"}, false, true},
		{"enabled on both", &config.VLANFilter{Ifindex: []int{va.Index, vb.Index}}, true, true},
		{"disabled on va", &config.VLANFilter{Ifindex: []int{va.Index}, Disabled: true}, false, true},
		{"disabled on vb", &config.VLANFilter{Ifindex: []int{vb.Index}, Disabled: true}, true, false},
		{"enabled on vb, the check alone", &config.VLANFilter{Ifindex: []int{vb.Index}}, false, true},
		{"every vlan again", nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig(listen)
			cfg.Listeners[0].VLANs = tc.vlans
			if err := s.Apply(cfg); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				ns string
				ok bool
			}{{a, tc.aOK}, {b, tc.bOK}} {
				for _, network := range []string{"udp", "tcp"} {
					timeout := 5 * time.Second
					if !c.ok {
						timeout = 500 * time.Millisecond
					}
					m, err := queryIn(t, c.ns, listen, network, timeout)
					if got := err == nil && len(gslbtest.Addrs(m)) > 0; got != c.ok {
						t.Errorf("client in %s over %s: answered %v (err %v), want %v", c.ns, network, got, err, c.ok)
					}
				}
			}
		})
	}
}
