//go:build linux

package sockopt

import (
	"net"
	"testing"
)

// pair is a connected loopback pair in this package's test range.
func pair(t *testing.T) (*net.TCPConn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.71.6.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	s, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(); s.Close() })
	return c.(*net.TCPConn), s.(*net.TCPConn)
}

func fdOf(t *testing.T, c *net.TCPConn) (fd int) {
	t.Helper()
	rc, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	rc.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// TestApplyReadsBack sets each setting on a real socket and reads it
// back as the kernel reports it (buffers doubled).
func TestApplyReadsBack(t *testing.T) {
	avail := Available()
	cases := []struct {
		name string
		side *Side
		tos  TOS
		want func(r Reading) bool
	}{
		{"nil changes nothing", nil, TOS{}, func(r Reading) bool { return r.NoDelay && r.TOS == 0 }},
		{"nagle enabled", &Side{Nagle: true}, TOS{}, func(r Reading) bool { return !r.NoDelay }},
		{"buffers doubled", &Side{SendBuffer: 40000, RecvBuffer: 50000}, TOS{}, func(r Reading) bool {
			return r.SendBuffer == 80000 && r.RecvBuffer == 100000
		}},
		{"side tos", &Side{TOS: 0xb8, SetTOS: true}, TOS{}, func(r Reading) bool { return r.TOS == 0xb8 }},
		{"pool tos", nil, TOS{Value: 0x20, Set: true}, func(r Reading) bool { return r.TOS == 0x20 }},
		{"reno", &Side{Congestion: "reno"}, TOS{}, func(r Reading) bool { return !avail["reno"] || r.Congestion == "reno" }},
		{"quick ack", &Side{QuickAck: true}, TOS{}, func(r Reading) bool { return r.NoDelay }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := pair(t)
			fd := fdOf(t, c)
			tc.side.Apply(fd)
			tc.tos.Apply(fd)
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

// TestApplyAllocatesNothing: a side left at its defaults (nil) and the
// integer settings cost no allocation per connection.
func TestApplyAllocatesNothing(t *testing.T) {
	c, _ := pair(t)
	fd := fdOf(t, c)
	var none *Side
	set := &Side{Nagle: true, QuickAck: true, SendBuffer: 65536, RecvBuffer: 65536, TOS: 8, SetTOS: true}
	for name, f := range map[string]func(){
		"nil":        func() { none.Apply(fd) },
		"pass":       func() { TOS{}.Apply(fd) },
		"configured": func() { set.Apply(fd) },
	} {
		if n := testing.AllocsPerRun(100, f); n != 0 {
			t.Errorf("%s: %v allocations per call", name, n)
		}
	}
}

func TestParseAvailable(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"reno cubic bbr\n", []string{"reno", "cubic", "bbr"}},
		{"", nil},
	} {
		got := ParseAvailable(tc.in)
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v", tc.in, got)
		}
		for _, w := range tc.want {
			if !got[w] {
				t.Errorf("%q: %s missing", tc.in, w)
			}
		}
	}
}
