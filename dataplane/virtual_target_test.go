package dataplane

import (
	"strings"
	"testing"
)

// TestRulesVirtualTarget: `virtual NAME` in CLIENT_ACCEPTED hands the
// connection to another virtual server (VIP targeting VIP), which serves
// it with its own rules and pool; two rules naming each other end in a
// reset after a bounded number of hand-offs, and the command in
// CLIENT_DATA once a member was connected is a rule error that resets
// only that connection (before one, it hands the client on:
// TestRulesVirtualTargetData).
func TestRulesVirtualTarget(t *testing.T) {
	t.Parallel()
	startServer(t, "127.0.249.2:9000", "S1")
	startServer(t, "127.0.249.3:9000", "S2")
	startServer(t, "127.0.249.4:9000", "S3")
	p, plog := newPlane(t)
	cfg := basic("127.0.249.1:8000", "127.0.249.2:9000")
	withPool(cfg, "/Common/b_pool", "127.0.249.3:9000")
	withPool(cfg, "/Common/b_other", "127.0.249.4:9000")
	a := cfg.Virtuals["/Common/vs"]
	addVS := func(name, dest, pool string) *Virtual {
		v := *a
		v.Name, v.Destination, v.Pool, v.Rules = name, ap(dest), pool, nil
		cfg.Virtuals[name] = &v
		return &v
	}
	var lgA, lgB *ruleLog
	a.Rules, lgA = compileRules(t, `when CLIENT_ACCEPTED {
    if { [TCP::local_port] == 8000 } { virtual vs_b }
}`)
	b := addVS("/Common/vs_b", "127.0.249.1:8001", "/Common/b_pool")
	// B's own rule runs on the handed connection, and sees its own name.
	b.Rules, lgB = compileRules(t, `when CLIENT_ACCEPTED {
    log local0. "in [virtual name] from [IP::client_addr]"
    TCP::collect
}
when CLIENT_DATA {
    if { [TCP::payload] starts_with "other" } { pool b_other }
    TCP::release
}`)
	c := addVS("/Common/vs_c", "127.0.249.1:8002", "/Common/pool")
	c.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { virtual vs_d }`)
	d := addVS("/Common/vs_d", "127.0.249.1:8003", "/Common/pool")
	d.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { virtual vs_c }`)
	late := addVS("/Common/vs_late", "127.0.249.1:8004", "/Common/pool")
	late.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "switch" } { virtual vs_b }
    TCP::release
    TCP::collect
}`)
	nowhere := addVS("/Common/vs_nowhere", "127.0.249.1:8005", "/Common/pool")
	nowhere.Rules, _ = compileRules(t, `when CLIENT_ACCEPTED { virtual no_such_vs }`)
	mustApply(t, p, cfg)
	lgA.showOnFailure(t)
	lgB.showOnFailure(t)

	cl := dialVS(t, "127.0.249.1:8000")
	if got := cl.mustAsk("hello"); got != "S2 Response" {
		t.Fatalf("handed to vs_b: %q, want vs_b's pool", got)
	}
	// Both virtuals list the client while it is served.
	eventually(t, "a flow on each virtual", func() bool {
		return len(flowsOf(p, "/Common/vs")) == 1 && len(flowsOf(p, "/Common/vs_b")) == 1
	})
	if r := flowsOf(p, "/Common/vs_b")[0]; r.SSServer != ap("127.0.249.3:9000") {
		t.Fatalf("vs_b's flow: %+v", r)
	}
	if got := once(t, "127.0.249.1:8000"); got != "S2 Response" {
		t.Fatalf("second client: %q", got)
	}
	if !strings.Contains(lgB.String(), "in /Common/vs_b from 127.0.0.1") {
		t.Fatalf("vs_b's rule did not run as vs_b:\n%s", lgB)
	}
	cl2 := dialVS(t, "127.0.249.1:8000")
	if got := cl2.mustAsk("other"); got != "S3 Response" {
		t.Fatalf("vs_b's CLIENT_DATA choice: %q", got)
	}

	for _, tc := range []struct{ dest, why string }{
		{"127.0.249.1:8002", "two virtuals handing to each other"},
		{"127.0.249.1:8004", "virtual in CLIENT_DATA after a member was connected"},
		{"127.0.249.1:8005", "a virtual server that does not exist"},
	} {
		if tc.dest == "127.0.249.1:8004" {
			k := dialVS(t, tc.dest)
			if got := k.mustAsk("first"); got != "S1 Response" {
				t.Fatalf("vs_late before switching: %q", got)
			}
			if _, err := k.ask("switch"); err == nil {
				t.Errorf("%s: the connection was answered", tc.why)
			}
			continue
		}
		if !unanswered(t, tc.dest, "x") {
			t.Errorf("%s: the connection was answered", tc.why)
		}
	}
	eventually(t, "the hand-off loop logged", func() bool {
		return strings.Contains(plog.String(), "has been handed on 4 times; reset")
	})
	eventually(t, "the refused flows to end", func() bool {
		return len(flowsOf(p, "/Common/vs_c"))+len(flowsOf(p, "/Common/vs_d"))+
			len(flowsOf(p, "/Common/vs_late"))+len(flowsOf(p, "/Common/vs_nowhere")) == 0
	})
}
