//go:build linux

package dataplane

import (
	"net"
	"net/http"
	"net/netip"
	"os/exec"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
	"github.com/openltm/openltm/internal/netnstest"
)

// snatVLANsNetnsEnv carries the client namespaces' names to the test
// binary run again inside the proxy's namespace.
const snatVLANsNetnsEnv = "OPENLTM_SNAT_VLANS_NETNS"

// TestSNATVLANsNetns runs a virtual without a translation of its own in
// a network namespace with two veth interfaces, va and vb, each leading
// to a client's namespace (curl), and the ltm snat and ltm nat objects
// limited to VLANs: a SNAT enabled on va translates the client behind
// va and passes the one behind vb to the next most specific SNAT;
// disabled on va, the other way round; a NAT enabled on vb translates
// its originating address arriving there and not when enabled on va
// only. Each case runs on a standard virtual and on an HTTP one (with
// and without OneConnect), whose server connections take the client's
// arrival too. The member answers with the source it saw. Skipped
// without root, ip or curl.
func TestSNATVLANsNetns(t *testing.T) {
	sides := netnstest.Sides{Test: "TestSNATVLANsNetns", Env: snatVLANsNetnsEnv, Prefix: "oltms",
		Subnets: [2]string{"127.88.1", "127.88.2"}, Tools: []string{"curl"}}
	if a, b, ok := sides.Inside(); ok {
		snatVLANsInNetns(t, a, b)
		return
	}
	sides.Run(t)
}

// snatVLANsInNetns is TestSNATVLANsNetns inside the proxy's namespace.
func snatVLANsInNetns(t *testing.T, a, b string) {
	va, vb := netnstest.Ifaces(t)
	ln, err := net.Listen("tcp", "127.88.1.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host, _, _ := net.SplitHostPort(r.RemoteAddr)
		w.Write([]byte(host))
	})}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p, _ := newPlane(t)
	get := func(ns string) string {
		out, _ := exec.Command("ip", "netns", "exec", ns, "curl", "-s", "-m", "20", "http://127.88.1.1:80/").Output()
		return strings.TrimSpace(string(out))
	}
	pfx := netip.MustParsePrefix
	addr := netip.MustParseAddr
	wide := SNATObject{Name: "/Common/wide", Origins: []netip.Prefix{pfx("127.88.0.0/16")}, Addrs: []netip.Addr{addr("127.88.1.1")}}
	narrow := func(vl *VLANFilter) SNATObject {
		return SNATObject{Name: "/Common/narrow", Origins: []netip.Prefix{pfx("127.88.0.0/17")}, Addrs: []netip.Addr{addr("127.88.2.1")}, VLANs: vl}
	}
	nat := func(vl *VLANFilter) []NAT {
		return []NAT{{Name: "/Common/n_b", Orig: addr("127.88.2.2"), Xlat: addr("127.88.2.1"), OutboundOnly: true, VLANs: vl}}
	}
	for _, tc := range []struct {
		name       string
		snats      []SNATObject
		nats       []NAT
		wantA, wnB string
	}{
		{"snat on every vlan", []SNATObject{wide, narrow(nil)}, nil, "127.88.2.1", "127.88.2.1"},
		{"snat enabled on va", []SNATObject{wide, narrow(&VLANFilter{Ifindex: []int{va.Index}})}, nil, "127.88.2.1", "127.88.1.1"},
		{"snat enabled on vb", []SNATObject{wide, narrow(&VLANFilter{Ifindex: []int{vb.Index}})}, nil, "127.88.1.1", "127.88.2.1"},
		{"snat disabled on va", []SNATObject{wide, narrow(&VLANFilter{Ifindex: []int{va.Index}, Disabled: true})}, nil, "127.88.1.1", "127.88.2.1"},
		{"nat enabled on vb", []SNATObject{wide}, nat(&VLANFilter{Ifindex: []int{vb.Index}}), "127.88.1.1", "127.88.2.1"},
		{"nat enabled on va", []SNATObject{wide}, nat(&VLANFilter{Ifindex: []int{va.Index}}), "127.88.1.1", "127.88.1.1"},
		{"nat disabled on va", []SNATObject{wide}, nat(&VLANFilter{Ifindex: []int{va.Index}, Disabled: true}), "127.88.1.1", "127.88.2.1"},
	} {
		for _, kind := range []struct {
			name string
			mblb *MBLB
		}{
			{"standard", nil},
			{"http", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}},
			// OneConnect with source-mask 255.255.255.255 lends a pooled
			// connection only to clients of its source, which the
			// client's arrival gives.
			{"http oneconnect", &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}, OneConnect: &OneConnect{MaxSize: 4, SourceMask: netip.MustParseAddr("255.255.255.255")}}},
		} {
			t.Run(kind.name+"/"+tc.name, func(t *testing.T) {
				cfg := basic("127.88.1.1:80", ln.Addr().String())
				cfg.Virtuals["/Common/vs"].SNAT = SNAT{Type: SNATNone}
				cfg.Virtuals["/Common/vs"].MBLB = kind.mblb
				cfg.SNATs, cfg.NATs = tc.snats, tc.nats
				mustApply(t, p, cfg)
				for i := 0; i < 2; i++ { // twice: OneConnect's pooled connection must not serve the other side
					if got := get(a); got != tc.wantA {
						t.Errorf("client behind va: the member saw %q, want %q", got, tc.wantA)
					}
					if got := get(b); got != tc.wnB {
						t.Errorf("client behind vb: the member saw %q, want %q", got, tc.wnB)
					}
				}
			})
		}
	}
}
