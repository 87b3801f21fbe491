package state

import (
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/internal/config"
)

// Admit obeys the virtual address: disabled refuses, its
// connection-limit counts the virtuals on it together, and a refusal
// leaves the virtual's counts as they were.
func TestAdmitVirtualAddress(t *testing.T) {
	client, local := netip.MustParseAddrPort("127.76.9.2:40000"), netip.MustParseAddrPort("127.76.9.1:80")
	snapOf := func(a *config.VirtualAddress, r *VAddr) *VirtualSnap {
		return &VirtualSnap{Cfg: &config.Virtual{Enabled: true, Address: a}, Addr: r}
	}
	for _, tc := range []struct {
		name  string
		addr  *config.VirtualAddress
		admit []bool // one virtual, then the other, alternately
	}{
		{"none", nil, []bool{true, true, true, true}},
		{"disabled", &config.VirtualAddress{Name: "a"}, []bool{false, false}},
		{"limit 3 over two virtuals", &config.VirtualAddress{Name: "a", Enabled: true, ConnectionLimit: 3}, []bool{true, true, true, false, false}},
		{"disabled with a limit", &config.VirtualAddress{Name: "a", ConnectionLimit: 3}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r *VAddr
			if tc.addr.Acts() {
				r = &VAddr{Name: tc.addr.Name}
			}
			vs := [2]*Virtual{{Name: "v1"}, {Name: "v2"}}
			snap := snapOf(tc.addr, r)
			refused := uint64(0)
			for i, want := range tc.admit {
				v := vs[i%2]
				tot := v.Stats.Tot.Load()
				if got := v.Admit(snap, client, local); got != want {
					t.Fatalf("connection %d: admitted %v, want %v", i, got, want)
				}
				if !want {
					refused++
					if v.Stats.Tot.Load() != tot {
						t.Fatalf("connection %d: the refused connection was counted on the virtual", i)
					}
				}
			}
			if r == nil {
				return
			}
			if want := vs[0].Stats.Cur.Load() + vs[1].Stats.Cur.Load(); r.Stats.Cur.Load() != want {
				t.Fatalf("address counts %d, its virtuals %d", r.Stats.Cur.Load(), want)
			}
			if tc.addr.ConnectionLimit > 0 && tc.addr.Enabled && r.LimitReset.Load() != refused {
				t.Fatalf("limit resets %d, want %d", r.LimitReset.Load(), refused)
			}
			if tc.addr.Enabled && tc.addr.ConnectionLimit > 0 {
				if !snap.AtAddressLimit() {
					t.Fatal("not at the address's limit")
				}
				vs[0].Leave(r)
				if snap.AtAddressLimit() || r.Stats.Cur.Load() != 2 || vs[0].Stats.Cur.Load() != 1 {
					t.Fatalf("after one left: address %d, v1 %d", r.Stats.Cur.Load(), vs[0].Stats.Cur.Load())
				}
			}
			if snap.AddressDisabled() != !tc.addr.Enabled {
				t.Fatal("AddressDisabled disagrees with the configuration")
			}
		})
	}
}

// An address that does not act costs a connection no allocation.
func TestAdmitVirtualAddressAllocs(t *testing.T) {
	client, local := netip.MustParseAddrPort("127.76.9.2:40000"), netip.MustParseAddrPort("127.76.9.1:80")
	v := &Virtual{Name: "v"}
	snap := &VirtualSnap{Cfg: &config.Virtual{Enabled: true}}
	if n := testing.AllocsPerRun(100, func() {
		if v.Admit(snap, client, local) {
			v.Leave(snap.Addr)
		}
	}); n != 0 {
		t.Fatalf("%v allocations per connection", n)
	}
}
