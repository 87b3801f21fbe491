package dataplane

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/mblb"
)

// TestBWCUDPQueue: a burst of datagrams far above a UDP virtual's policy
// passes in part, waits in the flow's queue in part, and the rest is
// dropped and counted; the member's answers come back through the
// policy.
func TestBWCUDPQueue(t *testing.T) {
	vs, member := "127.131.20.1:5300", "127.131.20.2:5300"
	startUDPMember(t, member, "S1")
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	cfg.BWC = map[string]*BWCPolicy{"/Common/slow": {Name: "/Common/slow", MaxRate: 400e3}}
	cfg.Virtuals["/Common/vs"].BWC = "/Common/slow"
	mustApply(t, p, cfg)

	udpBurst(t, nil, vs)
	pol := p.bwc.Policy("/Common/slow")
	eventually(t, "datagrams dropped and passed", func() bool {
		st := pol.Stats()
		return st.DroppedPkts > 0 && st.PassedPkts > 0 && st.Dropped == st.DroppedPkts*1000
	})
}

// TestBWCHTTPVirtual: an http (message-based) virtual's responses pass
// at its policy's rate; without the policy they are not shaped.
func TestBWCHTTPVirtual(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	vs, member := "127.131.21.1:8080", "127.131.21.2:9000"
	body := strings.Repeat("x", 512<<10)
	ln, err := net.Listen("tcp", member)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, body) })}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	p, _ := newPlane(t)
	cfg := basic(vs, member)
	cfg.Virtuals["/Common/vs"].MBLB = &MBLB{Request: mblb.Framing{Mode: mblb.HTTP}}
	cfg.BWC = map[string]*BWCPolicy{"/Common/two": {Name: "/Common/two", MaxRate: 2e6}}
	cfg.Virtuals["/Common/vs"].BWC = "/Common/two"
	mustApply(t, p, cfg)

	get := func() {
		t.Helper()
		cl := &http.Client{Timeout: 60 * time.Second}
		resp, err := cl.Get("http://" + vs + "/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil || len(got) != len(body) {
			t.Fatalf("got %d bytes, %v", len(got), err)
		}
	}
	start := time.Now()
	get()
	if d, want := time.Since(start), atLeast(512<<10, 2e6); d < want {
		t.Fatalf("512 KB through a 2 mbps policy took %v, less than %v", d, want)
	}
	if st := p.bwc.Policy("/Common/two").Stats(); st.Passed < 512<<10 || st.Delayed == 0 {
		t.Fatalf("policy counters %+v", st)
	}
}

// TestBWCUDPRuleAttach: a UDP virtual without a policy whose rule
// attaches its flows (BWC::policy attach, a dynamic policy's session
// named) has a burst far above the policy's rate passed in part and
// dropped in part, counted on the policy; a flow the rule detaches
// again passes all of it, untouched. BWC::debug logs each flow's
// instance.
func TestBWCUDPRuleAttach(t *testing.T) {
	vs, member := "127.159.20.1:5300", "127.159.20.2:5300"
	startUDPMember(t, member, "S1")
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	cfg.BWC = map[string]*BWCPolicy{"/Common/slow": {Name: "/Common/slow", MaxRate: 400e3, MaxUserRate: 400e3, Dynamic: true,
		Mark: BWCMark{TOS: -1, QoS: -1}}}
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
		BWC::policy attach slow [IP::client_addr]
		BWC::debug start
		if { [IP::client_addr] eq "127.159.20.9" } { BWC::policy detach slow }
	}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	pol := p.bwc.Policy("/Common/slow")

	udpBurst(t, net.UDPAddrFromAddrPort(ap("127.159.20.9:0")), vs)
	if st := pol.Stats(); st.PassedPkts != 0 || st.DroppedPkts != 0 {
		t.Fatalf("a detached flow was counted on the policy: %+v", st)
	}
	udpBurst(t, net.UDPAddrFromAddrPort(ap("127.159.20.8:0")), vs)
	eventually(t, "datagrams dropped and passed", func() bool {
		st := pol.Stats()
		return st.DroppedPkts > 0 && st.PassedPkts > 0 && st.Dropped == st.DroppedPkts*1000
	})
	eventually(t, "the session's instance", func() bool { return pol.Instances() == 1 })
	// BWC::debug logged each flow's instance as it was attached.
	for _, who := range []string{"127.159.20.9", "127.159.20.8"} {
		if !strings.Contains(lg.String(), "BWC::debug start: policy /Common/slow session "+who+" level 0 user-rate 400000 bps policy-rate ") {
			t.Errorf("no BWC::debug line of %s in\n%s", who, lg)
		}
	}
}

// udpBurst sends 300 datagrams of 1000 bytes from from (nil: any local
// address) to the virtual vs, faster than its bandwidth policy lets
// through, and waits for the member's first answer (S1:burst).
func udpBurst(t *testing.T, from *net.UDPAddr, vs string) {
	t.Helper()
	c, err := net.DialUDP("udp", from, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	d := make([]byte, 1000)
	copy(d, "burst")
	for range 300 {
		c.Write(d)
	}
	c.SetReadDeadline(time.Now().Add(20 * time.Second))
	buf := make([]byte, 2048)
	n, err := c.Read(buf)
	if err != nil || !strings.HasPrefix(string(buf[:n]), "S1:burst") {
		t.Fatalf("answer %q, %v", buf[:n], err)
	}
}
