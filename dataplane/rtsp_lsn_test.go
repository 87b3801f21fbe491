package dataplane

import (
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/rtsp"
)

// TestRTSPProfileLSN: on an rtsp virtual with an lsn pool, a SETUP's
// data channel on the member's side takes translations of the pool, an
// even RTP port and the next for RTCP, on the control connection's
// translation address (the member is told them in client_port); the
// member's RTP reaches the client through them; TEARDOWN gives them
// back. A pool with no port left for the channel resets the control
// connection and counts the failure.
func TestRTSPProfileLSN(t *testing.T) {
	t.Parallel()
	m1 := rtspMember(t, "127.216.0.71:28554", "member-1")
	p, _ := newPlane(t)
	cfg := basic("127.216.0.70:28554", m1.Addr())
	delete(cfg.Virtuals, "/Common/vs")
	cg := netip.MustParsePrefix("127.216.70.0/30")
	cfg.LSN = map[string]*LSNPool{
		"/Common/cg":  {Name: "/Common/cg", Mode: "napt", Members: []netip.Prefix{cg}, PortLow: 29000, PortHigh: 29999},
		"/Common/one": {Name: "/Common/one", Mode: "napt", Members: []netip.Prefix{netip.MustParsePrefix("127.216.71.1/32")}, PortLow: 29500, PortHigh: 29500, Persist: "none"},
	}
	for name, v := range map[string][2]string{"/Common/v": {"127.216.0.72:28554", "/Common/cg"}, "/Common/v_one": {"127.216.0.73:28554", "/Common/one"}} {
		cfg.Virtuals[name] = &Virtual{Name: name, Destination: ap(v[0]), Enabled: true, TranslateAddress: true, TranslatePort: true,
			Pool: "/Common/pool", SNAT: SNAT{Type: SNATLSN, Pool: v[1]}, RTSP: &rtsp.Options{Profile: "/Common/rtsp", Idle: 30 * time.Second}}
	}
	mustApply(t, p, cfg)
	lp := p.LSNPool("/Common/cg")

	const from, vs = "127.216.1.70", "127.216.0.72:28554"
	cs, cp := udpPair(t, from)
	url := "rtsp://" + vs + "/media"
	setup := rtspDial(t, from, vs)
	ans := setup.do("SETUP", url+"/track1", "Transport: RTP/AVP;unicast;client_port="+cp.String())
	transportOf(t, ans)
	sess := ans.Session()
	var told string
	for _, r := range m1.Requests() {
		if r.Method == "SETUP" {
			told, _ = r.Get("Transport")
		}
	}
	specs := rtsp.ParseTransport(told)
	if len(specs) != 1 {
		t.Fatalf("the member was told %q", told)
	}
	mv, _ := specs[0].Get("client_port")
	mp, ok := rtsp.ParsePorts(mv)
	if !ok || mp.First%2 != 0 || mp.Last != mp.First+1 || mp.First < 29000 || mp.Last > 29999 {
		t.Errorf("the member was told client_port %q, want an even and odd pair of the pool's range", mv)
	}
	if n := lp.Stats.Active.Load(); n != 3 {
		t.Errorf("%d translations active, want 3: the control connection's and the channel's two", n)
	}
	play := rtspDial(t, from, vs)
	if r := play.do("PLAY", url, "Session: "+sess, "Range: npt=0.000-"); r.Status != 200 {
		t.Fatalf("PLAY: %d %s", r.Status, r.Reason)
	}
	if payload, _ := recvRTP(t, cs[0]); payload != "member-1" {
		t.Errorf("media %q", payload)
	}
	down := play.do("TEARDOWN", url, "Session: "+sess)
	if down.Status != 200 {
		t.Fatalf("TEARDOWN: %d", down.Status)
	}
	setup.c.Close()
	play.c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for lp.Stats.Active.Load() != 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := lp.Stats.Active.Load(); n != 0 {
		t.Errorf("%d translations active after TEARDOWN and the connections' end", n)
	}

	// One port, the control connection's: the channel gets none.
	one := p.LSNPool("/Common/one")
	_, cp2 := udpPair(t, "127.216.1.71")
	c := rtspDial(t, "127.216.1.71", "127.216.0.73:28554")
	m := &rtsp.Message{Request: true, Method: "SETUP", URI: "rtsp://127.216.0.73:28554/media/track1", Version: "RTSP/1.0"}
	m.Add("CSeq", "1")
	m.Add("Transport", "RTP/AVP;unicast;client_port="+cp2.String())
	c.c.SetDeadline(time.Now().Add(10 * time.Second))
	c.c.Write(m.Encode(nil))
	var r rtsp.Message
	if _, err := c.rd.Next(&r); err == nil {
		t.Errorf("no port for the channel: answered %d %s, want the connection reset", r.Status, r.Reason)
	}
	if n := one.Stats.Failures.Load(); n != 1 {
		t.Errorf("failures %d, want 1", n)
	}
}
