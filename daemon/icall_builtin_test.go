package daemon

import (
	"net"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/daemon/tmshscript"
	"github.com/openltm/openltm/dataplane"
)

// A member's status change raises its member event, and the pool's when
// the pool's first member came up or its last one up went down.
func TestMemberStatusEvents(t *testing.T) {
	names := func(evs []*tmshscript.Event) []string {
		var out []string
		for _, ev := range evs {
			out = append(out, ev.Name)
		}
		return out
	}
	for _, tc := range []struct {
		ms   dataplane.MemberStatus
		want []string
	}{
		{dataplane.MemberStatus{Old: "checking", New: "up", PoolUp: true}, []string{evMemberUp, evPoolUp}},
		{dataplane.MemberStatus{Old: "checking", New: "up", PoolWasUp: true, PoolUp: true}, []string{evMemberUp}},
		{dataplane.MemberStatus{Old: "up", New: "down", PoolWasUp: true}, []string{evMemberDown, evPoolDown}},
		{dataplane.MemberStatus{Old: "up", New: "down", PoolWasUp: true, PoolUp: true}, []string{evMemberDown}},
		{dataplane.MemberStatus{Old: "checking", New: "down"}, []string{evMemberDown}},
		{dataplane.MemberStatus{Old: "up", New: "checking", PoolWasUp: true}, nil},
		{dataplane.MemberStatus{Old: "up", New: "unchecked", PoolWasUp: true}, nil},
		{dataplane.MemberStatus{Old: "down", New: "unchecked"}, nil},
	} {
		if got := names(memberStatusEvents(tc.ms)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%+v: events %v, want %v", tc.ms, got, tc.want)
		}
	}
	ev := memberStatusEvents(dataplane.MemberStatus{Pool: "/Common/p", Member: "/Common/10.0.0.1:80", Old: "up", New: "down"})[0]
	want := [][2]string{{"pool", "/Common/p"}, {"member", "/Common/10.0.0.1:80"}, {"address", "10.0.0.1"}, {"port", "80"}, {"status", "down"}, {"previous-status", "up"}}
	if !reflect.DeepEqual(ev.Context, want) {
		t.Errorf("context %v, want %v", ev.Context, want)
	}
}

func TestSplitMember(t *testing.T) {
	for _, tc := range []struct{ in, addr, port string }{
		{"/Common/10.0.0.1:80", "10.0.0.1", "80"},
		{"/Common/2001:db8::1.443", "2001:db8::1", "443"},
		{"/Part/web1:8080", "web1", "8080"},
		{"/Common/10.0.0.1%2:80", "10.0.0.1%2", "80"},
	} {
		if a, p := splitMember(tc.in); a != tc.addr || p != tc.port {
			t.Errorf("%s: %s %s, want %s %s", tc.in, a, p, tc.addr, tc.port)
		}
	}
}

// Handlers subscribed to the built-in events run when ltmd sees the
// change: a commit that creates, modifies or deletes objects, and a pool
// member whose monitor finds it down or up.
func TestICallBuiltinEvents(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	up, err := net.Listen("tcp", "127.207.5.11:0")
	if err != nil {
		t.Fatal(err)
	}
	defer up.Close()
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	upAddr := up.Addr().String()
	// A port nothing listens on: the monitor finds that member down.
	down, err := net.Listen("tcp", "127.207.5.12:0")
	if err != nil {
		t.Fatal(err)
	}
	downAddr := down.Addr().String()
	down.Close()
	mustRun(t, s,
		`create sys icall script note definition {
    tmsh::log "saw [EVENT::name] [EVENT::context]"
}`,
		`create sys icall handler triggered config script note subscriptions add { c { event-name SYS_CONFIG_CREATED filters add { kind { value "ltm pool" } } } m { event-name SYS_CONFIG_MODIFIED filters add { kind { value "ltm pool" } } } d { event-name SYS_CONFIG_DELETED filters add { name { value "/Common/bp*" match-algorithm glob } } } }`,
		`create sys icall handler triggered members script note subscriptions add { md { event-name LTM_POOL_MEMBER_DOWN } mu { event-name LTM_POOL_MEMBER_UP } pu { event-name LTM_POOL_UP } pd { event-name LTM_POOL_DOWN } }`,
		"create ltm monitor tcp bmon interval 1 timeout 3",
		"create ltm pool bp1 monitor bmon members add { "+upAddr+" "+downAddr+" }",
		"modify ltm pool bp1 description changed",
		"create ltm node 127.207.5.99 address 127.207.5.99",
		"delete ltm node 127.207.5.99",
	)
	logHas := func(what string) func() bool {
		return func() bool {
			out, _ := run(t, s, "show sys log ltm")
			return strings.Contains(out, what)
		}
	}
	eventually(t, 20*time.Second, "the pool's creation", logHas("saw SYS_CONFIG_CREATED kind {ltm pool} name /Common/bp1 object {ltm pool /Common/bp1}"))
	eventually(t, 20*time.Second, "the pool's change", logHas("saw SYS_CONFIG_MODIFIED kind {ltm pool} name /Common/bp1"))
	eventually(t, 20*time.Second, "the member found up", logHas("saw LTM_POOL_MEMBER_UP pool /Common/bp1 member /Common/"+upAddr+" address 127.207.5.11"))
	eventually(t, 20*time.Second, "the pool up", logHas("saw LTM_POOL_UP pool /Common/bp1"))
	eventually(t, 20*time.Second, "the member found down", logHas("saw LTM_POOL_MEMBER_DOWN pool /Common/bp1 member /Common/"+downAddr))
	out, _ := run(t, s, "show sys log ltm")
	for _, not := range []string{"SYS_CONFIG_CREATED kind {ltm monitor tcp}", "SYS_CONFIG_CREATED kind {ltm node}", "SYS_CONFIG_DELETED kind {ltm node}", "LTM_POOL_DOWN"} {
		if strings.Contains(out, not) {
			t.Errorf("a filter let %q through:\n%s", not, out)
		}
	}
	// The member that was up goes down: the pool has no member up.
	up.Close()
	eventually(t, 30*time.Second, "the pool down", logHas("saw LTM_POOL_DOWN pool /Common/bp1 member /Common/"+upAddr))
	mustRun(t, s, "delete ltm pool bp1")
	eventually(t, 20*time.Second, "the pool's deletion", logHas("saw SYS_CONFIG_DELETED kind {ltm pool} name /Common/bp1"))
	// Without a handler taking them, nothing is computed.
	mustRun(t, s, "delete sys icall handler triggered members", "delete sys icall handler triggered config")
	if e.scripts.members.on.Load() {
		t.Error("member events still on without a handler that takes them")
	}
}

// A node's monitor going down takes the members on it down with it: each
// member's event is raised, and the pool's once; the node back up brings
// them back, each to its own monitor's verdict.
func TestICallNodeEvents(t *testing.T) {
	t.Parallel()
	e, _ := openWithPlane(t, t.TempDir())
	s := e.NewSession("admin").(*Session)
	listen := func(addr string) net.Listener { return serveEach(t, addr, func(net.Conn) {}) }
	listen("127.241.1.10:30001")
	listen("127.241.1.10:30002")
	node := listen("127.241.1.10:30009")
	mustRun(t, s,
		`create sys icall script nnote definition {
    tmsh::log "saw [EVENT::name] [EVENT::context]"
}`,
		`create sys icall handler triggered nmembers script nnote subscriptions add { md { event-name LTM_POOL_MEMBER_DOWN } mu { event-name LTM_POOL_MEMBER_UP } pu { event-name LTM_POOL_UP } pd { event-name LTM_POOL_DOWN } }`,
		"create ltm monitor tcp nmon_member interval 1 timeout 3",
		"create ltm monitor tcp nmon_node destination *:30009 interval 1 timeout 3",
		"create ltm node 127.241.1.10 address 127.241.1.10 monitor nmon_node",
		"create ltm pool np monitor nmon_member members add { 127.241.1.10:30001 127.241.1.10:30002 }",
	)
	count := func(what string) int {
		out, _ := run(t, s, "show sys log ltm")
		return strings.Count(out, what)
	}
	atLeast := func(what string, n int) func() bool {
		return func() bool { return count(what) >= n }
	}
	const (
		memberUp   = "saw LTM_POOL_MEMBER_UP pool /Common/np"
		memberDown = "saw LTM_POOL_MEMBER_DOWN pool /Common/np"
		poolUp     = "saw LTM_POOL_UP pool /Common/np"
		poolDown   = "saw LTM_POOL_DOWN pool /Common/np"
	)
	eventually(t, 20*time.Second, "both members up", atLeast(memberUp, 2))
	eventually(t, 20*time.Second, "the pool up", atLeast(poolUp, 1))
	node.Close()
	eventually(t, 30*time.Second, "both members down with their node", atLeast(memberDown, 2))
	eventually(t, 20*time.Second, "the pool down", atLeast(poolDown, 1))
	listen("127.241.1.10:30009")
	eventually(t, 30*time.Second, "both members back up with their node", atLeast(memberUp, 4))
	eventually(t, 20*time.Second, "the pool back up", atLeast(poolUp, 2))
	if n := count(poolDown); n != 1 {
		t.Errorf("the pool went down %d times, want once", n)
	}
	if n := count(poolUp); n != 2 {
		t.Errorf("the pool came up %d times, want twice", n)
	}
	if n := count(memberDown); n != 2 {
		t.Errorf("%d member down events, want 2", n)
	}
}
