package dataplane

import (
	"net"
	"net/netip"
	"testing"

	"github.com/openltm/openltm/dataplane/ipfix"
	"github.com/openltm/openltm/dataplane/netflow"
)

// BenchmarkNetflowConnection is BenchmarkConnectionPerRequest on a
// virtual without the netflow profile and one with it (NetFlow v5 to a
// collector socket that reads nothing): the difference in allocations
// per connection is what the profile costs.
func BenchmarkNetflowConnection(b *testing.B) {
	pc, err := net.ListenPacket("udp", "127.149.90.9:2055")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { pc.Close() })
	collector := netip.MustParseAddrPort(pc.LocalAddr().String())
	for i, v := range []struct {
		name    string
		profile bool
	}{{"without", false}, {"with", true}} {
		b.Run(v.name, func(b *testing.B) {
			vs, member := "127.149.9"+string(rune('1'+i))+".1:8000", "127.149.9"+string(rune('1'+i))+".2:9000"
			echoBackend(b, member)
			cfg := basic(vs, member)
			if v.profile {
				x := ipfix.NewExporter(ipfix.Options{Pool: "/Common/collectors", Version: ipfix.NetFlowV5,
					Members: func(string) ([]netip.AddrPort, error) { return []netip.AddrPort{collector}, nil }})
				b.Cleanup(x.Close)
				cfg.Virtuals["/Common/vs"].NetFlow = &netflow.Profile{Name: "/Common/nf", Version: ipfix.NetFlowV5,
					Sink: exporterSink{x}, Stats: &netflow.Stats{}}
			}
			p := New(Options{})
			b.Cleanup(p.Close)
			if err := p.Apply(nil, cfg); err != nil {
				b.Fatal(err)
			}
			connectionRoundTrips(b, vs)
		})
	}
}

type exporterSink struct{ x *ipfix.Exporter }

func (s exporterSink) Send(_ ipfix.Version, r *ipfix.Record) bool { return s.x.Send(r) }
