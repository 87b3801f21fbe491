package mblb

import (
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
	"github.com/openltm/openltm/dataplane/iiop/iioptest"
)

// Fragment write failure tests listen on 127.254.11.0/24, ports
// 25540-25579.

// startCloser is a member that closes each connection (no
// CloseConnection) once it has read a first message; it counts them.
func startCloser(t *testing.T, addr string) *atomic.Int32 {
	var n atomic.Int32
	serveEach(t, addr, func(c net.Conn) {
		iioptest.ReadMessage(c)
		c.Close()
		n.Add(1)
	})
	return &n
}

// TestIIOPFragmentAfterMemberGone: a member's connection ends (no
// CloseConnection) while a client's fragmented request to it is
// incomplete. A request still awaited is sent again whole to the other
// member with its last fragment, whether the connection's end is seen
// first (its reader) or its next Fragment's write fails first (a timeout
// set keeps the request pending past the reader's end), own and shared
// connections, GIOP 1.1 and 1.2. One cancelled or timed out has its
// further fragments dropped. The client is never reset and goes on.
func TestIIOPFragmentAfterMemberGone(t *testing.T) {
	for i, tc := range []struct {
		name       string
		minor      uint8
		oneConnect bool
		timeout    time.Duration
		cancel     bool
		resent     bool // else dropped
	}{
		{"own 1.2, connection gone", 2, false, 0, false, true},
		{"own 1.1, connection gone", 1, false, 0, false, true},
		{"own 1.2, write fails", 2, false, 20 * time.Second, false, true},
		{"own 1.1, write fails", 1, false, 20 * time.Second, false, true},
		{"shared 1.2, connection gone", 2, true, 0, false, true},
		{"shared 1.2, write fails", 2, true, 20 * time.Second, false, true},
		{"shared 1.1, write fails", 1, true, 20 * time.Second, false, true},
		{"own 1.2, cancelled", 2, false, 0, true, false},
		{"own 1.1, cancelled", 1, false, 0, true, false},
		{"own 1.2, timed out", 2, false, 100 * time.Millisecond, false, false},
		{"shared 1.2, cancelled", 2, true, 0, true, false},
		{"shared 1.1, timed out", 1, true, 100 * time.Millisecond, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closer := fmt.Sprintf("127.254.11.%d:%d", 1+2*i, 25540+i)
			closed := startCloser(t, closer)
			m2, err := iioptest.Listen(fmt.Sprintf("127.254.11.%d:%d", 2+2*i, 25540+i), "m2")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(m2.Close)
			pool := oneMember(closer, "m1")
			pool.members = append(pool.members, Member{ID: 2, Addr: netip.MustParseAddrPort(m2.Addr()), Pool: "/Common/iiop_pool", Name: "m2"})
			logs := &seenLog{}
			cfg := iiopConfig(pool, IIOPOptions{Timeout: tc.timeout})
			cfg.Events.Log = logs.add
			if tc.oneConnect {
				cfg.OneConnect = &OneConnect{}
			}
			vs := startVS(t, fmt.Sprintf("127.254.11.%d:%d", 100+i, 25560+i), cfg)
			c := dialIIOP(t, vs)
			whole := iiop.AppendRequest(nil, tc.minor, false, 1, true, []byte("frag"), "echo", make([]byte, 96))
			first, rest := iiop.Split(whole, 40)
			if _, err := c.Write(first); err != nil { // to m1, which closes
				t.Fatal(err)
			}
			waitFor(t, "m1's connection ended", func() bool {
				return closed.Load() == 1 && vs.e.Stats().ServerConns == 0
			})
			pool.setDisabled(1, true) // (what follows goes to m2)
			switch {
			case tc.cancel:
				if _, err := c.Write(iiop.AppendCancelRequest(nil, tc.minor, false, 1)); err != nil {
					t.Fatal(err)
				}
			case !tc.resent:
				waitFor(t, "the request timed out", func() bool { return vs.e.Stats().IIOPTimeouts == 1 })
			}
			// The rest in three Fragments, then another request.
			var more []byte
			for len(rest) > 0 {
				part := rest[:min(32, len(rest))]
				rest = rest[len(part):]
				more = iiop.AppendFragment(more, tc.minor, false, 1, len(rest) > 0, part)
			}
			more = iiop.AppendRequest(more, tc.minor, false, 2, true, []byte("next"), "echo", nil)
			want := "[2=m2]"
			if tc.resent {
				want = "[1=m2 2=m2]"
			}
			if _, err := c.Write(more); err != nil {
				t.Fatal(err)
			}
			if got := readReplies(t, c, strings.Count(want, "=")); fmt.Sprint(got) != want {
				t.Fatalf("got %v, want %v", got, want)
			}
			st := vs.e.Stats()
			if st.Resets != 0 {
				t.Fatalf("%d resets", st.Resets)
			}
			if tc.resent && (st.Retries != 1 || m2.Keys()["frag"] != 1) {
				t.Fatalf("retries %d, m2 served the request %d times; want 1 and 1", st.Retries, m2.Keys()["frag"])
			}
			if !tc.resent && m2.Keys()["frag"] != 0 {
				t.Fatal("m2 served a request given up")
			}
		})
	}
}
