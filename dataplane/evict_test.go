package dataplane

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// TestFlowEviction: a virtual with connection-limit 4 and an eviction
// policy holds four clients open; a fifth is admitted, and the
// connection the policy's strategies choose is reset (its client reads
// a reset or EOF) while the others go on. Without a policy the fifth is
// refused and the four go on.
func TestFlowEviction(t *testing.T) {
	for i, c := range []struct {
		name   string
		policy *EvictionPolicy
		talk   []int // the clients (0 to 3) that send a message after all four are up
		want   int   // the client evicted; -1: none, the fifth refused
	}{
		{"bias-idle", &EvictionPolicy{High: 100, Low: 75, BiasIdle: true}, []int{0}, 1},
		{"bias-oldest", &EvictionPolicy{High: 100, Low: 75, BiasOldest: true}, []int{0}, 0},
		{"bias-bytes", &EvictionPolicy{High: 100, Low: 75, BiasBytes: true}, []int{0, 1, 3}, 2},
		{"defaults (95/85) and both biases", &EvictionPolicy{High: 95, Low: 85, BiasIdle: true, BiasOldest: true}, []int{0, 2}, 1},
		{"no policy", nil, []int{0}, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			vsAddr := fmt.Sprintf("127.184.10.%d:30100", i+1)
			member := fmt.Sprintf("127.184.11.%d:30110", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsAddr, member)
			v := cfg.Virtuals["/Common/vs"]
			v.ConnectionLimit = 4
			v.Eviction = c.policy
			mustApply(t, p, cfg)

			var cl []*client
			for k := 0; k < 4; k++ {
				cl = append(cl, dialVS(t, vsAddr))
				// Each flow in the table before the next opens, so
				// that their ages differ.
				eventually(t, "the client's flow", func() bool { return p.ConnectionCount() == k+1 })
				time.Sleep(20 * time.Millisecond)
			}
			for _, k := range c.talk {
				if got := cl[k].mustAsk("hello"); got != "S1 Response" {
					t.Fatalf("client %d got %q", k, got)
				}
			}
			fifth, err := tryAskErr(vsAddr)
			if c.want < 0 {
				if err == nil {
					t.Fatalf("the fifth client was admitted past connection-limit 4 without a policy (%q)", fifth)
				}
			} else if err != nil || fifth != "S1 Response" {
				t.Fatalf("the fifth client: %q, %v; want admitted", fifth, err)
			}
			for k, x := range cl {
				got, err := x.ask("after")
				evicted := err != nil
				if evicted && !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) && !errors.Is(err, syscall.EPIPE) {
					t.Errorf("client %d: %v, want a reset or EOF", k, err)
				}
				if evicted != (k == c.want) {
					t.Errorf("client %d: answer %q, error %v; want evicted %v", k, got, err, k == c.want)
				}
			}
			st, _ := p.Virtual("/Common/vs")
			if wantN := uint64(0); c.want >= 0 && st.Evicted != 1 || c.want < 0 && st.Evicted != wantN {
				t.Errorf("Evicted Connections %d", st.Evicted)
			}
			if st.ClientSide.MaxConns > 4 {
				t.Errorf("Maximum Connections %d past the limit", st.ClientSide.MaxConns)
			}
		})
	}
}

// tryAskErr connects, asks once and returns the answer.
func tryAskErr(vs string) (string, error) {
	c, err := net.DialTimeout("tcp", vs, 2*time.Second)
	if err != nil {
		return "", err
	}
	defer c.Close()
	k := &client{c: c.(*net.TCPConn), r: bufio.NewReader(c)}
	return k.ask("hi")
}

// TestFlowEvictionLowPriority: on a virtual listening on two ports, the
// connections to a low-priority port go first, before the idlest one;
// likewise the clients a low-priority geography names.
func TestFlowEvictionLowPriority(t *testing.T) {
	for i, c := range []struct {
		name   string
		policy *EvictionPolicy
		want   int // the client evicted
	}{
		// Clients 0 and 1 on port 30130, 2 and 3 on 30131; client 0 is
		// the idlest, client 2 the idlest of port 30131.
		{"idle only", &EvictionPolicy{High: 100, Low: 75, BiasIdle: true}, 0},
		{"low-priority port", &EvictionPolicy{High: 100, Low: 75, BiasIdle: true, LowPorts: []EvictionLowPort{{Port: 30131, Proto: "tcp"}}}, 2},
		{"low-priority port, other protocol", &EvictionPolicy{High: 100, Low: 75, BiasIdle: true, LowPorts: []EvictionLowPort{{Port: 30131, Proto: "udp"}}}, 0},
		{"low-priority geography", &EvictionPolicy{High: 100, Low: 75, BiasIdle: true, LowGeo: addrSet{"127.184.12.4": true}}, 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			vsIP := fmt.Sprintf("127.184.13.%d", i+1)
			member := fmt.Sprintf("127.184.14.%d:30140", i+1)
			startServer(t, member, "S1")
			p, _ := newPlane(t)
			cfg := basic(vsIP+":30130", member)
			v := cfg.Virtuals["/Common/vs"]
			v.PortRanges = []PortRange{{Low: 30130, High: 30131}}
			v.TranslatePort = true
			v.ConnectionLimit = 4
			v.Eviction = c.policy
			mustApply(t, p, cfg)

			var cl []*client
			for k := 0; k < 4; k++ {
				cl = append(cl, dialFrom(t, fmt.Sprintf("127.184.12.%d", k+1), fmt.Sprintf("%s:%d", vsIP, 30130+k/2)))
				eventually(t, "the client's flow", func() bool { return p.ConnectionCount() == k+1 })
				time.Sleep(20 * time.Millisecond)
			}
			if fifth, err := tryAskErr(vsIP + ":30130"); err != nil || fifth != "S1 Response" {
				t.Fatalf("the fifth client: %q, %v; want admitted", fifth, err)
			}
			for k, x := range cl {
				_, err := x.ask("after")
				if (err != nil) != (k == c.want) {
					t.Errorf("client %d: error %v; want evicted %v", k, err, k == c.want)
				}
			}
		})
	}
}

// addrSet is a low-priority geography as a set of addresses.
type addrSet map[string]bool

func (s addrSet) Admits(a netip.Addr) bool { return s[a.String()] }
