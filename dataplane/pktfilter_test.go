package dataplane

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/pktfilter"
)

// pfSet builds a Set from (name, order, action, expression) rows.
func pfSet(t *testing.T, deflt pktfilter.Action, log func(string), rows ...[4]string) *pktfilter.Set {
	t.Helper()
	s := &pktfilter.Set{Default: deflt, Log: log}
	for i, r := range rows {
		e, err := pktfilter.Compile(r[3])
		if err != nil {
			t.Fatal(err)
		}
		a, ok := pktfilter.ParseAction(r[2])
		if !ok {
			t.Fatalf("action %q", r[2])
		}
		var order int
		for _, c := range r[1] {
			order = order*10 + int(c-'0')
		}
		s.Filters = append(s.Filters, &pktfilter.Filter{Name: r[0], Order: order, Action: a, Expr: e, Logging: i == 0})
	}
	return s
}

// pfOutcome connects from src to vs, sends a line and says what came
// back: "answer", "reset" (an RST: ECONNRESET on connect, write or read)
// or "closed" (a FIN, nothing answered).
func pfOutcome(t *testing.T, src, vs string) string {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		t.Fatalf("dial %s from %s: %v", vs, src, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("hello\n")); err != nil {
		if errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
			return "reset"
		}
		t.Fatalf("write: %v", err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	switch {
	case err == nil && line != "":
		return "answer"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, io.EOF) && line == "":
		return "closed"
	}
	t.Fatalf("from %s: %q, %v", src, line, err)
	return ""
}

// pfSilent is pfOutcome for a client that writes nothing: "closed" when
// the proxy ends the connection with a FIN, "reset" for a reset, "open"
// when nothing comes.
func pfSilent(t *testing.T, src, vs string) string {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: net.TCPAddrFromAddrPort(netip.AddrPortFrom(netip.MustParseAddr(src), 0))}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		if errors.Is(err, syscall.ECONNRESET) {
			return "reset"
		}
		t.Fatalf("dial %s from %s: %v", vs, src, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	switch {
	case errors.Is(err, io.EOF):
		return "closed"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "open"
	}
	t.Fatalf("from %s: %v", src, err)
	return ""
}

// TestPacketFilterTCP: with filters in force, clients from different
// loopback sources through a standard virtual are accepted (answered by
// the member), rejected (reset) or discarded (closed, nothing
// answered), in the filters' order, the default deciding the rest; the
// counters and log lines follow; with filtering off every client is
// answered again. The virtual is plain, so its flows run on the event
// loops; the goroutine flows and message virtuals refuse through the
// same Admit and refusal functions.
func TestPacketFilterTCP(t *testing.T) {
	t.Parallel()
	startServer(t, "127.182.7.11:30080", "S1")
	p, _ := newPlane(t)
	vs := "127.182.7.1:30080"
	mustApply(t, p, basic(vs, "127.182.7.11:30080"))
	var mu sync.Mutex
	var lines []string
	logf := func(l string) { mu.Lock(); lines = append(lines, l); mu.Unlock() }
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, logf,
		[4]string{"log-all", "1", "continue", "tcp and dst port 30080"},
		[4]string{"allow-one", "10", "accept", "src host 127.182.8.7"},
		[4]string{"deny-net", "20", "reject", "src net 127.182.8.0/24"},
		[4]string{"quiet", "30", "discard", "src host 127.182.9.1"},
	))
	for _, c := range []struct{ src, want string }{
		{"127.182.8.7", "answer"}, // allow-one before deny-net
		{"127.182.8.8", "reset"},  // deny-net
		{"127.182.9.1", "closed"}, // quiet
		{"127.182.9.2", "answer"}, // the default, accept
	} {
		outcome := pfOutcome
		if c.want == "closed" {
			// A client that wrote after the FIN would draw a reset
			// from the closed socket (a race with the write).
			outcome = pfSilent
		}
		if got := outcome(t, c.src, vs); got != c.want {
			t.Errorf("client from %s: %s, want %s", c.src, got, c.want)
		}
	}
	h := p.PacketFilter()
	for name, want := range map[string]uint64{"log-all": 4, "allow-one": 1, "deny-net": 1, "quiet": 1} {
		if got := h.Stats(name).Matches; got != want {
			t.Errorf("%s: %d matches, want %d", name, got, want)
		}
	}
	mu.Lock()
	if len(lines) != 4 {
		t.Errorf("log lines %q, want 4 (log-all logs)", lines)
	}
	mu.Unlock()

	// The default reject refuses what no filter accepts.
	p.SetPacketFilter(pfSet(t, pktfilter.Reject, nil, [4]string{"allow-one", "10", "accept", "src host 127.182.8.7"}))
	if got := pfOutcome(t, "127.182.9.2", vs); got != "reset" {
		t.Errorf("default reject: %s", got)
	}
	if got := pfOutcome(t, "127.182.8.7", vs); got != "answer" {
		t.Errorf("accepted under default reject: %s", got)
	}
	// Trusted sources are never filtered.
	s := pfSet(t, pktfilter.Reject, nil)
	s.Trusted = []netip.Prefix{netip.MustParsePrefix("127.182.9.2/32")}
	p.SetPacketFilter(s)
	if got := pfOutcome(t, "127.182.9.2", vs); got != "answer" {
		t.Errorf("trusted: %s", got)
	}
	// Off: everyone is answered.
	p.SetPacketFilter(nil)
	if got := pfOutcome(t, "127.182.8.8", vs); got != "answer" {
		t.Errorf("filtering off: %s", got)
	}
}

// TestPacketFilterUDP: a UDP virtual's new flows are filtered: a
// rejected or discarded client gets no answer and no flow, an accepted
// one is answered by the member.
func TestPacketFilterUDP(t *testing.T) {
	t.Parallel()
	startUDPMember(t, "127.182.10.11:30053", "U1")
	p, _ := newPlane(t)
	vs := "127.182.10.1:30053"
	mustApply(t, p, udpBasic(vs, "127.182.10.11:30053"))
	p.SetPacketFilter(pfSet(t, pktfilter.Accept, nil,
		[4]string{"no-udp-from", "5", "reject", "udp and src net 127.182.11.0/24"},
	))
	if a := dialUDP(t, "127.182.12.1:0", vs).mustAsk("q"); label(a) != "U1" {
		t.Errorf("accepted client: %q", a)
	}
	if a := dialUDP(t, "127.182.11.1:0", vs).ask("q"); a != "" {
		t.Errorf("rejected client answered %q", a)
	}
	if got := p.PacketFilter().Stats("no-udp-from").Matches; got != 1 {
		t.Errorf("no-udp-from: %d matches, want 1", got)
	}
}
