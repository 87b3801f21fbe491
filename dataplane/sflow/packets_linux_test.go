package sflow

import (
	"encoding/hex"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openltm/openltm/dataplane/sflow/sflowdec"
)

// TestPacketSamplerLoopback: a sampler on lo at rate 4 sends flow
// samples of the VLAN's source whose sampled_header holds the frames of
// UDP datagrams sent over lo (the payload among the first bytes, the
// frame's whole length), with the rate and lo's ifindex as the input or
// output interface; Close stops it.
func TestPacketSamplerLoopback(t *testing.T) {
	if unix.Geteuid() != 0 {
		t.Skip("packet sockets need CAP_NET_RAW")
	}
	for _, tc := range []struct {
		name    string
		rate    uint32
		payload string
	}{
		{"rate 4", 4, "openltm-sflow-vlan-sample-4"},
		{"rate 1", 1, "openltm-sflow-vlan-sample-1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coll, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.200.43.2")})
			if err != nil {
				t.Skipf("no loopback address 127.200.43.2: %v", err)
			}
			defer coll.Close()
			a, err := NewAgent([]Receiver{{Addr: coll.LocalAddr().(*net.UDPAddr).AddrPort(), MaxDatagram: 1400}}, time.Now(), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			lo, err := net.InterfaceByName("lo")
			if err != nil {
				t.Skip(err)
			}
			s, err := StartPacketSampler(a, SourceID(ClassVLAN, 100), tc.rate, []string{"lo"})
			if err != nil {
				t.Fatal(err)
			}
			sink, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.200.43.3")})
			if err != nil {
				t.Fatal(err)
			}
			defer sink.Close()
			src, err := net.DialUDP("udp", &net.UDPAddr{IP: net.ParseIP("127.200.43.4")}, sink.LocalAddr().(*net.UDPAddr))
			if err != nil {
				t.Fatal(err)
			}
			defer src.Close()
			marker := hex.EncodeToString([]byte(tc.payload))
			frame := strconv.Itoa(14 + 20 + 8 + len(tc.payload))
			found := false
			buf := make([]byte, 65536)
			deadline := time.Now().Add(20 * time.Second)
			for i := 0; i < 2000 && !found && time.Now().Before(deadline); i++ {
				for range 20 {
					src.Write([]byte(tc.payload))
				}
				coll.SetReadDeadline(time.Now().Add(2 * time.Second))
				for j := 0; j < 50 && !found; j++ {
					n, err := coll.Read(buf)
					if err != nil {
						break
					}
					d, err := sflowdec.Decode(buf[:n])
					if err != nil {
						t.Fatal(err)
					}
					for _, smp := range d.Samples {
						if !smp.Flow || len(smp.Records) != 1 || smp.Records[0].Format != 1 {
							continue
						}
						r := smp.Records[0]
						if !strings.Contains(r.Get("header"), marker) {
							continue
						}
						found = true
						if smp.Class != ClassVLAN || smp.Index != 100 || smp.Rate != tc.rate || smp.Pool < tc.rate ||
							r.Get("frame_length") != frame || r.Get("header_protocol") != "1" ||
							(smp.Input != uint32(lo.Index) && smp.Output != uint32(lo.Index)) {
							t.Errorf("sample %+v, record %v", smp, r.Fields)
						}
					}
				}
			}
			if !found {
				t.Fatalf("no sample of the datagrams (%d sampled)", s.Samples.Load())
			}
			s.Close()
			n := s.Samples.Load()
			for range 20 {
				src.Write([]byte(tc.payload))
			}
			time.Sleep(100 * time.Millisecond)
			if s.Samples.Load() != n {
				t.Errorf("the sampler sampled after Close")
			}
		})
	}
}
