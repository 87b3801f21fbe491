package dataplane

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// TestRuleCloneLate: a rule's clone on a standard TCP virtual in the
// events after CLIENT_ACCEPTED that run before the client's bytes reach
// the member (CLIENT_DATA after TCP::collect, LB_SELECTED,
// SERVER_CONNECTED) copies the connection from the bytes the member had
// not been sent: the collected payload and what follows, clientside as
// the client sent it, serverside as the member got it (the rule's
// TCP::payload edit); a rule that decides not to clone copies nothing.
func TestRuleCloneLate(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), 8<<10)
	for i, tc := range []struct {
		name, rule string
		cloned     bool
		edit       bool // the rule turns "TAP" into "PAT" before the member
	}{
		{"client data", "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { if { [TCP::payload 3] eq \"TAP\" } { clone pool /Common/ids }\n TCP::release }", true, false},
		{"client data not cloned", "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { if { [TCP::payload 3] eq \"XXX\" } { clone pool /Common/ids }\n TCP::release }", false, false},
		{"client data edited, clientside", "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { clone pool /Common/ids\n TCP::payload replace 0 3 PAT\n TCP::release }", true, false},
		{"client data edited, serverside", "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { TCP::payload replace 0 3 PAT\n serverside { clone pool /Common/ids }\n TCP::release }", true, true},
		{"lb selected", "when LB_SELECTED { clone pool /Common/ids member BASE3 9001 }", true, false},
		{"server connected", "when SERVER_CONNECTED { clone pool /Common/ids }", true, false},
		{"server connected after collect", "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { TCP::release }\nwhen SERVER_CONNECTED { clientside { clone pool /Common/ids } }", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := "127.202.1" + string(rune('0'+i)) + "."
			vs, member := base+"1:20100", base+"2:20200"
			echoMember(t, member)
			cc := startCloneCollector(t, base+"3:9001")
			p, _ := newPlane(t)
			cfg := basic(vs, member)
			addClonePool(cfg, "/Common/ids", base+"3:9001")
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, strings.ReplaceAll(tc.rule, "BASE", base))
			mustApply(t, p, cfg)

			payload := append([]byte("TAP "), body...)
			toMember := payload
			if tc.edit || strings.Contains(tc.rule, "replace") {
				toMember = append([]byte("PAT "), body...)
			}
			back := cloneExchange(t, vs, payload)
			if !bytes.Equal(back, toMember) {
				t.Fatalf("the client got %d bytes back (%.8q), want the %d the member got", len(back), back, len(toMember))
			}
			want := payload
			if tc.edit {
				want = toMember
			}
			if !tc.cloned {
				st, _ := p.Virtual("/Common/vs")
				if st.Clone != nil && st.Clone.Conns != 0 {
					t.Fatalf("%d clone connections; want none", st.Clone.Conns)
				}
				return
			}
			got := cc.wait(t, 1)
			if len(got) != 1 || got[0] != string(want) {
				t.Fatalf("clone member got %d connections, first %d bytes (%.8q); want 1 with %d bytes (%.8q)", len(got), len(first(got)), first(got), len(want), want)
			}
			eventually(t, "clone counters", func() bool {
				st, _ := p.Virtual("/Common/vs")
				return st.Clone != nil && st.Clone.Conns == 1 && st.Clone.Bytes == uint64(len(want)) && st.Clone.Dropped == 0
			})
		})
	}
}

// cloneExchange writes payload through the virtual, half-closes, and returns
// what comes back.
func cloneExchange(t *testing.T, vs string, payload []byte) []byte {
	t.Helper()
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	werr := make(chan error, 1)
	go func() {
		_, err := c.Write(payload)
		c.(*net.TCPConn).CloseWrite()
		werr <- err
	}()
	back, err := io.ReadAll(c)
	if err != nil || <-werr != nil {
		t.Fatalf("cloneExchange: %v", err)
	}
	return back
}

// TestRuleCloneLateDeadMember: a clone taken in CLIENT_DATA to a member
// nothing listens on changes nothing for the client; the copy is
// dropped and counted.
func TestRuleCloneLateDeadMember(t *testing.T) {
	vs, member := "127.202.19.1:20100", "127.202.19.2:20200"
	echoMember(t, member)
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	addClonePool(cfg, "/Common/dead", "127.202.19.3:9001") // nothing listens there
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, "when CLIENT_ACCEPTED { TCP::collect 3 }\nwhen CLIENT_DATA { clone pool /Common/dead\n TCP::release }")
	mustApply(t, p, cfg)
	payload := append([]byte("TAP "), bytes.Repeat([]byte("x"), 64<<10)...)
	if back := cloneExchange(t, vs, payload); !bytes.Equal(back, payload) {
		t.Fatalf("the client got %d bytes back, sent %d", len(back), len(payload))
	}
	eventually(t, "the dropped clone counted", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Dropped == 1 && st.Clone.Conns == 0
	})
}
