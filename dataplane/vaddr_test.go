package dataplane

import (
	"net/http"
	"strings"
	"testing"

	"github.com/openltm/openltm/dataplane/mblb"
)

// twoOnOneAddress is two L4 virtuals on one address (ports 80 and 81)
// over one echo member, both under the virtual address a.
func twoOnOneAddress(t *testing.T, addr, member string, a *VirtualAddress) *Config {
	t.Helper()
	cfg := basic(addr+":80", member)
	v2 := *cfg.Virtuals["/Common/vs"]
	v2.Name, v2.Destination = "/Common/vs2", ap(addr+":81")
	cfg.Virtuals["/Common/vs2"] = &v2
	cfg.Virtuals["/Common/vs"].Address, v2.Address = a, a
	return cfg
}

// TestVirtualAddressDisabled: enabled no on the address resets new
// connections to both its virtuals while an open one goes on, shows them
// disabled-by-parent, and enabled yes restores them.
func TestVirtualAddressDisabled(t *testing.T) {
	const addr, member = "127.76.1.1", "127.76.1.10:9000"
	startServer(t, member, "S1")
	p, _ := newPlane(t)
	on := &VirtualAddress{Name: "/Common/" + addr, Enabled: true}
	mustApply(t, p, twoOnOneAddress(t, addr, member, on))
	open := dialVS(t, addr+":80")
	open.mustAsk("before")

	off := &VirtualAddress{Name: "/Common/" + addr, Enabled: false}
	mustApply(t, p, twoOnOneAddress(t, addr, member, off))
	for _, vs := range []string{addr + ":80", addr + ":81"} {
		if err := tryAsk("", vs); err == nil {
			t.Fatalf("%s answered with its virtual address disabled", vs)
		}
	}
	if got := open.mustAsk("during"); got != "S1 Response" {
		t.Fatalf("the open connection got %q", got)
	}
	for _, name := range []string{"/Common/vs", "/Common/vs2"} {
		st, _ := p.Virtual(name)
		if st.Status.State != "disabled-by-parent" || !strings.HasSuffix(st.Status.Reason, ", "+reasonVAddrDisabled) {
			t.Fatalf("%s: status %+v, want disabled-by-parent", name, st.Status)
		}
	}
	// The virtual's own disabled wins over its parent's.
	cfg := twoOnOneAddress(t, addr, member, off)
	cfg.Virtuals["/Common/vs2"].Enabled = false
	mustApply(t, p, cfg)
	if st, _ := p.Virtual("/Common/vs2"); st.Status.State != "disabled" {
		t.Fatalf("a disabled virtual on a disabled address: %+v", st.Status)
	}

	mustApply(t, p, twoOnOneAddress(t, addr, member, on))
	for _, vs := range []string{addr + ":80", addr + ":81"} {
		if err := tryAsk("", vs); err != nil {
			t.Fatalf("%s after enabled yes: %v", vs, err)
		}
	}
	if st, _ := p.Virtual("/Common/vs"); st.Status.State != "enabled" {
		t.Fatalf("after enabled yes: %+v", st.Status)
	}
}

// TestVirtualAddressConnectionLimit: the address's connection-limit caps
// its L4 and HTTP virtuals together; past it new connections are reset
// and counted, and a connection that ends makes room again.
func TestVirtualAddressConnectionLimit(t *testing.T) {
	const addr = "127.76.2.1"
	const echo, web = "127.76.2.10:9000", "127.76.2.11:80"
	startServer(t, echo, "S1")
	startCookieMember(t, web, "W")
	p, _ := newPlane(t)
	a := &VirtualAddress{Name: "/Common/" + addr, Enabled: true, ConnectionLimit: 2}
	cfg := twoOnOneAddress(t, addr, echo, a)
	// An HTTP (message-based) virtual on port 82 over its own pool.
	h := l7Config(t, addr+":82", false, mblb.HTTPOptions{}, "", web)
	hv := h.Virtuals["/Common/vs"]
	hv.Name, hv.Pool, hv.Address = "/Common/web", "/Common/webpool", a
	wp := h.Pools["/Common/pool"]
	wp.Name = "/Common/webpool"
	cfg.Virtuals["/Common/web"], cfg.Pools["/Common/webpool"] = hv, wp
	mustApply(t, p, cfg)

	c1 := dialVS(t, addr+":80")
	c1.mustAsk("one")
	hc := dialHTTPVS(t, addr+":82")
	if r, body, err := hc.do(httpReq("h", "/x")); err != nil || r.StatusCode != http.StatusOK || !strings.HasPrefix(body, "W ") {
		t.Fatalf("the HTTP virtual: %v %q", err, body)
	}
	for _, vs := range []string{addr + ":80", addr + ":81"} {
		if err := tryAsk("", vs); err == nil {
			t.Fatalf("%s answered a third connection over the address's limit of 2", vs)
		}
	}
	c := p.VirtualAddressCounts()["/Common/"+addr]
	if c.Current != 2 || c.ConnectionLimit != 2 || c.LimitReset != 2 || !c.AtLimit() {
		t.Fatalf("counts %+v, want 2 current, limit 2, 2 reset", c)
	}
	st, _ := p.Virtual("/Common/vs2")
	if st.Status.Availability != Unavailable || st.Status.Reason != reasonVAddrLimit {
		t.Fatalf("vs2 at its address's limit: %+v", st.Status)
	}
	if st.ClientSide.TotConns != 0 || st.ClientSide.CurConns != 0 {
		t.Fatalf("vs2 counted the connection its address refused: %+v", st.ClientSide)
	}

	// The HTTP client leaves: room for one more, on either virtual.
	hc.c.Close()
	eventually(t, "the HTTP client's end counted", func() bool {
		return p.VirtualAddressCounts()["/Common/"+addr].Current == 1
	})
	c2 := dialVS(t, addr+":81")
	c2.mustAsk("two")
	c1.c.Close()
	eventually(t, "the L4 client's end counted", func() bool {
		return p.VirtualAddressCounts()["/Common/"+addr].Current == 1
	})
	if err := tryAsk("", addr+":80"); err != nil {
		t.Fatalf("a connection under the limit: %v", err)
	}

	// Without the limit the address no longer counts; closing a
	// connection admitted under it still gives its count back.
	// (A new configuration: the plane's snapshots hold the applied one.)
	a2 := &VirtualAddress{Name: "/Common/" + addr, Enabled: true}
	next := *cfg
	next.Virtuals = map[string]*Virtual{}
	for name, v := range cfg.Virtuals {
		c := *v
		c.Address = a2
		next.Virtuals[name] = &c
	}
	mustApply(t, p, &next)
	if _, ok := p.VirtualAddressCounts()["/Common/"+addr]; ok {
		t.Fatal("an address without limit or disable still has a count")
	}
	for i := 0; i < 3; i++ {
		if err := tryAsk("", addr+":80"); err != nil {
			t.Fatalf("connection %d without a limit: %v", i, err)
		}
	}
	c2.mustAsk("still")
}

// TestVirtualAddressUDP: a UDP virtual obeys its address too: its flows
// count against the limit the address's TCP virtual shares, and a
// disabled address answers no datagram.
func TestVirtualAddressUDP(t *testing.T) {
	const addr = "127.76.12.1"
	startUDPMember(t, "127.76.12.2:5300", "U1")
	startServer(t, "127.76.12.3:9000", "T1")
	p, _ := newPlane(t)
	build := func(a *VirtualAddress) *Config {
		cfg := udpBasic(addr+":53", "127.76.12.2:5300")
		tcp := basic(addr+":53", "127.76.12.3:9000")
		tv := tcp.Virtuals["/Common/vs"]
		tv.Name, tv.Pool = "/Common/tcp_vs", "/Common/tcp_pool"
		tp := tcp.Pools["/Common/pool"]
		tp.Name = "/Common/tcp_pool"
		cfg.Virtuals["/Common/tcp_vs"], cfg.Pools["/Common/tcp_pool"] = tv, tp
		cfg.Virtuals["/Common/vs"].Address, tv.Address = a, a
		return cfg
	}
	mustApply(t, p, build(&VirtualAddress{Name: "/Common/" + addr, Enabled: true, ConnectionLimit: 1}))
	u := dialUDP(t, "", addr+":53")
	if got := u.mustAsk("q"); got != "U1:q" {
		t.Fatalf("udp answer %q", got)
	}
	// The UDP flow holds the address's only connection: TCP is reset.
	if err := tryAsk("", addr+":53"); err == nil {
		t.Fatal("a TCP connection past the address's limit held by a UDP flow answered")
	}
	if c := p.VirtualAddressCounts()["/Common/"+addr]; c.Current != 1 || c.LimitReset != 1 {
		t.Fatalf("counts %+v", c)
	}
	// Disabled: a new UDP client gets no answer, then enabled again one.
	mustApply(t, p, build(&VirtualAddress{Name: "/Common/" + addr}))
	if got := dialUDP(t, "", addr+":53").ask("x"); got != "" {
		t.Fatalf("a disabled address answered %q", got)
	}
	mustApply(t, p, build(&VirtualAddress{Name: "/Common/" + addr, Enabled: true}))
	if got := dialUDP(t, "", addr+":53").mustAsk("y"); got != "U1:y" {
		t.Fatalf("after enabled yes: %q", got)
	}
}
