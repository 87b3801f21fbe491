package dataplane

import (
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// listenRule opens a related listener for the client in CLIENT_ACCEPTED
// and tells the client where it is, as a control protocol tells its
// client the data port: "DATA addr port".
const listenRule = `when CLIENT_ACCEPTED {
    set l [listen {
        proto [IP::protocol]
        timeout %TIMEOUT%
        server 127.152.1.3 2000
        allow [IP::client_addr]
    }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`

// listenVS starts the control member, the data member and a virtual
// whose rule opens a listener with the given timeout.
func listenVS(t *testing.T, timeout string) *Plane {
	t.Helper()
	startServer(t, "127.152.1.2:21", "C")
	startServer(t, "127.152.1.3:2000", "D")
	p, _ := newPlane(t)
	cfg := basic("127.152.1.1:21", "127.152.1.2:21")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, strings.ReplaceAll(listenRule, "%TIMEOUT%", timeout))
	mustApply(t, p, cfg)
	return p
}

// dataAddr reads the rule's "DATA addr port" line off the control
// connection.
func dataAddr(t *testing.T, c *client) string {
	t.Helper()
	line, err := c.r.ReadString('\n')
	f := strings.Fields(line)
	if err != nil || len(f) != 3 || f[0] != "DATA" {
		t.Fatalf("control connection: %q %v", line, err)
	}
	return net.JoinHostPort(f[1], f[2])
}

// bindable reports whether addr can be bound: its listener closed.
func bindable(addr string) bool {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return false
	}
	ln.Close()
	return true
}

// TestListenDataChannel: a rule's listen on a standard virtual opens a
// listener on the virtual's address; the client's second connection to
// it reaches the rule's server (a real member other than the pool's),
// as a flow of the virtual, while the control connection goes on to the
// pool's member. The listener takes one connection: it is closed after.
func TestListenDataChannel(t *testing.T) {
	p := listenVS(t, "30")
	ctl := dialVS(t, "127.152.1.1:21")
	data := dataAddr(t, ctl)
	if !strings.HasPrefix(data, "127.152.1.1:") {
		t.Fatalf("listener at %s, want the virtual's address", data)
	}
	dc := dialVS(t, data)
	if got := dc.mustAsk("list"); got != "D Response" {
		t.Errorf("data connection: %q, want the rule's server", got)
	}
	if got := ctl.mustAsk("hello"); got != "C Response" {
		t.Errorf("control connection: %q, want the pool's member", got)
	}
	related := false
	for _, r := range flowsOf(p, "/Common/vs") {
		if r.SSServer == ap("127.152.1.3:2000") {
			related = true
		}
	}
	if !related {
		t.Errorf("no flow of the virtual to the rule's server: %+v", flowsOf(p, "/Common/vs"))
	}
	eventually(t, "the listener to close after its one connection", func() bool { return bindable(data) })
}

// TestListenTimeout: a listener nobody connects to closes after its
// timeout, while its connection goes on.
func TestListenTimeout(t *testing.T) {
	listenVS(t, "1")
	ctl := dialVS(t, "127.152.1.1:21")
	data := dataAddr(t, ctl)
	eventually(t, "the listener to close after its timeout", func() bool { return bindable(data) })
	if err := tryAsk("", data); err == nil {
		t.Error("the closed listener's address still answered")
	}
	if got := ctl.mustAsk("hello"); got != "C Response" {
		t.Errorf("control connection: %q", got)
	}
}

// TestListenAllowAndOwner: a connection from an address the rule does not
// allow is reset and the listener keeps waiting for the allowed one; a
// listener outlives the connection that opened it (a client may close
// its control connection before it opens the one it was told of).
func TestListenAllowAndOwner(t *testing.T) {
	p := listenVS(t, "60")
	ctl := dialFrom(t, "127.152.2.1", "127.152.1.1:21")
	data := dataAddr(t, ctl)
	if err := tryAsk("127.152.2.2", data); err == nil {
		t.Error("a connection from a foreign address was served")
	}
	if got := dialFrom(t, "127.152.2.1", data).mustAsk("list"); got != "D Response" {
		t.Errorf("allowed data connection: %q", got)
	}

	ctl2 := dialFrom(t, "127.152.2.1", "127.152.1.1:21")
	data2 := dataAddr(t, ctl2)
	if got := ctl2.mustAsk("bye"); got != "C Response" {
		t.Fatalf("control connection: %q", got)
	}
	from := ap(ctl2.c.LocalAddr().String())
	ctl2.c.Close()
	eventually(t, "the control connection's flow to end", func() bool {
		for _, r := range flowsOf(p, "/Common/vs") {
			if r.CSClient == from {
				return false
			}
		}
		return true
	})
	if got := dialFrom(t, "127.152.2.1", data2).mustAsk("list"); got != "D Response" {
		t.Errorf("data connection after the control connection ended: %q", got)
	}
}

// TestListenUDP: proto 17 makes a UDP listener; the client's datagrams
// reach the rule's server, a real UDP service, and its answers come back
// from the listener's address.
func TestListenUDP(t *testing.T) {
	startServer(t, "127.152.5.2:21", "C")
	udpService(t, "127.152.5.3:5000", func(from netip.AddrPort, b []byte) []byte { return append([]byte("U "), b...) })
	p, _ := newPlane(t)
	cfg := basic("127.152.5.1:21", "127.152.5.2:21")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_ACCEPTED {
    set l [listen { proto 17; timeout 30; server 127.152.5.3 5000; allow [IP::client_addr] }]
    TCP::respond "DATA [lindex $l 0] [lindex $l 1]\n"
}`)
	mustApply(t, p, cfg)
	ctl := dialFrom(t, "127.152.5.9", "127.152.5.1:21")
	data := dataAddr(t, ctl)
	uc, err := net.DialUDP("udp", net.UDPAddrFromAddrPort(ap("127.152.5.9:0")), net.UDPAddrFromAddrPort(ap(data)))
	if err != nil {
		t.Fatal(err)
	}
	defer uc.Close()
	b := make([]byte, 2048)
	for i, msg := range []string{"ping", "again"} {
		uc.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := uc.Write([]byte(msg)); err != nil {
			t.Fatal(err)
		}
		n, err := uc.Read(b)
		if err != nil || string(b[:n]) != "U "+msg {
			t.Fatalf("datagram %d: %q %v", i, b[:n], err)
		}
	}
}

// TestListenOnUDPVirtual: a UDP virtual's rule opens a UDP listener for
// its client, which reaches the rule's server through it; a TCP
// listener is refused there (the client's datagram then goes on).
func TestListenOnUDPVirtual(t *testing.T) {
	startUDPMember(t, "127.152.7.2:5300", "M")
	startUDPMember(t, "127.152.7.3:5400", "R")
	p, _ := newPlane(t)
	cfg := udpBasic("127.152.7.1:53", "127.152.7.2:5300")
	cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(t, `when CLIENT_DATA {
    if { [UDP::payload] eq "open" } {
        set l [listen { proto 17; server 127.152.7.3 5400; allow [IP::client_addr] }]
        UDP::respond "DATA [lindex $l 0] [lindex $l 1]"
        UDP::drop
    } elseif { [UDP::payload] eq "tcp" } {
        UDP::respond [catch { listen { proto 6; server 127.152.7.3 5400 } }]
        UDP::drop
    }
}`)
	mustApply(t, p, cfg)
	c := dialUDP(t, "127.152.7.9:0", "127.152.7.1:53")
	f := strings.Fields(c.mustAsk("open"))
	if len(f) != 3 || f[0] != "DATA" || f[1] != "127.152.7.1" {
		t.Fatalf("rule's answer %q", f)
	}
	rel := dialUDP(t, "127.152.7.9:0", net.JoinHostPort(f[1], f[2]))
	if got := rel.mustAsk("hello"); got != "R:hello" {
		t.Errorf("related datagram: %q, want the rule's server", got)
	}
	if got := c.mustAsk("tcp"); got != "1" {
		t.Errorf("a TCP listener on a UDP virtual: %q, want a Tcl error", got)
	}
	if got := c.mustAsk("plain"); got != "M:plain" {
		t.Errorf("the virtual's own traffic: %q", got)
	}
}
