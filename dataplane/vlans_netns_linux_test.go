//go:build linux

package dataplane

import (
	"fmt"
	"net"
	"net/http"
	"os/exec"
	"testing"

	"github.com/openltm/openltm/internal/netnstest"
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
	sides := netnstest.Sides{Test: "TestVLANsNetns", Env: vlansNetnsEnv, Prefix: "oltmv",
		Subnets: [2]string{"127.87.1", "127.87.2"}, Tools: []string{"curl"}}
	if a, b, ok := sides.Inside(); ok {
		vlansInNetns(t, a, b)
		return
	}
	sides.Run(t)
}

// vlansInNetns is TestVLANsNetns inside the proxy's namespace.
func vlansInNetns(t *testing.T, a, b string) {
	va, vb := netnstest.Ifaces(t)
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
