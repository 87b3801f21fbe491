//go:build linux

package sockopt

import (
	"net"
	"testing"

	"golang.org/x/sys/unix"
)

// socket is a fresh TCP socket, unconnected, as the member dials make it
// before their connect.
func socket(t *testing.T) int {
	t.Helper()
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(fd) })
	return fd
}

// TestApplyMoreReadsBack sets the keep-alive, MSS, SYN retry, FIN-WAIT-2,
// TTL and DF settings on a real socket and reads each back as the kernel
// reports it.
func TestApplyMoreReadsBack(t *testing.T) {
	cases := []struct {
		name string
		side *Side
		want func(r Reading) bool
	}{
		{"keep-alive", &Side{KeepAlive: 75}, func(r Reading) bool { return r.KeepAlive && r.KeepIdle == 75 && r.KeepIntvl == 75 }},
		{"keep-alive off", &Side{KeepAliveOff: true}, func(r Reading) bool { return !r.KeepAlive }},
		{"mss", &Side{MaxSeg: 1200}, func(r Reading) bool { return r.MaxSeg == 1200 }},
		{"syn retries", &Side{SynRetries: 2}, func(r Reading) bool { return r.SynRetries == 2 }},
		{"fin-wait-2", &Side{Linger2: 30}, func(r Reading) bool { return r.Linger2 == 30 }},
		{"fin-wait-2 capped", &Side{Linger2: 300}, func(r Reading) bool { return r.Linger2 == 120 }},
		{"ttl", &Side{TTL: 17, TTL6: 33}, func(r Reading) bool { return r.TTL == 17 }},
		{"df set", &Side{DF: DFSet}, func(r Reading) bool { return r.PMTUDisc == unix.IP_PMTUDISC_DO }},
		{"df clear", &Side{DF: DFClear}, func(r Reading) bool { return r.PMTUDisc == unix.IP_PMTUDISC_DONT }},
		{"untouched", &Side{}, func(r Reading) bool { return !r.KeepAlive && r.SynRetries > 0 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fd := socket(t)
			tc.side.Apply(fd)
			r, err := Read(fd)
			if err != nil {
				t.Fatal(err)
			}
			if !tc.want(r) {
				t.Errorf("read back %+v", r)
			}
		})
	}
}

// TestApplyListenerReadsBack sets and takes back a listener's deferred
// accept, fast open queue and MSS.
func TestApplyListenerReadsBack(t *testing.T) {
	ln, err := net.Listen("tcp", "127.3.60.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		l    Listener
		want func(r Reading) bool
	}{
		{"set", Listener{DeferAccept: 5, FastOpen: 256, MaxSeg: 1000}, func(r Reading) bool {
			// Linux rounds the deferral up to its next SYN-ACK retransmission.
			return r.DeferAccept >= 5 && r.FastOpen == 256 && r.MaxSeg == 1000
		}},
		{"taken back", Listener{}, func(r Reading) bool { return r.DeferAccept == 0 && r.FastOpen == 0 }},
	} {
		var r Reading
		var rerr error
		rc.Control(func(fd uintptr) {
			tc.l.ApplyListener(int(fd))
			r, rerr = Read(int(fd))
		})
		if rerr != nil {
			t.Fatal(rerr)
		}
		if !tc.want(r) {
			t.Errorf("%s: read back %+v", tc.name, r)
		}
	}
}

// TestApplyMoreAllocatesNothing: the integer settings cost no allocation
// per connection either.
func TestApplyMoreAllocatesNothing(t *testing.T) {
	fd := socket(t)
	set := &Side{KeepAlive: 60, MaxSeg: 1400, SynRetries: 3, Linger2: 30, TTL: 60, TTL6: 60, DF: DFClear}
	if n := testing.AllocsPerRun(100, func() { set.Apply(fd) }); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}
