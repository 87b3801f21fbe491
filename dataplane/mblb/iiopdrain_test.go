package mblb

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/iiop"
)

// IIOP drain tests listen on 127.254.5.0/24, ports 25460-25479.

// TestIIOPDrainMember: a member drained by a commit (DrainMembers) keeps
// its IIOP connections, a client's own or shared, until the replies owed
// on them have come, then closes them; past the bound (shutdown-timeout
// here) one still owed is closed and its request answered with
// COMM_FAILURE, COMPLETED_MAYBE; with no bound at all they close at once
// (the request answered so too). New requests go to the other member
// meanwhile, and the client is never reset.
func TestIIOPDrainMember(t *testing.T) {
	for i, tc := range []struct {
		name       string
		oneConnect bool
		shutdown   time.Duration
		op         string
		reply      bool   // the request on the drained member answered
		log        string // a log line wanted
	}{
		{"own, reply awaited", false, time.Minute, "delay:300", true, ""},
		{"shared, reply awaited", true, time.Minute, "delay:300", true, ""},
		{"own, bound passed", false, 100 * time.Millisecond, "noreply", false, "still unanswered after 100ms: connection closed"},
		{"shared, bound passed", true, 100 * time.Millisecond, "noreply", false, "still unanswered after 100ms: connection closed"},
		{"own, no bound: at once", false, 0, "delay:300", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members, pool := startIIOPMembers(t, fmt.Sprintf("127.254.5.%d:%d", 1+2*i, 25460+2*i), fmt.Sprintf("127.254.5.%d:%d", 2+2*i, 25461+2*i))
			logs := &seenLog{}
			cfg := iiopConfig(pool, IIOPOptions{})
			cfg.Events.Log = logs.add
			cfg.ShutdownTimeout = tc.shutdown
			if tc.oneConnect {
				cfg.OneConnect = &OneConnect{}
			}
			vs := startVS(t, fmt.Sprintf("127.254.5.%d:%d", 100+i, 25470+i), cfg)
			c := dialIIOP(t, vs)
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 1, true, []byte("owed"), tc.op, nil)); err != nil { // m1
				t.Fatal(err)
			}
			waitFor(t, "the request at m1", func() bool { return members[0].Keys()["owed"] == 1 })
			pool.setDisabled(1, true)
			if n := vs.e.DrainMembers(func(m Member) bool { return m.ID == 1 }); n != 1 {
				t.Fatalf("%d connections drained, want 1", n)
			}
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 2, true, []byte("new"), "echo", nil)); err != nil {
				t.Fatal(err)
			}
			want := "[1=COMM_FAILURE/MAYBE 2=m2]"
			if tc.reply {
				want = "[1=m1 2=m2]"
			}
			if got := readReplies(t, c, strings.Count(want, "=")); fmt.Sprint(got) != want {
				t.Fatalf("got %v, want %v", got, want)
			}
			// The drained connection closes (its member's only): the
			// one to m2 stays.
			waitFor(t, "the drained connection closed", func() bool { return vs.e.Stats().ServerConns == 1 })
			if tc.log != "" {
				found := false
				for _, l := range logs.take() {
					found = found || strings.Contains(l, tc.log)
				}
				if !found {
					t.Fatalf("no log line %q", tc.log)
				}
			}
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 3, true, []byte("after"), "echo", nil)); err != nil {
				t.Fatal(err)
			}
			if got := readReplies(t, c, 1); fmt.Sprint(got) != "[3=m2]" {
				t.Fatalf("after the drain: got %v", got)
			}
			lost := uint64(1)
			if tc.reply {
				lost = 0
			}
			if st := vs.e.Stats(); st.Resets != 0 || st.Drained != 1 || st.IIOPLost != lost {
				t.Fatalf("resets %d drained %d lost %d, want 0, 1 and %d", st.Resets, st.Drained, st.IIOPLost, lost)
			}
		})
	}
}

// IIOP drain-after-cancel tests listen on 127.254.9.0/24, ports
// 25480-25499.

// TestIIOPDrainForgotten: a drained member's connection whose only owed
// request is cancelled, or forgotten on its timeout, closes then rather
// than waiting out its bound (a minute here: waitFor gives up first),
// own and shared; the client goes on, never reset.
func TestIIOPDrainForgotten(t *testing.T) {
	for i, tc := range []struct {
		name       string
		oneConnect bool
		timeout    time.Duration // 0: the client cancels
	}{
		{"own, cancelled", false, 0},
		{"shared, cancelled", true, 0},
		{"own, timed out", false, 100 * time.Millisecond},
		{"shared, timed out", true, 100 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			members, pool := startIIOPMembers(t, fmt.Sprintf("127.254.9.%d:%d", 1+2*i, 25480+2*i), fmt.Sprintf("127.254.9.%d:%d", 2+2*i, 25481+2*i))
			cfg := iiopConfig(pool, IIOPOptions{Timeout: tc.timeout})
			cfg.ShutdownTimeout = time.Minute
			if tc.oneConnect {
				cfg.OneConnect = &OneConnect{}
			}
			vs := startVS(t, fmt.Sprintf("127.254.9.%d:%d", 100+i, 25490+i), cfg)
			c := dialIIOP(t, vs)
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 1, true, []byte("owed"), "noreply", nil)); err != nil { // m1
				t.Fatal(err)
			}
			waitFor(t, "the request at m1", func() bool { return members[0].Keys()["owed"] == 1 })
			pool.setDisabled(1, true)
			if n := vs.e.DrainMembers(func(m Member) bool { return m.ID == 1 }); n != 1 {
				t.Fatalf("%d connections drained, want 1", n)
			}
			if tc.timeout == 0 {
				if _, err := c.Write(iiop.AppendCancelRequest(nil, 2, false, 1)); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "the drained connection closed", func() bool { return vs.e.Stats().ServerConns == 0 })
			if _, err := c.Write(iiop.AppendRequest(nil, 2, false, 2, true, []byte("after"), "echo", nil)); err != nil {
				t.Fatal(err)
			}
			if got := readReplies(t, c, 1); fmt.Sprint(got) != "[2=m2]" {
				t.Fatalf("after the drain: got %v", got)
			}
			if st := vs.e.Stats(); st.Resets != 0 || st.Drained != 1 {
				t.Fatalf("resets %d drained %d, want 0 and 1", st.Resets, st.Drained)
			}
		})
	}
}
