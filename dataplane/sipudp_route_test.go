package dataplane

import (
	"strings"
	"testing"
)

// TestSIPUDPRoute: on a UDP SIP virtual between real UDP clients and
// members, SIP::route sends one request to another pool (peer) or to an
// address no pool has (host), the next request without it balancing as
// before; SIP::message replaces the whole request the member gets;
// SIP::record-route and SIP::route_status read as the message moves.
func TestSIPUDPRoute(t *testing.T) {
	t.Parallel()
	s1 := startSIPUDPMember(t, "127.95.1.1:5070", "S1")
	s2 := startSIPUDPMember(t, "127.95.1.2:5070", "S2")
	s3 := startSIPUDPMember(t, "127.95.1.3:5070", "S3")
	p, _ := newPlane(t)
	cfg := udpBasic("127.95.1.10:5060", "127.95.1.1:5070")
	cfg.Pools["/Common/other"] = &Pool{Name: "/Common/other", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.95.1.2", Addr: ap("127.95.1.2:5070")}}}
	cfg.Virtuals["/Common/vs"].SIP = &SIPDatagram{}
	r, _ := compileRules(t, `when SIP_REQUEST {
  switch [SIP::header X-Go] {
    peer { SIP::route peer /Common/other }
    host { SIP::route host 127.95.1.3:5070 }
    msg { SIP::message [string map {"OPTIONS sip:" "INFO sip:"} [SIP::message]] }
  }
  SIP::header insert X-Status [SIP::route_status]
}
when SIP_REQUEST_SEND { SIP::header insert X-Sent "[SIP::route_status] [SIP::record-route]" }`)
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)
	u := dialUDP(t, "127.95.9.10:0", "127.95.1.10:5060")
	req := func(id, extra string) string {
		return strings.Replace(sipReq("OPTIONS", id, id, 1, extra), "127.62.9.9:5060", "127.95.9.10:5060", 1)
	}
	for i, c := range []struct {
		id, extra, member, method string
	}{
		{"r1", "", "S1", "OPTIONS"},
		{"r2", "X-Go: peer\r\n", "S2", "OPTIONS"},
		{"r3", "X-Go: host\r\nRecord-Route: <sip:127.95.9.20;lr>\r\n", "S3", "OPTIONS"},
		{"r4", "", "S1", "OPTIONS"},
		{"r5", "X-Go: msg\r\n", "S1", "INFO"},
	} {
		a := sipHead(u.mustAsk(req(c.id, c.extra)))
		if m := sipField(a, "X-Member"); m != c.member {
			t.Fatalf("request %d (%s) answered by %q, want %s:\n%s", i, c.id, m, c.member, a)
		}
		var seen *sipSeen
		for _, s := range append(append(s1.seen(), s2.seen()...), s3.seen()...) {
			if s.callID == c.id {
				seen = &s
			}
		}
		if seen == nil {
			t.Fatalf("no member saw %s", c.id)
		}
		if seen.method != c.method || sipField(seen.head, "X-Status") != "unprocessed" {
			t.Fatalf("%s reached the member as %s with X-Status %q:\n%s", c.id, seen.method, sipField(seen.head, "X-Status"), seen.head)
		}
		wantSent := "route found"
		if strings.Contains(c.extra, "Record-Route") {
			wantSent += " <sip:127.95.9.20;lr>"
		}
		if got := sipField(seen.head, "X-Sent"); got != wantSent {
			t.Fatalf("%s's X-Sent %q, want %q", c.id, got, wantSent)
		}
	}
	if n := len(s3.seen()); n != 1 {
		t.Fatalf("the host member saw %d requests, want the one routed to it", n)
	}
}
