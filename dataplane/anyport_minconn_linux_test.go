//go:build linux

package dataplane

import (
	"bufio"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"sync"
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

// TestAnyPortMinConnAutomap: min-conn on an mblb virtual that is a
// network on a port (127.249.240.0/20 on 30127) with automap, with and
// without OneConnect, and on every port of the network with its member
// at port any: once a client of 127.249.241.1 came, connections are
// opened ahead from that address (the member sees them from it), and
// the next client of that address is answered on one of them (a
// connection the member accepted before the client came) from the
// address it reached; a client of another address of the network is
// answered from its own. Before, they left from the network's own
// address only: OneConnect's clients of another address never took
// them, and without OneConnect a client took one leaving from the
// wrong address.
func TestAnyPortMinConnAutomap(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	for _, tc := range []struct {
		name    string
		oc, any bool
	}{
		{"port", false, false},
		{"port-oneconnect", true, false},
		{"every-port-oneconnect", true, true},
		{"every-port", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := startSourceMember(t, "127.250.240.11:30127")
			p, _ := loggedPlane(t)
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}, MinConn: 2}
			want := 3 // the first client's own and two opened ahead
			if tc.oc {
				// max-size as min-conn: a client on another event loop
				// than the connections opened ahead takes one of them
				// rather than opening its own (acquire opens one on its
				// own loop while the pool may grow).
				m.OneConnect = &OneConnect{MaxSize: 2}
				want = 2 // the first client's, pooled, is one of the two
			}
			dst, member := "127.249.240.0:30127", "127.250.240.11:30127"
			if tc.any {
				dst, member = "127.249.240.0:0", "127.250.240.11:0"
			}
			cfg := mblbConfig(dst, m, member)
			cfg.Virtuals["/Common/vs"].Network = netip.MustParsePrefix("127.249.240.0/20")
			if err := Check(cfg); err != nil {
				t.Fatal(err)
			}
			mustApply(t, p, cfg)
			const a, b = "127.249.241.1", "127.249.250.2"
			if src, _ := askSource(t, a+":30127"); src != a {
				t.Fatalf("first client of %s answered on a connection from %s", a, src)
			}
			eventually(t, "connections opened ahead from "+a, func() bool { return mem.from(a) >= want })
			time.Sleep(1500 * time.Millisecond) // the janitor settles
			before := mem.total()
			src, seq := askSource(t, a+":30127")
			if src != a {
				t.Errorf("second client of %s answered on a connection from %s", a, src)
			}
			if seq > before {
				t.Errorf("second client of %s answered on connection #%d, opened after it came (%d before): not one opened ahead", a, seq, before)
			}
			if src, _ := askSource(t, b+":30127"); src != b {
				t.Errorf("client of %s answered on a connection from %s", b, src)
			}
		})
	}
}

// sourceMember is a length-framed member that answers each message with
// the source address of the connection it came on and that connection's
// number in accept order ("<addr>#<n>"), counting connections by source.
type sourceMember struct {
	mu   sync.Mutex
	n    int
	byIP map[string]int
}

func (m *sourceMember) from(ip string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.byIP[ip]
}

func (m *sourceMember) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.n
}

func startSourceMember(t *testing.T, addr string) *sourceMember {
	t.Helper()
	m := &sourceMember{byIP: map[string]int{}}
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
			ip := c.RemoteAddr().(*net.TCPAddr).IP.String()
			m.mu.Lock()
			m.n++
			seq := m.n
			m.byIP[ip]++
			m.mu.Unlock()
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					if _, err := readMsg(r); err != nil {
						return
					}
					if _, err := c.Write(frameMsg(fmt.Appendf(nil, "%s#%d", ip, seq))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return m
}

// askSource sends one length-framed message to dst and returns what a
// sourceMember answered: the member connection's source and number.
func askSource(t *testing.T, dst string) (string, int) {
	t.Helper()
	c, err := net.Dial("tcp", dst)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(20 * time.Second))
	c.Write(frameMsg([]byte("x")))
	b, err := readMsg(bufio.NewReader(c))
	ip, n, ok := strings.Cut(string(b), "#")
	seq, err2 := strconv.Atoi(n)
	if err != nil || !ok || err2 != nil {
		t.Fatalf("%s: %q %v", dst, b, err)
	}
	return ip, seq
}
