package dataplane

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// drainMember is a member for TestMBLBCommitDrains: length-framed
// ("<label>:<message>" back) or HTTP (the label as the body), counting
// the connections it accepted and those still open.
type drainMember struct {
	label          string
	mu             sync.Mutex
	accepted, open int
}

func (d *drainMember) counts() (accepted, open int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.accepted, d.open
}

func (d *drainMember) opened() {
	d.mu.Lock()
	d.accepted++
	d.open++
	d.mu.Unlock()
}

func (d *drainMember) closed() {
	d.mu.Lock()
	d.open--
	d.mu.Unlock()
}

func startDrainMember(t *testing.T, addr, label string, httpMode bool) *drainMember {
	t.Helper()
	d := &drainMember{label: label}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	if httpMode {
		srv := &http.Server{
			Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, label) }),
			ConnState: func(_ net.Conn, s http.ConnState) {
				switch s {
				case http.StateNew:
					d.opened()
				case http.StateClosed, http.StateHijacked:
					d.closed()
				}
			},
		}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
		return d
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			d.opened()
			go func() {
				defer d.closed()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					b, err := readMsg(r)
					if err != nil {
						return
					}
					if _, err := c.Write(frameMsg(append([]byte(label+":"), b...))); err != nil {
						return
					}
				}
			}()
		}
	}()
	return d
}

// TestMBLBCommitDrains: a commit that disables or removes a member of a
// message virtual's pool drains that member's connections (they close,
// and the clients' messages go to the other member), except that an http
// virtual without one-connect, balancing per client connection, keeps a
// disabled member's connections as BIG-IP keeps existing connections.
func TestMBLBCommitDrains(t *testing.T) {
	cases := []struct {
		name    string
		http    bool
		remove  bool // else disable
		drained bool
	}{
		{"mblb, member disabled", false, false, true},
		{"mblb, member removed", false, true, true},
		{"http per connection, member disabled", true, false, false},
		{"http per connection, member removed", true, true, true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := newPlane(t)
			vsAddr := fmt.Sprintf("127.33.3.%d:9000", 1+i)
			a1, a2 := fmt.Sprintf("127.33.3.%d:9001", 20+i), fmt.Sprintf("127.33.3.%d:9002", 20+i)
			members := map[string]*drainMember{
				"S1": startDrainMember(t, a1, "S1", tc.http),
				"S2": startDrainMember(t, a2, "S2", tc.http),
			}
			m := &MBLB{Request: mblb.Framing{Mode: mblb.Length, Length: mblb.LengthField{Size: 4}}, ShutdownTimeout: 5 * time.Second}
			if tc.http {
				m.Request = mblb.Framing{Mode: mblb.HTTP}
			}
			cfg := mblbConfig(vsAddr, m, a1, a2)
			mustApply(t, p, cfg)

			c, err := net.Dial("tcp", vsAddr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(20 * time.Second))
			r := bufio.NewReader(c)
			ask := func(i int) string {
				t.Helper()
				if tc.http {
					fmt.Fprintf(c, "GET /%d HTTP/1.1\r\nHost: x\r\n\r\n", i)
					resp, err := http.ReadResponse(r, nil)
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(resp.Body)
					resp.Body.Close()
					return string(b)
				}
				c.Write(frameMsg([]byte(fmt.Sprint(i))))
				b, err := readMsg(r)
				if err != nil {
					t.Fatal(err)
				}
				return strings.SplitN(string(b), ":", 2)[0]
			}
			// The member the client's first message went to is taken out.
			gone := ask(0)
			ask(1)
			other := map[string]string{"S1": "S2", "S2": "S1"}[gone]
			if _, open := members[gone].counts(); open != 1 {
				t.Fatalf("%s has %d connections open, want 1", gone, open)
			}
			idx := map[string]int{"S1": 0, "S2": 1}[gone]
			next := mblbConfig(vsAddr, m, a1, a2)
			pool := next.Pools["/Common/pool"]
			if tc.remove {
				pool.Members = append(pool.Members[:idx:idx], pool.Members[idx+1:]...)
			} else {
				pool.Members[idx].Session = SessionUserDisabled
			}
			mustApply(t, p, next)
			if !tc.drained {
				// The client's connection stays with its member.
				for j := 2; j < 5; j++ {
					if got := ask(j); got != gone {
						t.Fatalf("answer from %s, want %s (its connection kept)", got, gone)
					}
				}
				if acc, open := members[gone].counts(); acc != 1 || open != 1 {
					t.Fatalf("%s accepted %d, open %d; want its one connection kept", gone, acc, open)
				}
				return
			}
			eventually(t, gone+"'s connection to close", func() bool { _, open := members[gone].counts(); return open == 0 })
			for j := 2; j < 5; j++ {
				if got := ask(j); got != other {
					t.Fatalf("answer from %s, want %s", got, other)
				}
			}
			if acc, _ := members[gone].counts(); acc != 1 {
				t.Fatalf("%s accepted %d connections, want 1", gone, acc)
			}
			if st, _ := p.MBLBStats("/Common/vs"); st.Drained != 1 {
				t.Errorf("%d connections counted as drained, want 1", st.Drained)
			}
		})
	}
}
