package state

import (
	"net/netip"
	"testing"
)

func TestPoolsNamed(t *testing.T) {
	ps := Pools{"/Common/web": {Name: "/Common/web"}, "/Tenant/web": {Name: "/Tenant/web"}, "/Common/only": {Name: "/Common/only"}}
	for _, c := range []struct{ virtual, name, want string }{
		{"/Tenant/vs", "web", "/Tenant/web"},
		{"/Common/vs", "web", "/Common/web"},
		{"/Tenant/vs", "only", "/Common/only"},
		{"/Tenant/vs", "/Common/web", "/Common/web"},
		{"/Tenant/vs", "/Tenant/only", ""},
		{"/Tenant/vs", "missing", ""},
	} {
		got := ""
		if p := ps.Named(c.virtual, c.name); p != nil {
			got = p.Name
		}
		if got != c.want {
			t.Errorf("%s in %s: %q, want %q", c.name, c.virtual, got, c.want)
		}
	}
}

func TestPoolsStatus(t *testing.T) {
	p, ms := pool(fixture{mon: MonUp}, fixture{session: "user-disabled"}, fixture{nodeMon: MonDown})
	ps := Pools{p.Name: p}
	for i, want := range []string{"up", "session_disabled", "down"} {
		if got, err := ps.MemberStatus("/Common/vs", "p", ms[i].Cfg.Load().Addr); got != want || err != nil {
			t.Errorf("member %d: %q %v, want %q", i, got, err, want)
		}
	}
	if _, err := ps.MemberStatus("/Common/vs", "p", netip.MustParseAddrPort("10.9.9.9:80")); err == nil {
		t.Error("a member that does not exist has a status")
	}
	if got, err := ps.NodeStatus(ms[0].Cfg.Load().Addr.Addr()); got != "up" || err != nil {
		t.Errorf("node: %q %v", got, err)
	}
	active, err := ps.ActiveMembers("/Common/vs", "/Common/p")
	if err != nil || len(active) != 1 || active[0] != ms[0].Cfg.Load().Addr {
		t.Errorf("active members %v %v", active, err)
	}
	if name, a, err := LBSelect(p, nil); name != p.Name || a != ms[0].Cfg.Load().Addr || err != nil {
		t.Errorf("LB::select %s %s %v", name, a, err)
	}
}
