//go:build linux

package dataplane

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/openltm/openltm/dataplane/flows"
)

// TestAnyPortTFTPIPv6Unassigned: a UDP virtual with a tftp profile that
// is an IPv6 network on a port whose addresses no interface holds
// (fd00:249:100:1::/64, only a route of type local), with automap and
// no self IP: each client reads its file, and the transfer's leg to the
// member leaves from the address the client reached (the server side
// of its flow), not from an address the kernel chose. Without
// IPV6_FREEBIND on the leg's socket its bind fails and the kernel's
// source (the member's own address) is taken.
func TestAnyPortTFTPIPv6Unassigned(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, args := range [][]string{
		{"-6", "route", "add", "local", "fd00:249:100:1::/64", "dev", "lo"},
		{"addr", "add", "fd00:249:100:2::5/128", "dev", "lo", "nodad"},
		{"addr", "add", "fd00:249:100:3::2/128", "dev", "lo", "nodad"},
	} {
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Skipf("skipped: ip %v: %v %s", args, err, out)
		}
	}
	const member = "[fd00:249:100:3::2]:30141"
	dir := startTFTPMember(t, member)
	file := tftpFile(1300)
	if err := os.WriteFile(filepath.Join(dir, "f.bin"), file, 0o644); err != nil {
		t.Fatal(err)
	}
	p, _ := loggedPlane(t)
	cfg := udpBasic("[fd00:249:100:1::]:30140", member)
	v := cfg.Virtuals["/Common/vs"]
	v.Network = netip.MustParsePrefix("fd00:249:100:1::/64")
	v.SNAT = SNAT{Type: SNATAutomap}
	v.TFTP = &TFTPProfile{}
	if err := Check(cfg); err != nil {
		t.Fatal(err)
	}
	mustApply(t, p, cfg)
	for _, vs := range []string{"[fd00:249:100:1::7]:30140", "[fd00:249:100:1::2:9]:30140"} {
		got, perr := tftpGet(t, vs, "fd00:249:100:2::5", "f.bin", 0)
		if perr != nil || !bytes.Equal(got, file) {
			t.Errorf("%s: %d bytes, error %v; want the file's %d", vs, len(got), perr, len(file))
		}
		reached := netip.MustParseAddrPort(vs).Addr()
		var srcs []netip.AddrPort
		p.table.Walk(flows.Filter{Virtual: "/Common/vs"}, func(r *flows.Record) bool {
			if r.CSServer.Addr() == reached && r.SSClient.IsValid() {
				srcs = append(srcs, r.SSClient)
			}
			return true
		})
		if len(srcs) == 0 {
			t.Errorf("%s: no flow with a server side", vs)
		}
		for _, s := range srcs {
			if s.Addr() != reached {
				t.Errorf("%s: the leg left from %s, want automap's source, the address the client reached", vs, s)
			}
		}
	}
}
