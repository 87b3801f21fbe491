//go:build linux

package dataplane

import (
	"bufio"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestAnyPortMinConn: min-conn on an mblb virtual on every port keeps
// connections open ahead to its member at port any on each port a client
// asked for, as they come: none before a client, two more on port 30091
// after one client there (none on 30092), then two on 30092 once a
// client asks for it; each client's answer comes from the member on its
// own port.
func TestAnyPortMinConn(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	m1 := startClosingMember(t, "127.239.8.11:30091", "S1", 0)
	m2 := startClosingMember(t, "127.239.8.11:30092", "S2", 0)
	p, _ := loggedPlane(t)
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}, MinConn: 2}
	mustApply(t, p, mblbConfig("127.239.8.1:0", m, "127.239.8.11:0"))
	time.Sleep(1500 * time.Millisecond) // a few janitor ticks: nothing to warm yet
	if x1, _ := m1.counts(); x1 != 0 {
		t.Fatalf("%d connections to port 30091 before any client", x1)
	}
	ask := func(dst, want string) { t.Helper(); askLength(t, dst, want) }
	ask("127.239.8.1:30091", "S1")
	eventually(t, "two more to port 30091", func() bool { x1, _ := m1.counts(); return x1 >= 3 })
	if x2, _ := m2.counts(); x2 != 0 {
		t.Fatalf("%d connections to port 30092 before a client asked for it", x2)
	}
	ask("127.239.8.1:30092", "S2")
	eventually(t, "two more to port 30092", func() bool { x2, _ := m2.counts(); return x2 >= 3 })
}

// askLength sends one length-framed message to dst and wants the answer
// of the member labelled want ("want:...").
func askLength(t *testing.T, dst, want string) {
	t.Helper()
	c, err := net.Dial("tcp", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	c.Write(frameMsg([]byte("x")))
	b, err := readMsg(bufio.NewReader(c))
	if err != nil || !strings.HasPrefix(string(b), want+":") {
		t.Fatalf("%s: %q %v, want %s's", dst, b, err, want)
	}
}
