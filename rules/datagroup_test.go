package rules

import (
	"fmt"
	"net/netip"
	"testing"
)

// TestClassMatchMostSpecific: an address group answers with its most
// specific network, whatever the keys' order, and the indexed equals
// path answers what the scan does, on small and large groups alike.
func TestClassMatchMostSpecific(t *testing.T) {
	nets, err := NewDataGroup("/Common/nets", DGAddress, []Record{
		{Key: "10.0.0.0/8", Value: "ten"}, {Key: "10.1.0.0/16", Value: "ten-one"},
		{Key: "10.1.2.3", Value: "host"}, {Key: "10.1.2.0/255.255.255.0", Value: "ten-one-two"},
		{Key: "2001:db8::/32", Value: "doc6"}, {Key: "0.0.0.0/0", Value: "any4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	var big []Record
	for i := 0; i < 5000; i++ {
		big = append(big, Record{Key: fmt.Sprintf("/path/%d", i), Value: fmt.Sprint(i)})
	}
	paths, err := NewDataGroup("/Common/paths", DGString, big)
	if err != nil {
		t.Fatal(err)
	}
	find := func(name string) (*DataGroup, bool) {
		switch name {
		case "nets":
			return nets, true
		case "paths":
			return paths, true
		}
		return nil, false
	}
	for _, c := range []struct{ expr, want string }{
		{"class match -value 10.1.2.3 equals nets", "host"},
		{"class match -value 10.1.2.4 equals nets", "ten-one-two"},
		{"class match -value 10.1.9.9 equals nets", "ten-one"},
		{"class match -value 10.9.9.9 equals nets", "ten"},
		{"class match -value 192.0.2.1 equals nets", "any4"},
		{"class match -value 2001:db8::1 equals nets", "doc6"},
		{"class match 2001:db9::1 equals nets", "0"},
		{"class match -name 10.1.2.3 equals nets", "10.1.2.3"},
		{"class match -index 10.1.2.4 equals nets", "3"}, // records are listed by key: 0.0.0.0/0 10.0.0.0/8 10.1.0.0/16 10.1.2.0/... 10.1.2.3 ...
		{"class match -all -value 10.1.2.3 equals nets", "host ten-one-two ten-one ten any4"},
		{"class lookup 10.1.2.3 nets", "host"},
		{"class match not-an-address equals nets", "0"},
		{"class lookup /path/4321 paths", "4321"},
		{"class match -index /path/0 equals paths", "0"},
		{"class match /path/5000 equals paths", "0"},
		{"class match -value /path/49 starts_with paths", "4"},
	} {
		t.Run(c.expr, func(t *testing.T) {
			r := mustCompile(t, "dg", "when CLIENT_DATA { set ::out ["+c.expr+"] }")
			s := NewProgram(&Env{Log: (&logSink{}).log, DataGroup: find}, r).NewConnState(newFakeConn())
			defer s.Release()
			if err := s.Run(ClientData); err != nil {
				t.Fatal(err)
			}
			if got, _ := s.Var("out"); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// BenchmarkClassLookupLarge: one lookup in a group of 100,000 keys, as
// external data groups hold (a map lookup, not a scan).
func BenchmarkClassLookupLarge(b *testing.B) {
	var recs []Record
	for i := 0; i < 100000; i++ {
		recs = append(recs, Record{Key: fmt.Sprintf("10.%d.%d.0/24", i/256%256, i%256), Value: "x"})
	}
	dg, err := NewDataGroup("/Common/big", DGAddress, recs)
	if err != nil {
		b.Fatal(err)
	}
	ip := netip.MustParseAddr("10.200.100.7")
	b.ReportAllocs()
	for b.Loop() {
		if dg.find("", ip) < 0 {
			b.Fatal("no match")
		}
	}
}
