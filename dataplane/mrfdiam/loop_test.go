package mrfdiam

import (
	"testing"

	"github.com/openltm/openltm/dataplane/diameter/diamtest"
	"github.com/openltm/openltm/dataplane/diammsg"
	"github.com/openltm/openltm/dataplane/mrf"
)

// TestLoopDetection: with loop-detection a forwarded request carries
// the Route-Record of the peer it came from (its Origin-Host), once
// however often it is sent; a request whose Route-Records already hold
// the virtual's origin-host is answered DIAMETER_LOOP_DETECTED by the
// virtual; without loop-detection neither happens. Forwarding stays
// free of allocations.
func TestLoopDetection(t *testing.T) {
	s := &Session{OriginHost: "lb.example", OriginRealm: "lb-realm.example", LoopDetect: true}
	req := diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, 7, 7, diamtest.RequestTo("client.example", "s;1", "realm", ""))
	var bufs [2][]byte
	m := &mrf.Message{Data: req}
	for range 2 {
		out, _ := s.Outbound(&bufs, m, 1)
		om, err := diammsg.Parse(out)
		if err != nil {
			t.Fatal(err)
		}
		var rr []string
		om.Each(func(a diammsg.AVP) bool {
			if a.Code == avpRouteRecord {
				rr = append(rr, string(a.Data))
			}
			return true
		})
		if len(rr) != 1 || rr[0] != "client.example" || string(om.Get(diammsg.AVPSessionID)) != "s;1" {
			t.Fatalf("Route-Records %q", rr)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Outbound(&bufs, m, 2) }); n != 0 {
		t.Fatalf("%v allocations a forwarded request", n)
	}
	looping := diammsg.Build(diammsg.FlagRequest|diammsg.FlagProxiable, 272, 4, 8, 8,
		diammsg.AppendAVP(diamtest.RequestTo("client.example", "s;2", "realm", ""), avpRouteRecord, diammsg.AVPFlagMandatory, 0, []byte("LB.example")))
	reply, handled, end := s.Local(nil, looping, false)
	am, err := diammsg.Parse(reply)
	if !handled || end || err != nil || result(am) != resultLoopDetected || am.HopByHop() != 8 || am.Flags()&diammsg.FlagError == 0 {
		t.Fatalf("handled %t end %t answer %x", handled, end, reply)
	}
	s.LoopDetect = false
	if _, handled, _ := s.Local(nil, looping, false); handled {
		t.Fatal("a looping request answered without loop-detection")
	}
	out, _ := s.Outbound(&bufs, m, 3)
	if om, _ := diammsg.Parse(out); om.Get(avpRouteRecord) != nil {
		t.Fatal("a Route-Record without loop-detection")
	}
}
