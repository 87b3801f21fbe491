package render

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/dnsvs"
	"github.com/openltm/openltm/dataplane/recursor"
)

// Each section streams its heading, its column names before the first
// row and a line per entry; an empty one says so; a validating cache's
// record sets say what validation made of them.
func TestRecordsWriter(t *testing.T) {
	rr, err := dns.NewRR("www.example.com. 300 IN A 127.179.9.1")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		write func(*RecordsWriter) error
		sec   string
		want  string
	}{
		{"empty", func(*RecordsWriter) error { return nil }, "nameserver", "DNS Cache Records: c (nameserver)\n  (no nameservers)\n\n"},
		{"msg", func(w *RecordsWriter) error {
			return w.Message(dnsvs.Record{Name: "www.example.com.", Type: "A", Class: "IN", Rcode: "NOERROR", TTL: 42, Bytes: 60})
		}, "msg", "DNS Cache Records: c (msg)\n" +
			"  Name                              Type    Class  DO   Rcode     TTL      Bytes\n" +
			"  www.example.com.                  A       IN     no   NOERROR   42       60\n\n"},
		{"rrset", func(w *RecordsWriter) error {
			return w.RRset(recursor.RRset{Name: "www.example.com.", Type: dns.TypeA, TTL: 7, Security: recursor.Secure, RRs: []dns.RR{rr}}, true)
		}, "rrset", "DNS Cache Records: c (rrset)\n  www.example.com.\t7\tIN\tA\t127.179.9.1\t; secure\n\n"},
	} {
		var b strings.Builder
		w := NewRecordsWriter(&b, tc.sec, "/Common/c", Options{Folder: "/Common"})
		if err := tc.write(w); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("%s: got\n%q\nwant\n%q", tc.name, b.String(), tc.want)
		}
	}
	if rr.Header().Ttl != 300 {
		t.Errorf("the cache's record was changed: TTL %d", rr.Header().Ttl)
	}
}
