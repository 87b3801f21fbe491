package dataplane

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// closingMember is a length-framed member ("<label>:<message>" back)
// that closes each connection in order after closeAfter answers (0:
// never), counting the connections it accepted and those open.
type closingMember struct {
	mu             sync.Mutex
	accepted, open int
}

func (m *closingMember) counts() (accepted, open int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.accepted, m.open
}

func startClosingMember(t *testing.T, addr, label string, closeAfter int) *closingMember {
	t.Helper()
	m := &closingMember{}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			m.mu.Lock()
			m.accepted++
			m.open++
			m.mu.Unlock()
			go func() {
				defer func() {
					c.Close()
					m.mu.Lock()
					m.open--
					m.mu.Unlock()
				}()
				r := bufio.NewReader(c)
				for n := 1; ; n++ {
					b, err := readMsg(r)
					if err != nil {
						return
					}
					if _, err := c.Write(frameMsg(append([]byte(label+":"), b...))); err != nil {
						return
					}
					if closeAfter > 0 && n >= closeAfter {
						return
					}
				}
			}()
		}
	}()
	return m
}

// TestMBLBIsolateServer: through the proxy, a member that closes its
// connection after each answer leaves the client served with
// isolate-server enabled (the default), and closes the client in order
// with it disabled.
func TestMBLBIsolateServer(t *testing.T) {
	for i, propagate := range []bool{false, true} {
		t.Run(fmt.Sprintf("propagate=%v", propagate), func(t *testing.T) {
			p, _ := newPlane(t)
			vsAddr := fmt.Sprintf("127.70.5.%d:9000", 1+i)
			a1 := fmt.Sprintf("127.70.5.%d:9001", 20+i)
			startClosingMember(t, a1, "S1", 1)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}},
				ShutdownTimeout: 5 * time.Second, PropagateServerClose: propagate}
			mustApply(t, p, mblbConfig(vsAddr, m, a1))
			c, err := net.Dial("tcp", vsAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(c)
			c.Write(frameMsg([]byte("0")))
			if b, err := readMsg(r); err != nil || string(b) != "S1:0" {
				t.Fatalf("first answer %q, %v", b, err)
			}
			if propagate {
				// The member's FIN reaches the client: EOF, not a reset.
				b, err := readMsg(r)
				if !errors.Is(err, io.EOF) {
					t.Fatalf("after the member's close: %q, %v; want EOF", b, err)
				}
				return
			}
			for j := 1; j < 4; j++ {
				c.Write(frameMsg([]byte(fmt.Sprint(j))))
				if b, err := readMsg(r); err != nil || string(b) != fmt.Sprintf("S1:%d", j) {
					t.Fatalf("answer %d: %q, %v", j, b, err)
				}
			}
		})
	}
}

// TestMBLBMinConnOwn: min-conn without one-connect opens connections to
// each member before any client, and a client's first message to each
// takes one instead of connecting; a disabled member keeps none.
func TestMBLBMinConnOwn(t *testing.T) {
	p, _ := newPlane(t)
	vsAddr := "127.70.5.10:9000"
	a1, a2 := "127.70.5.30:9001", "127.70.5.30:9002"
	members := map[string]*closingMember{
		"S1": startClosingMember(t, a1, "S1", 0),
		"S2": startClosingMember(t, a2, "S2", 0),
	}
	m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}, MinConn: 2}
	mustApply(t, p, mblbConfig(vsAddr, m, a1, a2))
	eventually(t, "two connections to each member", func() bool {
		x1, o1 := members["S1"].counts()
		x2, o2 := members["S2"].counts()
		return x1 == 2 && o1 == 2 && x2 == 2 && o2 == 2
	})
	c, err := net.Dial("tcp", vsAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(c)
	seen := map[string]int{}
	for j := 0; j < 4; j++ {
		c.Write(frameMsg([]byte(fmt.Sprint(j))))
		b, err := readMsg(r)
		if err != nil {
			t.Fatal(err)
		}
		seen[strings.SplitN(string(b), ":", 2)[0]]++
	}
	if seen["S1"] != 2 || seen["S2"] != 2 {
		t.Fatalf("answers %v, want two from each member", seen)
	}
	// The client's two (one per member) were taken from those opened
	// ahead, and replaced: three accepted and open at each.
	eventually(t, "the taken ones replaced", func() bool {
		x1, o1 := members["S1"].counts()
		x2, o2 := members["S2"].counts()
		return x1 == 3 && o1 == 3 && x2 == 3 && o2 == 3
	})
	// S2 disabled: its idle ones close, the client's own is drained.
	next := mblbConfig(vsAddr, m, a1, a2)
	next.Pools["/Common/pool"].Members[1].Session = SessionUserDisabled
	mustApply(t, p, next)
	eventually(t, "S2's connections closed", func() bool { _, o2 := members["S2"].counts(); return o2 == 0 })
	if x1, o1 := members["S1"].counts(); x1 != 3 || o1 != 3 {
		t.Fatalf("S1 accepted %d, open %d; want 3 and 3", x1, o1)
	}
}
