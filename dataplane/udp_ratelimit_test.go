package dataplane

import (
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// countingUDPMember counts the datagrams it gets and answers none.
func countingUDPMember(t *testing.T, addr string) *atomic.Int64 {
	t.Helper()
	c, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(ap(addr)))
	if err != nil {
		t.Fatalf("member %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	var n atomic.Int64
	go func() {
		buf := make([]byte, 65535)
		for {
			if _, _, err := c.ReadFromUDPAddrPort(buf); err != nil {
				return
			}
			n.Add(1)
		}
	}()
	return &n
}

// rateRule answers "stats" from the rule itself (its commands' values)
// and sends every other datagram on.
const rateStats = `when CLIENT_DATA {
    if {[UDP::payload 5] eq "stats"} {
        UDP::respond "rate [UDP::max_rate] bufs [UDP::max_buf_pkts] drop [IP::ingress_drop_rate] limit [IP::ingress_rate_limit] queue [UDP::debug_queue]"
        UDP::drop
    }
}`

func sendBurst(c *udpClient, n, size int) {
	d := make([]byte, size)
	copy(d, "burst")
	for range n {
		c.c.Write(d)
	}
}

// TestRuleUDPMaxRate: UDP::max_rate paces a flow's datagrams toward its
// member; 40 KB at 20000 bytes a second take at least the time the
// bucket's burst leaves, and all arrive (the queue holds them).
func TestRuleUDPMaxRate(t *testing.T) {
	t.Parallel()
	vs, member := "127.136.1.1:5300", "127.136.1.2:5300"
	got := countingUDPMember(t, member)
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED { UDP::max_rate 20000 }`, rateStats)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", vs)
	start := time.Now()
	sendBurst(c, 40, 1000)
	eventually(t, "the 40 datagrams at the member", func() bool { return got.Load() >= 40 })
	if d, want := time.Since(start), atLeast(40000, 20000*8); d < want {
		t.Fatalf("40 KB at 20000 bytes a second took %v, less than %v", d, want)
	}
	st := c.mustAsk("stats")
	if !strings.HasPrefix(st, "rate 20000 bufs 0 drop 0 limit 0 queue max_rate 20000 max_buf_pkts 0 to_server {queued_pkts ") ||
		!strings.Contains(st, " dropped_pkts 0} to_client {") {
		t.Fatalf("stats %q", st)
	}
}

// TestRuleUDPMaxBufPkts: with at most 3 datagrams queued, a burst far
// above the rate is dropped past them and counted (UDP::debug_queue);
// lifting the rate (0) lets the next ones through at once.
func TestRuleUDPMaxBufPkts(t *testing.T) {
	t.Parallel()
	vs, member := "127.136.2.1:5300", "127.136.2.2:5300"
	got := countingUDPMember(t, member)
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED {
    UDP::max_rate 2000
    UDP::max_buf_pkts 3
}
when CLIENT_DATA {
    if {[UDP::payload 4] eq "lift"} { UDP::max_rate 0; UDP::drop }
}`, rateStats)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", vs)
	sendBurst(c, 50, 1000)
	st := c.mustAsk("stats")
	m := regexp.MustCompile(`to_server \{queued_pkts (\d+) queued_bytes \d+ passed_pkts \d+ dropped_pkts (\d+)\}`).FindStringSubmatch(st)
	if m == nil || !strings.HasPrefix(st, "rate 2000 bufs 3 ") {
		t.Fatalf("stats %q", st)
	}
	queued, _ := strconv.Atoi(m[1])
	dropped, _ := strconv.Atoi(m[2])
	if queued > 3 || dropped == 0 {
		t.Fatalf("queued %d (at most 3), dropped %d: %q", queued, dropped, st)
	}
	c.c.Write([]byte("lift"))
	before := got.Load()
	if before >= 50 {
		t.Fatalf("the member got %d of 50 datagrams, none dropped", before)
	}
	sendBurst(c, 3, 100)
	eventually(t, "datagrams after the rate is lifted", func() bool { return got.Load() >= before+3 })
}

// TestRuleIngressRateLimitUDP: a flow's client datagrams past
// IP::ingress_rate_limit are dropped before its rules and member see
// them; IP::ingress_drop_rate reads the share dropped.
func TestRuleIngressRateLimitUDP(t *testing.T) {
	t.Parallel()
	vs, member := "127.136.3.1:5300", "127.136.3.2:5300"
	got := countingUDPMember(t, member)
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED { IP::ingress_rate_limit 5 }`, rateStats)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	c := dialUDP(t, "", vs)
	sendBurst(c, 100, 100)
	// The limit lets "stats" through within a second or two.
	var st string
	for i := 0; i < 20 && st == ""; i++ {
		st = c.ask("stats")
	}
	m := regexp.MustCompile(`^rate 0 bufs 0 drop (\d+) limit 5 `).FindStringSubmatch(st)
	if m == nil {
		t.Fatalf("stats %q", st)
	}
	if pct, _ := strconv.Atoi(m[1]); pct < 50 {
		t.Fatalf("drop rate %d%%, want most of a burst of 100 at 5 a second dropped", pct)
	}
	if n := got.Load(); n >= 100 {
		t.Fatalf("the member got %d of 100 datagrams", n)
	}
}

// TestRuleIngressRateLimitTCP: on a TCP flow the limit holds the client
// back (its segments are read no faster), nothing is lost and nothing
// counts as dropped.
func TestRuleIngressRateLimitTCP(t *testing.T) {
	t.Parallel()
	vs, member := "127.136.4.1:8000", "127.136.4.2:9000"
	serveConns(t, member, func(c net.Conn) {
		n, _ := io.Copy(io.Discard, c)
		fmt.Fprintf(c, "%d", n)
	})
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	var lg *ruleLog
	cfg.Virtuals["/Common/vs"].Rules, lg = compileRules(t, `when CLIENT_ACCEPTED {
    IP::ingress_rate_limit 30
    log local0. "limit [IP::ingress_rate_limit] drop [IP::ingress_drop_rate]"
}`)
	lg.showOnFailure(t)
	mustApply(t, p, cfg)
	c, err := net.DialTimeout("tcp", vs, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	const size = 150 << 10
	start := time.Now()
	go func() {
		c.Write(make([]byte, size))
		c.(*net.TCPConn).CloseWrite()
	}()
	ans, err := io.ReadAll(c)
	if err != nil || string(ans) != strconv.Itoa(size) {
		t.Fatalf("member got %q, %v", ans, err)
	}
	// 150 KB is over 100 full segments: 30 at once, the rest at 30 a
	// second, less slack.
	if d := time.Since(start); d < time.Second {
		t.Fatalf("150 KB at 30 segments a second took %v", d)
	}
	if !strings.Contains(lg.String(), "limit 30 drop 0") {
		t.Fatalf("log %q", lg.String())
	}
}
