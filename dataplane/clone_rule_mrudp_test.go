package dataplane

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mrf"
	"github.com/openltm/openltm/dataplane/mrfsip"
)

// TestRuleCloneMRUDP: on a UDP virtual with SIP message routing a
// rule's clone in MR_INGRESS copies the client's datagrams from the one
// it ran over: the second request starts the copy, so the clone members
// get it and the third, not the first, as the client sent them on both
// sides (its messages go to peers the router picks, not to one
// member); a clone in MR_EGRESS, over an answer, is skipped and counted
// as dropped while the client is answered.
func TestRuleCloneMRUDP(t *testing.T) {
	t.Parallel()
	const base = "127.217.40."
	startSIPUDPMember(t, base+"1:25070", "S1")
	cs := startUDPCollector(t, base+"2:25071")
	ss := startUDPCollector(t, base+"3:25072")
	p, _ := newPlane(t)
	cfg := udpBasic(base+"10:25060", base+"1:25070")
	addClonePool(cfg, "/Common/cs", base+"2:25071")
	addClonePool(cfg, "/Common/ss", base+"3:25072")
	// The clone pools are the rule's, not the virtual's.
	cfg.Virtuals["/Common/vs"].Clone = nil
	v := cfg.Virtuals["/Common/vs"]
	v.MRF = &mrf.Config{Protocol: "/Common/sess", Router: "/Common/rt", UDP: true, Idle: time.Minute, DefaultPool: "/Common/pool",
		Proto: mrfsip.New(&mrfsip.Session{InsertVia: true, UDP: true, Host: base + "10:25060", Salt: 5}),
		Peers: map[string]*mrf.Peer{}, Transports: map[string]*mrf.Transport{}}
	r, _ := compileRules(t, "when CLIENT_ACCEPTED {\n set n 0\n}\n"+
		"when MR_INGRESS {\n incr n\n if { $n == 2 } {\n  clone pool /Common/cs\n  serverside { clone pool /Common/ss }\n }\n}\n"+
		"when MR_EGRESS {\n if { $n == 3 } { clone pool /Common/cs }\n}")
	setVirtualRules(cfg, "/Common/vs", r)
	mustApply(t, p, cfg)

	u := dialUDP(t, base+"9:0", base+"10:25060")
	var sent []string
	for i, id := range []string{"one", "two", "three"} {
		req := sipReq("OPTIONS", id, id, i+1, "")
		sent = append(sent, req)
		if a := u.mustAsk(req); !strings.HasPrefix(a, "SIP/2.0 200 ") || sipField(sipHead(a), "Call-ID") != id {
			t.Fatalf("%s: answer %q", id, a)
		}
	}
	eventually(t, "both clone members got the datagrams from the second on", func() bool {
		return len(cs.datagrams()) == 2 && len(ss.datagrams()) == 2
	})
	for _, c := range []*udpCollector{cs, ss} {
		if got := c.datagrams(); !slices.Equal(got, sent[1:]) {
			t.Errorf("clone got %q, want the second and third requests as sent %q", got, sent[1:])
		}
	}
	eventually(t, "clone counters", func() bool {
		st, _ := p.Virtual("/Common/vs")
		return st.Clone != nil && st.Clone.Conns == 2 && st.Clone.Dropped == 1
	})
}
