package dataplane

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// addClonePool adds a pool of the given members that the virtual does
// not name: only a rule's clone command reaches it.
func addClonePool(cfg *Config, name string, members ...string) {
	p := &Pool{Name: name, LBMode: RoundRobin}
	for _, m := range members {
		a := ap(m)
		p.Members = append(p.Members, Member{Node: "/Common/" + a.Addr().String(), Addr: a})
	}
	cfg.Pools[name] = p
}

// TestRuleClone: a rule's clone command copies the client's bytes to a
// member of the pool it names (by the pool's load balancing, or the
// member named) while the virtual's own member answers; the virtual and
// the clone pool count the copy; a connection the rule does not clone
// sends nothing to the clone members.
func TestRuleClone(t *testing.T) {
	for i, tc := range []struct {
		name, rule string
		copies     [2]int // connections each clone member gets
	}{
		{"pool", "when CLIENT_ACCEPTED { clone pool /Common/ids }", [2]int{1, 0}},
		{"member", "when CLIENT_ACCEPTED { clone pool /Common/ids member BASE4 9001 }", [2]int{0, 1}},
		{"not cloned", "when CLIENT_ACCEPTED { if { [TCP::local_port] == 1 } { clone pool /Common/ids } }", [2]int{0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.185.2" + string(rune('1'+i)) + "."
			vs, member := base+"1:8000", base+"2:9000"
			ids := [2]string{base + "3:9001", base + "4:9001"}
			echoMember(t, member)
			cc := [2]*cloneCollector{startCloneCollector(t, ids[0]), startCloneCollector(t, ids[1])}
			p, _ := newPlane(t)
			cfg := basic(vs, member)
			addClonePool(cfg, "/Common/ids", ids[0], ids[1])
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, strings.ReplaceAll(tc.rule, "BASE", base))
			mustApply(t, p, cfg)

			payload := append([]byte("GET / HTTP/1.0\r\n\r\n"), bytes.Repeat([]byte("0123456789abcdef"), 8<<10)...)
			roundTrip(t, vs, payload)
			want := tc.copies[0] + tc.copies[1]
			for k, n := range tc.copies {
				if n == 0 {
					continue
				}
				got := cc[k].wait(t, n)
				if len(got) != 1 || got[0] != string(payload) {
					t.Fatalf("clone member %d got %d connections, first %d bytes; want 1 with the %d bytes sent", k, len(got), len(first(got)), len(payload))
				}
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				if want == 0 {
					return st.Clone == nil || st.Clone.Conns == 0
				}
				return st.Clone != nil && st.Clone.Conns == uint64(want) && st.Clone.Bytes == uint64(len(payload))
			})
			ps, _ := p.Pool("/Common/ids")
			if ps.ServerSide.TotConns != uint64(want) {
				t.Errorf("clone pool: %d connections, want %d", ps.ServerSide.TotConns, want)
			}
			for k, n := range tc.copies {
				if n != 0 {
					continue
				}
				cc[k].mu.Lock()
				got := len(cc[k].got)
				cc[k].mu.Unlock()
				if got != 0 {
					t.Errorf("clone member %d got %d connections, want none", k, got)
				}
			}
		})
	}
}

// TestRuleCloneServerside: `serverside { clone pool P }` copies the bytes
// as the member gets them (a stream profile's rewrite), clientside as the
// client sent them.
func TestRuleCloneServerside(t *testing.T) {
	cloneStreamSides(t, "127.185.25", func(cfg *Config) { // clone_test.go
		addClonePool(cfg, "/Common/ids_cs", "127.185.25.3:9001")
		addClonePool(cfg, "/Common/ids_ss", "127.185.25.4:9001")
		cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { clone pool /Common/ids_cs\n serverside { clone pool /Common/ids_ss } }")
	})
}

// TestRuleCloneNoSuchMember: a member the pool lacks is a Tcl error that
// resets the client, as BIG-IP's runtime error does; nothing is cloned.
func TestRuleCloneNoSuchMember(t *testing.T) {
	vs, member := "127.185.26.1:8000", "127.185.26.2:9000"
	echoMember(t, member)
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	addClonePool(cfg, "/Common/ids", "127.185.26.3:9001")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { clone pool /Common/ids member 127.185.26.9 9001 }")
	mustApply(t, p, cfg)
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		return // reset already: the accepted connection's rule failed
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "hello\n")
	if b, err := io.ReadAll(c); err == nil || len(b) > 0 {
		t.Fatalf("client got %q, %v; want the connection reset", b, err)
	}
	st, _ := p.Virtual("/Common/vs")
	if st.Clone != nil && st.Clone.Conns != 0 {
		t.Errorf("%d clone connections; want none", st.Clone.Conns)
	}
}
