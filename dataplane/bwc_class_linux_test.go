//go:build linux

package dataplane

import (
	"context"
	"io"
	"net"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The bandwidth controllers' classes: categories (BWC::color), priority
// levels (BWC::priority) and marking (ip-tos, link-qos, BWC::mark). The
// members are real TCP servers; the marking is read from the member's
// accepted socket (the SYN it kept, TCP_SAVED_SYN), the rates as lower
// bounds on a transfer's time, never upper ones.

// downloadFrom is download from a client bound to src.
func downloadFrom(t *testing.T, src, vs string, n int) {
	t.Helper()
	d := net.Dialer{Timeout: 10 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}}
	c, err := d.Dial("tcp", vs)
	if err != nil {
		t.Error(err)
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(60 * time.Second))
	if _, err := io.WriteString(c, itoa(n)+"\n"); err != nil {
		t.Error(err)
		return
	}
	if got, err := io.CopyN(io.Discard, c, int64(n)); err != nil {
		t.Errorf("download of %d bytes: %d read: %v", n, got, err)
	}
}

// TestBWCMarking: the member's SYN carries the ToS of the flow's
// policy, of the category a rule put the flow in, or of BWC::mark.
func TestBWCMarking(t *testing.T) {
	const vs, member = "127.134.1.1:8000", "127.134.1.2:9000"
	syns := synMember(t, member)
	p, _ := newPlane(t)
	pol := &BWCPolicy{Name: "/Common/cat", MaxRate: 100e6, MaxUserRate: 100e6, Dynamic: true, Mark: BWCMark{TOS: 0x20, QoS: 3},
		Categories: []BWCCategory{{Name: "video", MaxRate: 50e6, Mark: BWCMark{TOS: 0x48, QoS: -1}}}}
	for _, c := range []struct {
		name, rule string
		want       uint8
	}{
		{"the virtual's policy", "", 0x20},
		{"a rule's category", `when CLIENT_ACCEPTED { BWC::policy attach cat u1; BWC::color set cat video }`, 0x48},
		{"BWC::mark", `when CLIENT_ACCEPTED { BWC::policy attach cat u2; BWC::color set cat video; BWC::mark cat tos 184 qos 5 }`, 0xb8},
	} {
		cfg := bwcConfig(vs, member, pol)
		v := cfg.Virtuals["/Common/vs"]
		if c.rule == "" {
			v.BWC = "/Common/cat"
		} else {
			rs, lg := compileRules(t, c.rule)
			lg.showOnFailure(t)
			v.Rules = rs
		}
		mustApply(t, p, cfg)
		if got := synClient(t, vs, 1400, 64, 0); got != "S1 Response" {
			t.Fatalf("%s: answer %q", c.name, got)
		}
		select {
		case s := <-syns:
			if s == nil {
				t.Fatalf("%s: the member kept no SYN", c.name)
			}
			if s.TOS != c.want {
				t.Errorf("%s: the member's SYN has ToS %#x, want %#x", c.name, s.TOS, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: no connection reached the member", c.name)
		}
	}
}

// TestBWCCategoryRate: a flow a rule puts in a category passes at the
// category's max-cat-rate, under a policy of far more.
func TestBWCCategoryRate(t *testing.T) {
	t.Parallel() // a lower bound on time only; its own addresses and plane
	const vs, member = "127.134.2.1:8000", "127.134.2.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/cat", MaxRate: 100e6, MaxUserRate: 100e6, Dynamic: true,
		Mark: BWCMark{TOS: -1, QoS: -1}, Categories: []BWCCategory{{Name: "slow", MaxRate: 2e6, Mark: BWCMark{TOS: -1, QoS: -1}}}})
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED { BWC::policy attach cat [IP::client_addr]:[TCP::client_port]; BWC::color set cat slow }`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	start := time.Now()
	download(t, vs, 1<<20)
	if d, want := time.Since(start), atLeast(1<<20, 2e6); d < want {
		t.Fatalf("1 MB in a 2 mbps category took %v, less than %v", d, want)
	}
}

// TestBWCPriority: while a flow of level 7 takes a policy's rate, one of
// level 0 waits: its small download ends only after most of the big one
// (sharing the rate, it would take a fraction of a second).
func TestBWCPriority(t *testing.T) {
	const vs, member = "127.134.3.1:8000", "127.134.3.2:9000"
	bwcMember(t, member)
	p, _ := newPlane(t)
	cfg := bwcConfig(vs, member, &BWCPolicy{Name: "/Common/two", MaxRate: 2e6, Mark: BWCMark{TOS: -1, QoS: -1}})
	rs, lg := compileRules(t, `when CLIENT_ACCEPTED {
		BWC::policy attach two
		if { [IP::client_addr] eq "127.134.3.50" } { BWC::priority two 7 } else { BWC::priority 0 }
	}`)
	lg.showOnFailure(t)
	cfg.Virtuals["/Common/vs"].Rules = rs
	mustApply(t, p, cfg)
	var wg sync.WaitGroup
	wg.Go(func() { downloadFrom(t, "127.134.3.50", vs, 1<<20) })
	pol := p.bwc.Policy("/Common/two")
	for deadline := time.Now().Add(20 * time.Second); pol.Passed.Load() < 128<<10; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the level-7 download did not start")
		}
	}
	start := time.Now()
	downloadFrom(t, "127.134.3.51", vs, 64<<10)
	// Level 0 gets what level 7 leaves, which a loaded machine's
	// scheduler makes more than nothing (the level-7 flow is not always
	// waiting for its bytes); a third of level 7's rest is still well
	// above what sharing the rate evenly would take (64 KB at 1 Mbit/s).
	if d, want := time.Since(start), atLeast(1<<20-128<<10, 2e6)/3; d < want {
		t.Errorf("64 KB at level 0 beside 1 MB at level 7 took %v, less than %v", d, want)
	}
	wg.Wait()
}

// TestBWCMarkingUDP: a UDP virtual's datagrams reach the member with the
// ToS of its policy, read there with IP_RECVTOS.
func TestBWCMarkingUDP(t *testing.T) {
	const vs, member = "127.134.4.1:5300", "127.134.4.2:5300"
	lc := net.ListenConfig{Control: func(_, _ string, rc syscall.RawConn) error {
		var err error
		rc.Control(func(fd uintptr) { err = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_RECVTOS, 1) })
		return err
	}}
	pc, err := lc.ListenPacket(context.Background(), "udp4", member)
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	p, _ := newPlane(t)
	cfg := udpBasic(vs, member)
	cfg.BWC = map[string]*BWCPolicy{"/Common/m": {Name: "/Common/m", MaxRate: 10e6, Mark: BWCMark{TOS: 0x28, QoS: 2}}}
	cfg.Virtuals["/Common/vs"].BWC = "/Common/m"
	mustApply(t, p, cfg)
	c, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(ap(vs)))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("marked")); err != nil {
		t.Fatal(err)
	}
	uc := pc.(*net.UDPConn)
	uc.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf, oob := make([]byte, 64), make([]byte, 128)
	n, oobn, _, _, err := uc.ReadMsgUDP(buf, oob)
	if err != nil {
		t.Fatal(err)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil {
		t.Fatal(err)
	}
	tos := -1
	for _, m := range msgs {
		if m.Header.Level == unix.IPPROTO_IP && m.Header.Type == unix.IP_TOS && len(m.Data) > 0 {
			tos = int(m.Data[0])
		}
	}
	if string(buf[:n]) != "marked" || tos != 0x28 {
		t.Fatalf("the member got %q with ToS %#x, want \"marked\" with 0x28", buf[:n], tos)
	}
}
