//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// vlansNetnsEnv carries the client namespaces' names to the test binary
// run again inside the proxy's namespace.
const vlansNetnsEnv = "OPENLTM_VLANS_NETNS"

// TestVLANsNetns runs a virtual in a network namespace of its own with two
// veth interfaces, va and vb, each leading to a namespace with a client
// (curl): the virtual enabled on va's VLAN answers the client behind va
// and refuses the one behind vb, and so on for each VLAN setting. The
// virtual's address is va's, which the client behind vb reaches through
// vb. The namespaces use 127.87.x addresses with route_localnet, so the
// host's own addresses and routes are not touched.
func TestVLANsNetns(t *testing.T) {
	if ns := os.Getenv(vlansNetnsEnv); ns != "" {
		a, b, _ := strings.Cut(ns, ",")
		vlansInNetns(t, a, b)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: creating network namespaces needs root")
	}
	for _, tool := range []string{"ip", "curl", "sysctl"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("skipped: %s is not installed", tool)
		}
	}
	id := fmt.Sprint(os.Getpid())
	l, a, b := "oltmvl"+id, "oltmva"+id, "oltmvb"+id
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
		ip("-n", l, "addr", "add", fmt.Sprintf("127.87.%d.1/24", i+1), "dev", side.here)
		ip("-n", side.ns, "addr", "add", fmt.Sprintf("127.87.%d.2/24", i+1), "dev", side.there)
		ip("-n", l, "link", "set", side.here, "up")
		ip("-n", side.ns, "link", "set", side.there, "up")
		if i == 1 {
			ip("-n", side.ns, "route", "add", "127.87.1.1/32", "dev", side.there)
		}
	}
	cmd := exec.Command("ip", "netns", "exec", l, os.Args[0], "-test.run", "^TestVLANsNetns$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), vlansNetnsEnv+"="+a+","+b)
	out, err := cmd.CombinedOutput()
	t.Logf("in namespace %s:\n%s", l, out)
	if err != nil {
		t.Fatalf("the test in the namespace failed: %v", err)
	}
	if !strings.Contains(string(out), "--- PASS: TestVLANsNetns") {
		t.Fatal("the test in the namespace did not pass")
	}
}

// vlansInNetns is TestVLANsNetns inside the proxy's namespace.
func vlansInNetns(t *testing.T, a, b string) {
	va, err := net.InterfaceByName("va")
	if err != nil {
		t.Fatal(err)
	}
	vb, err := net.InterfaceByName("vb")
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.87.1.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "member answers")
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p, _ := newPlane(t)
	// curl from a client namespace: the body, or "" when refused.
	get := func(ns string) string {
		out, _ := exec.Command("ip", "netns", "exec", ns, "curl", "-s", "-m", "20", "http://127.87.1.1:80/").Output()
		return string(out)
	}
	tests := []struct {
		name       string
		vlans      *VLANFilter
		aOK, bOK   bool
		boundToDev string
	}{
		{"every vlan", nil, true, true, ""},
		{"enabled on va", &VLANFilter{Ifindex: []int{va.Index}, Device: "va"}, true, false, "va"},
		{"enabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Device: "vb"}, false, true, "vb"},
		{"enabled on both", &VLANFilter{Ifindex: []int{va.Index, vb.Index}}, true, true, ""},
		{"disabled on va", &VLANFilter{Ifindex: []int{va.Index}, Disabled: true}, false, true, ""},
		{"disabled on vb", &VLANFilter{Ifindex: []int{vb.Index}, Disabled: true}, true, false, ""},
		{"enabled on vb, the check alone", &VLANFilter{Ifindex: []int{vb.Index}}, false, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := basic("127.87.1.1:80", ln.Addr().String())
			cfg.Virtuals["/Common/vs"].VLANs = tc.vlans
			// The member's answers must come back to the proxy, not go to
			// the client's namespace.
			cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATAutomap}
			mustApply(t, p, cfg)
			for _, c := range []struct {
				ns string
				ok bool
			}{{a, tc.aOK}, {b, tc.bOK}} {
				got := get(c.ns)
				if want := map[bool]string{true: "member answers", false: ""}[c.ok]; got != want {
					t.Errorf("client in %s: got %q, want %q", c.ns, got, want)
				}
			}
		})
	}
}
