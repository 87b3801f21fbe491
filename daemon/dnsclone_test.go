package daemon

import (
	"encoding/binary"
	"io"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// cloneCollector stands for an intrusion detection system in a clone
// pool: it listens on UDP and TCP at one address and records the
// question name of every DNS message it gets, "udp NAME" or "tcp NAME"
// (a TCP stream is cut on the messages' length prefixes). It never
// answers.
type cloneCollector struct {
	mu  sync.Mutex
	got []string
}

func startCloneCollector(t *testing.T, addr string) *cloneCollector {
	t.Helper()
	c := &cloneCollector{}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		pc.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 65535)
		for {
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			c.note("udp", buf[:n])
		}
	}()
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				var l [2]byte
				for range 1000 {
					if _, err := io.ReadFull(conn, l[:]); err != nil {
						return
					}
					b := make([]byte, binary.BigEndian.Uint16(l[:]))
					if _, err := io.ReadFull(conn, b); err != nil {
						return
					}
					c.note("tcp", b)
				}
			}()
		}
	}()
	return c
}

func (c *cloneCollector) note(network string, b []byte) {
	m := new(dns.Msg)
	name := "unreadable"
	if m.Unpack(b) == nil && len(m.Question) == 1 {
		name = strings.TrimSuffix(strings.ToLower(m.Question[0].Name), ".")
	}
	c.mu.Lock()
	c.got = append(c.got, network+" "+name)
	c.mu.Unlock()
}

// wait returns what the collector got once it holds every line of want
// (in any order), or after 10 s; sorted.
func (c *cloneCollector) wait(want []string) []string {
	for range 200 {
		c.mu.Lock()
		got := slices.Clone(c.got)
		c.mu.Unlock()
		all := true
		for _, w := range want {
			if !slices.Contains(got, w) {
				all = false
			}
		}
		if all {
			slices.Sort(got)
			return got
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	got := slices.Clone(c.got)
	slices.Sort(got)
	return got
}

// TestDNSVirtualClone: a dns virtual's clone pools get a copy of each
// query over UDP and TCP (clientside as the client sent it, serverside
// as the rule rewrote it), and a rule's clone pool in DNS_REQUEST copies
// the queries it picks: over UDP that query alone, over TCP that query
// and the connection's later ones. The clients' answers come from the
// pool member as before.
func TestDNSVirtualClone(t *testing.T) {
	e, p := dnsProfileEngine(t, true)
	member := startDNSPoolMember(t, "127.197.40.10:20053", map[string]string{
		"plain.example.net. A":   "x 300 IN A 127.197.9.1",
		"tap.example.net. A":     "x 300 IN A 127.197.9.2",
		"after.example.net. A":   "x 300 IN A 127.197.9.3",
		"renamed.example.net. A": "x 300 IN A 127.197.9.4",
	})
	idsClient := startCloneCollector(t, "127.197.40.21:20053")
	idsServer := startCloneCollector(t, "127.197.40.22:20053")
	idsRule := startCloneCollector(t, "127.197.40.23:20053")
	s := e.NewSession("admin").(*Session)
	mustRun(t, s,
		"create ltm pool dnsp members add { 127.197.40.10:20053 }",
		"create ltm pool ids_c members add { 127.197.40.21:20053 }",
		"create ltm pool ids_s members add { 127.197.40.22:20053 }",
		"create ltm pool ids_r members add { 127.197.40.23:20053 }",
		"create ltm rule rename { when DNS_REQUEST { if { [DNS::question name] equals \"old.example.net\" } { DNS::question name renamed.example.net } } }",
		"create ltm rule tap { when DNS_REQUEST { if { [DNS::question name] starts_with \"tap\" } { clone pool ids_r } } }",
		"create ltm virtual pools_udp destination 127.197.40.1:20053 ip-protocol udp profiles replace-all-with { udp dns } pool dnsp rules { rename } clone-pools replace-all-with { ids_c { context clientside } ids_s { context serverside } }",
		"create ltm virtual pools_tcp destination 127.197.40.1:20053 ip-protocol tcp profiles replace-all-with { tcp dns } pool dnsp rules { rename } clone-pools replace-all-with { ids_c { context clientside } ids_s { context serverside } }",
		"create ltm virtual rule_udp destination 127.197.40.2:20053 ip-protocol udp profiles replace-all-with { udp dns } pool dnsp rules { tap }",
		"create ltm virtual rule_tcp destination 127.197.40.2:20053 ip-protocol tcp profiles replace-all-with { tcp dns } pool dnsp rules { tap }",
	)

	// The clone pools: every query, over both transports.
	for _, network := range []string{"udp", "tcp"} {
		for _, tt := range []struct{ name, want string }{
			{"plain.example.net", "NOERROR 127.197.9.1"},
			{"old.example.net", "NOERROR 127.197.9.4"}, // the rule renamed it
		} {
			if got := dnsAsk(t, network, "127.197.40.1:20053", tt.name, dns.TypeA); got != tt.want {
				t.Errorf("%s over %s: %q, want %q", tt.name, network, got, tt.want)
			}
		}
	}
	wantC := []string{"tcp old.example.net", "tcp plain.example.net", "udp old.example.net", "udp plain.example.net"}
	if got := idsClient.wait(wantC); !slices.Equal(got, wantC) {
		t.Errorf("the clientside clone pool got %q, want %q", got, wantC)
	}
	wantS := []string{"tcp plain.example.net", "tcp renamed.example.net", "udp plain.example.net", "udp renamed.example.net"}
	if got := idsServer.wait(wantS); !slices.Equal(got, wantS) {
		t.Errorf("the serverside clone pool got %q, want %q", got, wantS)
	}

	// The rule's clone: over UDP the tapped query alone; over TCP, on
	// one connection, the tapped query and the one after it.
	for _, name := range []string{"plain.example.net", "tap.example.net", "after.example.net"} {
		if got := dnsAsk(t, "udp", "127.197.40.2:20053", name, dns.TypeA); !strings.HasPrefix(got, "NOERROR 127.197.9.") {
			t.Errorf("%s over udp: %q", name, got)
		}
	}
	c := &dns.Client{Net: "tcp", Timeout: 5 * time.Second}
	conn, err := c.Dial("127.197.40.2:20053")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"plain.example.net", "tap.example.net", "after.example.net"} {
		q := new(dns.Msg)
		q.SetQuestion(name+".", dns.TypeA)
		if m, _, err := c.ExchangeWithConn(q, conn); err != nil || len(m.Answer) != 1 {
			t.Errorf("%s over one tcp connection: %v %v", name, m, err)
		}
	}
	conn.Close()
	wantR := []string{"tcp after.example.net", "tcp tap.example.net", "udp tap.example.net"}
	if got := idsRule.wait(wantR); !slices.Equal(got, wantR) {
		t.Errorf("the rule's clone pool got %q, want %q", got, wantR)
	}
	if n := member.queries.Load(); n != 10 {
		t.Errorf("the pool member got %d queries, want 10 (the clones are not its)", n)
	}

	// Counted: one clone connection per UDP query and clone pool, one per
	// TCP connection and clone pool (dnsAsk dials per query).
	for _, tt := range []struct {
		vs    string
		conns uint64
	}{{"pools_udp", 4}, {"pools_tcp", 4}, {"rule_udp", 1}, {"rule_tcp", 1}} {
		var got uint64
		for range 100 {
			if st, ok := p.Virtual("/Common/" + tt.vs); ok && st.Clone != nil {
				if got = st.Clone.Conns; got >= tt.conns {
					break
				}
			}
			time.Sleep(50 * time.Millisecond)
		}
		if got != tt.conns {
			t.Errorf("%s: %d clone connections, want %d", tt.vs, got, tt.conns)
		}
	}
}
