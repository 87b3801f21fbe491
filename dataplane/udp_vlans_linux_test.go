//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// udpDropped is the virtual's udp profile count of dropped datagrams.
func udpDropped(p *Plane) uint64 {
	return p.ProfileStats(ProfileUDP, "udp", []string{"/Common/vs"}).Conns.Dropped
}

// TestUDPVLANsLoopback: a UDP virtual enabled or disabled on VLANs whose
// interface is the loopback, lo, where every datagram of this test
// arrives: enabled on lo alone (the sockets bound to it) or on lo and
// another (each datagram checked) it answers; disabled on lo, or enabled
// only elsewhere, it drops the datagrams and counts them.
func TestUDPVLANsLoopback(t *testing.T) {
	t.Parallel()
	lo, err := net.InterfaceByName("lo")
	if err != nil {
		t.Skipf("skipped: no lo interface: %v", err)
	}
	other := lo.Index + 1000 // no interface has it: datagrams never arrive there
	startUDPMember(t, "127.95.2.2:5300", "S1")
	p, _ := newPlane(t)
	for i, tc := range []struct {
		name  string
		vlans *VLANFilter
		ok    bool
	}{
		{"every vlan", nil, true},
		{"enabled on lo, bound", &VLANFilter{Ifindex: []int{lo.Index}, Device: "lo"}, true},
		{"disabled on lo", &VLANFilter{Ifindex: []int{lo.Index}, Disabled: true}, false},
		{"enabled on lo and another", &VLANFilter{Ifindex: []int{other, lo.Index}}, true},
		{"enabled elsewhere", &VLANFilter{Ifindex: []int{other}}, false},
		{"disabled elsewhere", &VLANFilter{Ifindex: []int{other}, Disabled: true}, true},
		{"enabled on none", &VLANFilter{}, false},
		{"every vlan again", nil, true},
	} {
		cfg := udpBasic("127.95.2.1:53", "127.95.2.2:5300")
		cfg.Virtuals["/Common/vs"].VLANs = tc.vlans
		mustApply(t, p, cfg)
		u := dialUDP(t, fmt.Sprintf("127.95.2.%d:0", 10+i), "127.95.2.1:53")
		before := udpDropped(p)
		if tc.ok {
			if a := u.mustAsk("q"); a != "S1:q" {
				t.Fatalf("%s: answer %q", tc.name, a)
			}
			if d := udpDropped(p); d != before {
				t.Fatalf("%s: %d datagrams counted dropped", tc.name, d-before)
			}
			continue
		}
		if a := u.ask("q"); a != "" {
			t.Fatalf("%s: answered %q, want the datagram dropped", tc.name, a)
		}
		eventually(t, tc.name+": the dropped datagram counted", func() bool { return udpDropped(p) > before })
	}
}

// udpVLANsNetnsEnv carries the client namespaces' names to the test
// binary run again inside the proxy's namespace.
const udpVLANsNetnsEnv = "OPENLTM_UDP_VLANS_NETNS"

// TestUDPVLANsNetns runs a UDP virtual in a network namespace of its own
// with two veth interfaces, va and vb, each leading to a namespace with
// a client: for each VLAN setting the client behind va and the one
// behind vb are answered or not as BIG-IP would. The virtual's address
// is va's, which the client behind vb reaches through vb. The namespaces
// use 127.95.x addresses with route_localnet, so the host's own
// addresses and routes are not touched.
func TestUDPVLANsNetns(t *testing.T) {
	if ns := os.Getenv(udpVLANsNetnsEnv); ns != "" {
		a, b, _ := strings.Cut(ns, ",")
		udpVLANsInNetns(t, a, b)
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
	l, a, b := "oltmul"+id, "oltmua"+id, "oltmub"+id
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
		ip("-n", l, "addr", "add", fmt.Sprintf("127.95.%d.1/24", 11+i), "dev", side.here)
		ip("-n", side.ns, "addr", "add", fmt.Sprintf("127.95.%d.2/24", 11+i), "dev", side.there)
		ip("-n", l, "link", "set", side.here, "up")
		ip("-n", side.ns, "link", "set", side.there, "up")
		if i == 1 {
			ip("-n", side.ns, "route", "add", "127.95.11.1/32", "dev", side.there)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", l, os.Args[0], "-test.run", "^TestUDPVLANsNetns$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), udpVLANsNetnsEnv+"="+a+","+b)
	out, err := cmd.CombinedOutput()
	t.Logf("in namespace %s:\n%s", l, out)
	if err != nil {
		t.Fatalf("the test in the namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestUDPVLANsNetns") {
		t.Fatal("the test in the namespace did not pass")
	}
}

// dialUDPIn is dialUDP from network namespace ns (named by ip netns):
// the socket is made on a thread moved there for the while, and stays
// in ns.
func dialUDPIn(t *testing.T, ns, vs string) *udpClient {
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
	u := dialUDP(t, "", vs)
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, and ends with the goroutine.
		t.Fatalf("back to the test's namespace: %v", err)
	}
	runtime.UnlockOSThread()
	return u
}

// udpVLANsInNetns is TestUDPVLANsNetns inside the proxy's namespace.
func udpVLANsInNetns(t *testing.T, a, b string) {
	va, err := net.InterfaceByName("va")
	if err != nil {
		t.Fatal(err)
	}
	vb, err := net.InterfaceByName("vb")
	if err != nil {
		t.Fatal(err)
	}
	startUDPMember(t, "127.95.11.1:5300", "S1")
	p, _ := newPlane(t)
	tests := []struct {
		name     string
		vlans    *VLANFilter
		aOK, bOK bool
	}{
		{"every vlan", nil, true, true},
		{"enabled on va", &VLANFilter{Ifindex: []int{va.Index}, Device: "va"}, true, false},
		{"enabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Device: "vb"}, false, true},
		{"enabled on both", &VLANFilter{Ifindex: []int{va.Index, vb.Index}}, true, true},
		{"disabled on va", &VLANFilter{Ifindex: []int{va.Index}, Disabled: true}, false, true},
		{"disabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Disabled: true}, true, false},
		{"enabled on vb, the check alone", &VLANFilter{Ifindex: []int{vb.Index}}, false, true},
		{"every vlan again", nil, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := udpBasic("127.95.11.1:53", "127.95.11.1:5300")
			cfg.Virtuals["/Common/vs"].VLANs = tc.vlans
			mustApply(t, p, cfg)
			for _, c := range []struct {
				ns string
				ok bool
			}{{a, tc.aOK}, {b, tc.bOK}} {
				u := dialUDPIn(t, c.ns, "127.95.11.1:53")
				if c.ok {
					if got := u.mustAsk("q"); got != "S1:q" {
						t.Errorf("client in %s: got %q", c.ns, got)
					}
				} else if got := u.ask("q"); got != "" {
					t.Errorf("client in %s: got %q, want nothing", c.ns, got)
				}
			}
		})
	}
}
