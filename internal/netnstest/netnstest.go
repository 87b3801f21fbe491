//go:build linux

// Package netnstest builds the Linux network namespaces tests run in:
// one alone (Alone), for what takes a whole namespace (the every-port
// steering, the daemon's wildcard virtuals), and the VLAN tests' one for
// the proxy with two veth interfaces, va and vb, each leading to a
// namespace of its own with a client. A test using it runs again inside
// the namespace, so the host's own addresses and routes are never
// touched, and it skips where namespaces cannot be made (no root, no
// `ip`, a container without the capability). It sits outside dataplane
// so that the daemon's tests can use it too.
package netnstest

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

// Sides is one such topology. The proxy is .1 and the client .2 of each
// subnet; the client behind vb reaches va's address (Subnets[0] + ".1")
// through vb, so a virtual on that address hears both clients, each on
// its own interface. The subnets are 127/8 ones, with route_localnet set
// in every namespace.
type Sides struct {
	// Test is the test's name, run again inside the proxy's namespace.
	Test string
	// Env carries the client namespaces' names to that run.
	Env string
	// Prefix starts the namespaces' names (the process ID ends them), so
	// that tests running at once do not share namespaces.
	Prefix string
	// Subnets are the first three octets of va's and vb's /24s.
	Subnets [2]string
	// Tools are the programs the test needs besides ip and sysctl.
	Tools []string
}

// Inside reports whether this run is the one inside the proxy's
// namespace, and the client namespaces' names (behind va, behind vb).
func (s Sides) Inside() (a, b string, ok bool) {
	ns := os.Getenv(s.Env)
	if ns == "" {
		return "", "", false
	}
	a, b, _ = strings.Cut(ns, ",")
	return a, b, true
}

// Ifaces are the proxy namespace's two interfaces, va and vb, for a run
// inside it (Inside): the VLAN lists the tests build name their indexes.
func Ifaces(t testing.TB) (va, vb *net.Interface) {
	t.Helper()
	va, err := net.InterfaceByName("va")
	if err != nil {
		t.Fatal(err)
	}
	vb, err = net.InterfaceByName("vb")
	if err != nil {
		t.Fatal(err)
	}
	return va, vb
}

// Run builds the namespaces, runs s.Test inside the proxy's namespace and
// fails t when that run fails; the namespaces are removed when t ends.
func (s Sides) Run(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root")
	}
	for _, tool := range append([]string{"ip", "sysctl"}, s.Tools...) {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed", tool)
		}
	}
	id := fmt.Sprint(os.Getpid())
	l, a, b := s.Prefix+"l"+id, s.Prefix+"a"+id, s.Prefix+"b"+id
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	// Root without the capability to make namespaces (a container) skips.
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
		ip("-n", l, "addr", "add", s.Subnets[i]+".1/24", "dev", side.here)
		ip("-n", side.ns, "addr", "add", s.Subnets[i]+".2/24", "dev", side.there)
		ip("-n", l, "link", "set", side.here, "up")
		ip("-n", side.ns, "link", "set", side.there, "up")
		if i == 1 {
			ip("-n", side.ns, "route", "add", s.Subnets[0]+".1/32", "dev", side.there)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", l, os.Args[0], "-test.run", "^"+s.Test+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), s.Env+"="+a+","+b)
	out, err := cmd.CombinedOutput()
	t.Logf("in namespace %s:\n%s", l, out)
	if err != nil {
		t.Fatalf("the test in the namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: "+s.Test) {
		t.Fatal("the test in the namespace did not pass")
	}
}

// In runs fn on a thread moved into network namespace ns (named by ip
// netns) for the while: the sockets fn makes stay in ns.
func In(t testing.TB, ns string, fn func()) {
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
	fn()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		// The thread stays locked, and ends with the goroutine.
		t.Fatalf("back to the test's namespace: %v", err)
	}
	runtime.UnlockOSThread()
}

// Alone runs the calling test again in a network namespace of its own
// (`unshare -n`, its loopback up), for what attaches to a whole
// namespace (the every-port steering's BPF program), which the host's
// must not see; env names the variable that marks that run. It reports
// true in that run, and false (after failing or skipping t as that run
// did) in the first.
func Alone(t *testing.T, env string) bool {
	t.Helper()
	if os.Getenv(env) == t.Name() {
		if out, err := exec.Command("ip", "link", "set", "lo", "up").CombinedOutput(); err != nil {
			t.Fatalf("ip link set lo up: %v %s", err, out)
		}
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: a network namespace and a BPF program need root")
	}
	for _, tool := range []string{"unshare", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed", tool)
		}
	}
	if err := exec.Command("unshare", "-n", "true").Run(); err != nil {
		t.Skipf("skipped: cannot make a network namespace: %v", err)
	}
	cmd := exec.Command("unshare", "-n", os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count=1", "-test.v", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), env+"="+t.Name())
	out, err := cmd.CombinedOutput()
	t.Logf("in a network namespace of its own:\n%s", out)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "--- SKIP") {
		t.Skip("skipped inside the namespace")
	}
	return false
}
