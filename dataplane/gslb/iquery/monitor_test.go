package iquery

import (
	"bufio"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"regexp"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/monitor"
)

// A GSLB asks two devices to probe one site over their iQuery streams;
// each probes from its own address, so the site behind a firewall that
// lets only dc2 through is up from dc2 and down from dc1, and the
// verdict that comes back is the device's.
func TestMonitorProbeOverIQuery(t *testing.T) {
	dc2Addr := netip.MustParseAddr("127.94.4.1")
	ln, err := net.Listen("tcp", "127.94.7.20:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(5 * time.Second))
				bufio.NewReader(c).ReadString('\n')
				if c.RemoteAddr().(*net.TCPAddr).AddrPort().Addr().Unmap() == dc2Addr {
					c.Write([]byte("HTTP/1.0 200 OK\r\n\r\n"))
				} else {
					c.Write([]byte("HTTP/1.0 403 Forbidden\r\n\r\n"))
				}
			}()
		}
	}()
	site := ln.Addr().(*net.TCPAddr).AddrPort()
	gtm, dc1, dc2 := identity(t, "gtm"), identity(t, "dc1"), identity(t, "dc2")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pubs := map[string]*Publisher{}
	for name, id := range map[string]*Identity{"127.94.3.1": dc1, "127.94.4.1": dc2} {
		p, err := Listen(name+":0", id, trusting(t, gtm), log)
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		self := netip.MustParseAddr(name)
		p.SetProber(func(r ProbeRequest) ProbeResult {
			if r.Monitor == nil {
				return ProbeResult{Error: "not an RTT prober"}
			}
			return r.Monitor.Run(self, time.Duration(r.TimeoutMS)*time.Millisecond)
		})
		pubs[name] = p
	}
	sub, ch := subscriber(t, gtm, trusting(t, dc1, dc2), log)
	for name, p := range pubs {
		sub.Follow(p.Addr().String())
		next(t, ch, p.Addr().String(), func(e event) bool { return !e.down })
		_ = name
	}
	spec := &monitor.Spec{Name: "/Common/http_fw", Type: monitor.HTTP, Send: "GET / HTTP/1.0\r\n\r\n", Recv: regexp.MustCompile("200 OK")}
	check, err := CheckOf(spec, site)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		device   string
		up       bool
		downResp bool // the failure is an answer, not a silence
	}{
		{"127.94.4.1", true, false},
		{"127.94.3.1", false, true},
		{"127.94.5.1", false, false}, // not followed: no stream, no answer
	}
	for _, tc := range cases {
		t.Run(tc.device, func(t *testing.T) {
			key := tc.device + ":1"
			if p := pubs[tc.device]; p != nil {
				key = p.Addr().String()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			out, err := sub.Monitor(ctx, key, netip.MustParseAddr(tc.device), check)
			if out.Up != tc.up || (err == nil) != tc.up || monitor.IsDownResponse(err) != tc.downResp {
				t.Errorf("up %v err %v (down response %v), want up %v down response %v", out.Up, err, monitor.IsDownResponse(err), tc.up, tc.downResp)
			}
			if !tc.up && !tc.downResp && !errors.Is(err, monitor.ErrNoResponse) {
				t.Errorf("%v is not a missing response", err)
			}
		})
	}
	// Programs are not sent to other devices.
	if _, err := CheckOf(&monitor.Spec{Type: monitor.External}, site); err == nil {
		t.Error("an external monitor was sent")
	}
}
