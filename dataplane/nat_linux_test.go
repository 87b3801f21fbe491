//go:build linux

package dataplane

import (
	"errors"
	"net"
	"net/netip"
	"syscall"
	"testing"
	"time"
)

// lastFrom is the source of the last datagram m got.
func (m *udpMember) lastFrom() netip.AddrPort {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.from) == 0 {
		return netip.AddrPort{}
	}
	return m.from[len(m.from)-1]
}

// TestNAT: an ltm nat (originating 127.219.1.10, translation
// 127.219.0.10) takes TCP and UDP on every port of its translation
// address to the same port of its originating address, the member
// seeing the client's own address; a virtual on one port of the
// translation address wins; a connection the originating address opens
// through a virtual leaves from the translation address; the counters
// say so; the NAT's own virtuals are not listed; a disabled NAT
// forwards nothing and translates nothing, and keeps its inbound
// counters, which go on when it is enabled again.
func TestNAT(t *testing.T) {
	if !steerNetns(t) {
		return
	}
	a1 := startServer(t, "127.219.1.10:30001", "A1")
	startServer(t, "127.219.1.10:30002", "A2")
	startServer(t, "127.219.1.20:30009", "P9")
	u3 := startUDPMember(t, "127.219.1.10:30003", "U3")
	startUDPMember(t, "127.219.1.10:30004", "U4")
	out := startServer(t, "127.219.1.30:30011", "O1")
	p, _ := loggedPlane(t)
	cfg := basic("127.219.0.1:30010", "127.219.1.30:30011")
	cfg.Virtuals["/Common/one"] = &Virtual{Name: "/Common/one", Destination: ap("127.219.0.10:30002"), Enabled: true,
		TranslateAddress: true, TranslatePort: true, Pool: "/Common/p9", SNAT: SNAT{Type: SNATNone}}
	cfg.Pools["/Common/p9"] = &Pool{Name: "/Common/p9", LBMode: RoundRobin,
		Members: []Member{{Node: "/Common/127.219.1.20", Addr: ap("127.219.1.20:30009")}}}
	cfg.NATs = []NAT{{Name: "/Common/n1", Orig: netip.MustParseAddr("127.219.1.10"), Xlat: netip.MustParseAddr("127.219.0.10")}}
	mustApply(t, p, cfg)

	// Inbound TCP: the same port of the originating address, the
	// client's own address kept.
	if got := dialFrom(t, "127.219.2.5", "127.219.0.10:30001").mustAsk("hello"); got != "A1 Response" {
		t.Errorf("tcp 30001: %q", got)
	}
	if r := a1.lastRemote(); r.Addr().String() != "127.219.2.5" {
		t.Errorf("tcp 30001: the member saw %v, want the client's address", r)
	}
	if got := dialFrom(t, "127.219.2.5", "127.219.0.10:30002").mustAsk("hello"); got != "P9 Response" {
		t.Errorf("tcp 30002, the port-specific virtual's: %q", got)
	}
	// Inbound UDP on two ports, answered from the port asked.
	if got := dialUDP(t, "127.219.2.6:0", "127.219.0.10:30003").mustAsk("a"); got != "U3:a" {
		t.Errorf("udp 30003: %q", got)
	}
	if r := u3.lastFrom(); r.Addr().String() != "127.219.2.6" {
		t.Errorf("udp 30003: the member saw %v, want the client's address", r)
	}
	if got := dialUDP(t, "127.219.2.6:0", "127.219.0.10:30004").mustAsk("b"); got != "U4:b" {
		t.Errorf("udp 30004: %q", got)
	}
	// Outbound: the originating address through a virtual leaves from
	// the translation address; another client keeps its own.
	if got := dialFrom(t, "127.219.1.10", "127.219.0.1:30010").mustAsk("hello"); got != "O1 Response" {
		t.Errorf("outbound: %q", got)
	}
	if r := out.lastRemote(); r.Addr().String() != "127.219.0.10" {
		t.Errorf("outbound: the member saw %v, want the translation address", r)
	}
	dialFrom(t, "127.219.2.7", "127.219.0.1:30010").mustAsk("hello")
	if r := out.lastRemote(); r.Addr().String() != "127.219.2.7" {
		t.Errorf("another client: the member saw %v, want its own address", r)
	}
	st, ok := p.NAT("/Common/n1")
	if !ok || st.Out != 1 || st.In.TotConns < 3 || !st.Inbound {
		t.Errorf("NAT stats %+v %v: want 1 out, at least 3 in", st, ok)
	}
	inBefore := st.In
	for _, v := range p.Virtuals() {
		if v.Name == NATVirtualName("/Common/n1", false) || v.Name == NATVirtualName("/Common/n1", true) {
			t.Errorf("the NAT's own virtual %s is listed", v.Name)
		}
	}
	for _, pl := range p.Pools() {
		if pl.Name == natPrefix+"/Common/n1" {
			t.Errorf("the NAT's own pool %s is listed", pl.Name)
		}
	}

	// Disabled: nothing forwarded, nothing translated; counters kept.
	cfg.NATs[0].Disabled = true
	mustApply(t, p, cfg)
	d := net.Dialer{Timeout: 5 * time.Second}
	if c, err := d.Dial("tcp", "127.219.0.10:30001"); !errors.Is(err, syscall.ECONNREFUSED) {
		if c != nil {
			c.Close()
		}
		t.Errorf("disabled: %v, want refused", err)
	}
	if got := dialUDP(t, "127.219.2.6:0", "127.219.0.10:30003").ask("c"); got != "" {
		t.Errorf("disabled, udp: %q", got)
	}
	dialFrom(t, "127.219.1.10", "127.219.0.1:30010").mustAsk("hello")
	if r := out.lastRemote(); r.Addr().String() != "127.219.1.10" {
		t.Errorf("disabled, outbound: the member saw %v, want the client's own address", r)
	}
	if st, ok := p.NAT("/Common/n1"); !ok || st.Out != 1 || st.Inbound || st.In.TotConns != inBefore.TotConns || st.In.BitsIn < inBefore.BitsIn || st.In.CurConns != 0 {
		t.Errorf("disabled: stats %+v %v, want the outbound count and the inbound %+v kept", st, ok, inBefore)
	}
	if got := dialFrom(t, "127.219.2.5", "127.219.0.10:30002").mustAsk("hello"); got != "P9 Response" {
		t.Errorf("disabled: the port-specific virtual: %q", got)
	}
	if p.steer != nil {
		t.Error("no NAT enabled: the steering program is still attached")
	}
	// Enabled again: the inbound counters go on from where they were.
	cfg.NATs[0].Disabled = false
	mustApply(t, p, cfg)
	if st, ok := p.NAT("/Common/n1"); !ok || !st.Inbound || st.In.TotConns != inBefore.TotConns {
		t.Errorf("enabled again: stats %+v %v, want the inbound total %d kept", st, ok, inBefore.TotConns)
	}
	if got := dialFrom(t, "127.219.2.5", "127.219.0.10:30001").mustAsk("hello"); got != "A1 Response" {
		t.Errorf("enabled again, tcp 30001: %q", got)
	}
	if st, _ := p.NAT("/Common/n1"); st.In.TotConns != inBefore.TotConns+1 {
		t.Errorf("enabled again: %d inbound connections, want %d", st.In.TotConns, inBefore.TotConns+1)
	}
	// Disabled again and reset: nothing kept from before.
	cfg.NATs[0].Disabled = true
	mustApply(t, p, cfg)
	if st, _ := p.NAT("/Common/n1"); st.In.TotConns != inBefore.TotConns+1 {
		t.Errorf("disabled again: %d inbound connections, want %d", st.In.TotConns, inBefore.TotConns+1)
	}
	p.ResetNATStats("/Common/n1")
	if st, _ := p.NAT("/Common/n1"); st.In.TotConns != 0 || st.Out != 0 {
		t.Errorf("reset while disabled: %+v, want zeros", st)
	}
	// Deleted: no counters.
	cfg.NATs = nil
	mustApply(t, p, cfg)
	if _, ok := p.NAT("/Common/n1"); ok {
		t.Error("deleted: still has stats")
	}
}
