package main

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/gslb"
)

// The ldns subcommand asks a GSLB from its own address and prints the
// answers, and answers probes meanwhile.
func TestLDNSAsk(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.88.53:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := pc.LocalAddr().(*net.UDPAddr).AddrPort()
	pc.Close()
	s := gslb.New(gslb.Options{})
	defer s.Close()
	cfg := &gslb.Config{
		Listeners:   []gslb.Listener{{Addr: listen, Protocol: "udp"}},
		Datacenters: map[string]*gslb.Datacenter{"/Common/dc": {}},
		Servers: map[string]*gslb.Host{"/Common/ltm": {Datacenter: "/Common/dc", VirtualServers: []*gslb.VirtualServer{
			{Name: "vs", Destination: netip.MustParseAddrPort("127.0.88.10:80")}}}},
		Pools:   map[string]*gslb.Pool{"/Common/p": {Members: []gslb.PoolMember{{Server: "/Common/ltm", VirtualServer: "vs"}}}},
		WideIPs: map[string]*gslb.WideIP{"/Common/www.example.com": {Pools: []gslb.WideIPPool{{Pool: "/Common/p"}}}},
	}
	if err := s.Apply(cfg); err != nil {
		t.Fatal(err)
	}
	out := &syncBuf{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = ldnsMain(ctx, []string{"-addr", "127.0.88.1", "-port", "0", "-delay", "127.0.88.2=1ms",
		"-ask", "www.example.com", "-server", listen.String(), "-count", "2", "-interval", "1ms"}, out, out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if strings.Count(got, "NOERROR aa | www.example.com. 30 IN A 127.0.88.10") != 2 || !strings.Contains(got, "ldns 127.0.88.1 answering probes") {
		t.Errorf("output:\n%s", got)
	}
	if st := s.LDNSRecords(); len(st) != 1 || st[0].Addr != netip.MustParseAddr("127.0.88.1") {
		t.Errorf("the GSLB did not see the LDNS's address: %+v", st)
	}
}

func TestLDNSUsage(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-addr", "nope"},
		{"-addr", "127.0.88.3", "-port", "0", "-delay", "x"},
		{"-addr", "127.0.88.3", "-port", "0", "-ask", "a", "-server", "bad"},
		{"-addr", "127.0.88.3", "-port", "0", "-ask", "a", "-server", "127.0.0.1:1", "-type", "NOPE"},
	} {
		if err := ldnsMain(context.Background(), args, &syncBuf{}, &syncBuf{}); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
