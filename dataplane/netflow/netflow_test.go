package netflow

import (
	"encoding/binary"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/openltm/openltm/dataplane/flows"
	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/ipfix/ipfixtest"
)

// exporterSink sends through one exporter.
type exporterSink struct{ x *ipfix.Exporter }

func (s exporterSink) Send(_ ipfix.Version, r *ipfix.Record) bool { return s.x.Send(r) }

func profile(t testing.TB, v ipfix.Version, collector netip.AddrPort) *Profile {
	ts := ipfix.NewTemplates()
	v4, err := ts.Create(ipfix.IANA(), TemplateSpec("IPv4"))
	if err != nil {
		t.Fatal(err)
	}
	v6, err := ts.Create(ipfix.IANA(), TemplateSpec("IPv6"))
	if err != nil {
		t.Fatal(err)
	}
	if !CheckTemplate(v4) || !CheckTemplate(v6) {
		t.Fatal("templates do not have the profile's fields")
	}
	x4, err := ts.Create(Elements(), TemplateSpecNamed("IPv4"))
	if err != nil {
		t.Fatal(err)
	}
	x6, err := ts.Create(Elements(), TemplateSpecNamed("IPv6"))
	if err != nil {
		t.Fatal(err)
	}
	if !CheckTemplateNamed(x4) || !CheckTemplateNamed(x6) || CheckTemplateNamed(v4) {
		t.Fatal("the named templates do not have the profile's fields and the virtual's name")
	}
	x := ipfix.NewExporter(ipfix.Options{Pool: "/Common/c", Version: v,
		Members: func(string) ([]netip.AddrPort, error) { return []netip.AddrPort{collector}, nil }})
	t.Cleanup(x.Close)
	return &Profile{Name: "/Common/nf", Version: v, Sink: exporterSink{x}, Stats: &Stats{}, V4: v4, V6: v6, X4: x4, X6: x6, Virtual: "/Common/l4_vs"}
}

// flow is a finished connection: 100 octets in 3 packets from the
// client, 2000 in 4 back.
func flow(client, local string, proto string) *flows.Flow {
	f := &flows.Flow{Client: netip.MustParseAddrPort(client), Local: netip.MustParseAddrPort(local), Protocol: proto}
	flows.NewTable().Add(f) // sets its start
	f.BytesIn.Store(100)
	f.PktsIn.Store(3)
	f.BytesOut.Store(2000)
	f.PktsOut.Store(4)
	return f
}

// TestExport: each version's records, as a collector decodes them: two
// per connection, the client's direction first, with addresses, ports,
// protocol, octets, packets and times; NetFlow v5 has no IPv6, so an
// IPv6 connection is counted as dropped. IPFIX records end with the
// virtual's name (F5's contextName, enterprise 12276 id 9); v9's and
// v5's have none.
func TestExport(t *testing.T) {
	for i, c := range []struct {
		name          string
		v             ipfix.Version
		client, local string
		proto         string
		records       int
	}{
		{"v5 tcp", ipfix.NetFlowV5, "127.0.0.1:40000", "127.149.10.1:80", "tcp", 2},
		{"v5 udp", ipfix.NetFlowV5, "127.0.0.1:40001", "127.149.10.1:53", "udp", 2},
		{"v5 ipv6", ipfix.NetFlowV5, "[::1]:40002", "[::1]:80", "tcp", 0},
		{"v9 tcp", ipfix.NetFlowV9, "127.0.0.1:40003", "127.149.10.1:80", "tcp", 2},
		{"v9 ipv6", ipfix.NetFlowV9, "[::1]:40004", "[::1]:80", "tcp", 2},
		{"ipfix tcp", ipfix.IPFIX, "127.0.0.1:40005", "127.149.10.1:80", "tcp", 2},
		{"ipfix ipv6", ipfix.IPFIX, "[::1]:40006", "[::1]:8080", "udp", 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			col, addr := ipfixtest.UDP(t, netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 149, 11, byte(1 + i)}), 2055).String())
			p := profile(t, c.v, addr)
			f := flow(c.client, c.local, c.proto)
			end := time.Now()
			p.ExportAt(f, end)
			if c.records == 0 {
				if p.Stats.Dropped.Load() != 2 || p.Stats.Flows.Load() != 1 {
					t.Fatalf("dropped %d flows %d", p.Stats.Dropped.Load(), p.Stats.Flows.Load())
				}
				return
			}
			ipfixtest.WaitFor(t, "the records", func() bool {
				m, _ := col.Snapshot()
				return ipfixtest.Records(m) >= c.records
			})
			msgs, errs := col.Snapshot()
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			var recs []ipfixtest.Rec
			for _, m := range msgs {
				if m.Version != uint16(c.v) {
					t.Fatalf("version %d", m.Version)
				}
				recs = append(recs, m.Records...)
			}
			if len(recs) != c.records || p.Stats.Records.Load() != 2 {
				t.Fatalf("%d records, %d counted", len(recs), p.Stats.Records.Load())
			}
			wantProto := byte(6)
			if c.proto == "udp" {
				wantProto = 17
			}
			client, local := netip.MustParseAddrPort(c.client), netip.MustParseAddrPort(c.local)
			for k, r := range recs {
				src, dst, octets, pkts := client, local, uint64(100), uint64(3)
				if k == 1 {
					src, dst, octets, pkts = local, client, 2000, 4
				}
				var got struct {
					src, dst     netip.AddrPort
					proto        byte
					octets, pkts uint64
					start, end   time.Time
				}
				fs := r.Fields
				if c.v == ipfix.NetFlowV5 {
					got.src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(fs[0])), binary.BigEndian.Uint16(fs[9]))
					got.dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(fs[1])), binary.BigEndian.Uint16(fs[10]))
					got.proto = fs[13][0]
					got.pkts, got.octets = uint64(binary.BigEndian.Uint32(fs[5])), uint64(binary.BigEndian.Uint32(fs[6]))
					// First and Last are sysUptime; the header says
					// what sysUptime was at its export time.
					up := msgs[0].Uptime
					at := time.Unix(int64(msgs[0].Export), 0)
					got.start = at.Add(-time.Duration(up-binary.BigEndian.Uint32(fs[7])) * time.Millisecond)
					got.end = at.Add(-time.Duration(up-binary.BigEndian.Uint32(fs[8])) * time.Millisecond)
				} else {
					addr := func(b []byte) netip.Addr {
						if len(b) == 4 {
							return netip.AddrFrom4([4]byte(b))
						}
						return netip.AddrFrom16([16]byte(b))
					}
					got.src = netip.AddrPortFrom(addr(fs[0]), binary.BigEndian.Uint16(fs[2]))
					got.dst = netip.AddrPortFrom(addr(fs[1]), binary.BigEndian.Uint16(fs[3]))
					got.proto = fs[4][0]
					got.octets, got.pkts = binary.BigEndian.Uint64(fs[5]), binary.BigEndian.Uint64(fs[6])
					got.start = time.UnixMilli(int64(binary.BigEndian.Uint64(fs[7])))
					got.end = time.UnixMilli(int64(binary.BigEndian.Uint64(fs[8])))
					switch {
					case c.v == ipfix.IPFIX && (len(fs) != 10 || string(fs[9]) != "/Common/l4_vs"):
						t.Errorf("record %d: %d fields, want 10 ending with the virtual's name: %q", k, len(fs), fs[len(fs)-1])
					case c.v == ipfix.NetFlowV9 && len(fs) != 9:
						t.Errorf("record %d: %d v9 fields, want 9", k, len(fs))
					}
				}
				if got.src != src || got.dst != dst || got.proto != wantProto || got.octets != octets || got.pkts != pkts {
					t.Errorf("record %d: %+v, want %s -> %s proto %d %d octets %d packets", k, got, src, dst, wantProto, octets, pkts)
				}
				// v5's times are read back through the header's whole
				// seconds: allow a second and a half.
				if d := got.end.Sub(end); d < -1500*time.Millisecond || d > 1500*time.Millisecond || got.start.After(got.end) {
					t.Errorf("record %d: start %s end %s, ended %s", k, got.start, got.end, end)
				}
			}
		})
	}
}

// TestNoSink: a profile without a sink counts its records as dropped.
func TestNoSink(t *testing.T) {
	p := &Profile{Name: "/Common/nf", Version: ipfix.NetFlowV5, Stats: &Stats{}}
	p.Export(flow("127.0.0.1:1", "127.149.12.1:80", "tcp"))
	if p.Stats.Flows.Load() != 1 || p.Stats.Dropped.Load() != 2 || p.Stats.Records.Load() != 0 {
		t.Fatalf("flows %d dropped %d records %d", p.Stats.Flows.Load(), p.Stats.Dropped.Load(), p.Stats.Records.Load())
	}
	p.Stats.Reset()
	if p.Stats.Flows.Load() != 0 {
		t.Fatal("reset kept the counts")
	}
}

// BenchmarkExport is the profile's work at a connection's end, records
// queued to a real exporter: no allocation per connection.
func BenchmarkExport(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.149.13.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer pc.Close()
	collector := netip.MustParseAddrPort(pc.LocalAddr().String())
	for _, v := range []ipfix.Version{ipfix.NetFlowV5, ipfix.NetFlowV9, ipfix.IPFIX} {
		b.Run(v.String(), func(b *testing.B) {
			p := profile(b, v, collector)
			f := flow("127.0.0.1:40000", "127.149.10.1:80", "tcp")
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p.Export(f)
				if i%1024 == 1023 {
					// Let the exporter drain its queue, so that records
					// are sent rather than dropped.
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}
