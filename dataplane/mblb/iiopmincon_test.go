package mblb

import (
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// These tests listen on 127.246.201.0/24, ports 25420-25439.

// TestIIOPOneConnectMinConn: min-conn beside iiop and one-connect opens
// min-conn shared connections to each member before any client; a
// client's requests go on them (no connection opened for it), each
// reply to its client; two clients share them; a connection the member
// closes is replaced. Before, min-conn was not run beside iiop.
func TestIIOPOneConnectMinConn(t *testing.T) {
	var members []*iioptest.Server
	pool := &testPool{disabled: map[MemberID]bool{}, picks: map[MemberID]int{}}
	for i, name := range []string{"m1", "m2"} {
		m, err := iioptest.Listen(fmt.Sprintf("127.246.201.%d:%d", 1+i, 25421+i), name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(m.Close)
		members = append(members, m)
		pool.members = append(pool.members, Member{ID: MemberID(i + 1), Addr: netip.MustParseAddrPort(m.Addr()), Pool: "/Common/iiop_pool", Name: name})
	}
	cfg := iiopConfig(pool, IIOPOptions{})
	cfg.OneConnect = &OneConnect{MinConn: 2, Members: pool.enabled}
	vs := startVS(t, "127.246.201.10:25430", cfg)
	waitFor(t, "two connections to each member opened ahead", func() bool { return vs.e.Stats().SpareConnsOpened >= 4 })
	time.Sleep(100 * time.Millisecond) // (none more opened)
	if st := vs.e.Stats(); st.SpareConnsOpened != 4 || st.ServerConnsOpened != 4 {
		t.Fatalf("opened ahead %d, opened %d: want 4 and 4", st.SpareConnsOpened, st.ServerConnsOpened)
	}
	// Two clients, one request at a time each: every request finds an
	// idle connection opened ahead (a request finding none busy-free
	// would open one more, as one-connect does).
	c1, c2 := dialIIOP(t, vs), dialIIOP(t, vs)
	for i := range 8 {
		for ci, c := range []net.Conn{c1, c2} {
			id := uint32(i + 1)
			got := iiopExchange(t, c, iiop.AppendRequest(nil, 2, false, id, true, []byte("k"), fmt.Sprintf("say:c%d", ci), nil), 1)
			if got[0] != fmt.Sprintf("%d=m1/c%d", id, ci) && got[0] != fmt.Sprintf("%d=m2/c%d", id, ci) {
				t.Fatalf("client %d request %d: got %v", ci, id, got)
			}
		}
	}
	if st := vs.e.Stats(); st.ServerConnsOpened != 4 || st.Resets != 0 {
		t.Fatalf("%d connections opened (want the 4 opened ahead), %d resets", st.ServerConnsOpened, st.Resets)
	}
	if members[0].Keys()["k"] == 0 || members[1].Keys()["k"] == 0 {
		t.Fatalf("requests to m1 %d, m2 %d: want both used", members[0].Keys()["k"], members[1].Keys()["k"])
	}
	// A member closing its connections: they are opened again ahead.
	members[0].Close()
	m1, err := iioptest.Listen(members[0].Addr(), "m1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(m1.Close)
	waitFor(t, "m1's connections opened again", func() bool { return vs.e.Stats().SpareConnsOpened >= 6 })
}
