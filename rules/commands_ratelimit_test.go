package rules

import (
	"strings"
	"testing"
)

// rateConn is a UDP flow that keeps what the rate commands set.
type rateConn struct {
	udpConn
	rate, pps     uint64
	bufs          int
	seen, dropped uint64
}

func (c *rateConn) UDPMaxRate() uint64                 { return c.rate }
func (c *rateConn) SetUDPMaxRate(r uint64) error       { c.rate = r; return nil }
func (c *rateConn) UDPMaxBufPkts() int                 { return c.bufs }
func (c *rateConn) SetUDPMaxBufPkts(n int) error       { c.bufs = n; return nil }
func (c *rateConn) IngressRateLimit() uint64           { return c.pps }
func (c *rateConn) SetIngressRateLimit(p uint64) error { c.pps = p; return nil }
func (c *rateConn) IngressDropRate() (uint64, uint64)  { return c.seen, c.dropped }
func (c *rateConn) UDPQueue() (UDPQueueStats, UDPQueueStats) {
	return UDPQueueStats{Pkts: 2, Bytes: 2000, MaxPkts: c.bufs, Passed: 10, Dropped: 3}, UDPQueueStats{}
}

func TestRateLimitCommands(t *testing.T) {
	for _, c := range []struct{ body, want, err string }{
		{body: "UDP::max_rate", want: "0"},
		{body: "UDP::max_rate 125000; UDP::max_rate", want: "125000"},
		{body: "UDP::max_rate 125000", want: "125000"},
		{body: "UDP::max_rate 125000; UDP::max_rate 0; UDP::max_rate", want: "0"},
		{body: "UDP::max_rate -1", err: `UDP::max_rate: "-1" is not a rate in bytes per second from 0 to`},
		{body: "UDP::max_rate 1mbps", err: `"1mbps" is not a rate`},
		{body: "UDP::max_rate 1 2", err: "wrong # args"},
		{body: "UDP::max_buf_pkts 5; UDP::max_buf_pkts", want: "5"},
		{body: "UDP::max_buf_pkts 2000000", err: "is not a number of packets from 0 to 1048576"},
		{body: "UDP::max_rate 1000; UDP::max_buf_pkts 2; UDP::debug_queue", want: "max_rate 1000 max_buf_pkts 2 to_server {queued_pkts 2 queued_bytes 2000 passed_pkts 10 dropped_pkts 3} to_client {queued_pkts 0 queued_bytes 0 passed_pkts 0 dropped_pkts 0}"},
		{body: "lindex [UDP::debug_queue] 5", want: "queued_pkts 2 queued_bytes 2000 passed_pkts 10 dropped_pkts 3"},
		{body: "UDP::debug_queue x", err: "wrong # args"},
		{body: "IP::ingress_rate_limit", want: "0"},
		{body: "IP::ingress_rate_limit 100; IP::ingress_rate_limit", want: "100"},
		{body: "IP::ingress_rate_limit ten", err: `"ten" is not a rate in packets per second`},
		{body: "IP::ingress_drop_rate", want: "0"},
		{body: "IP::ingress_drop_rate 5", err: "wrong # args"},
	} {
		got, err := runIn(t, &rateConn{udpConn: udpConn{newFakeConn()}}, c.body)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %q, %v; want error %q", c.body, got, err, c.err)
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %q, %v; want %q", c.body, got, err, c.want)
		}
	}
	rc := &rateConn{udpConn: udpConn{newFakeConn()}, seen: 40, dropped: 30}
	if got, err := runIn(t, rc, "IP::ingress_drop_rate"); err != nil || got != "75" {
		t.Errorf("drop rate of 30 in 40: %q, %v", got, err)
	}
	// Not a UDP flow, or one that cannot be paced or limited.
	for _, c := range []struct {
		conn       Conn
		body, want string
	}{
		{newFakeConn(), "UDP::max_rate 10", "not UDP"},
		{udpConn{newFakeConn()}, "UDP::max_buf_pkts 10", "cannot be paced"},
		{udpConn{newFakeConn()}, "IP::ingress_rate_limit 10", "cannot be limited"},
	} {
		if _, err := runIn(t, c.conn, c.body); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.body, err, c.want)
		}
	}
	// The commands compile without a warning now.
	r, err := Compile("r", "when CLIENT_ACCEPTED { UDP::max_rate 125000; UDP::max_buf_pkts 10; IP::ingress_rate_limit 5; log local0. \"[UDP::debug_queue] [IP::ingress_drop_rate]\" }")
	if err != nil || len(r.Unsupported()) != 0 {
		t.Fatalf("compile: %v, %v", err, r.Unsupported())
	}
}
