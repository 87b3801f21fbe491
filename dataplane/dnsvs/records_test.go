package dnsvs

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/openltm/openltm/dataplane/internal/config"
	"github.com/openltm/openltm/dataplane/recursor"
)

// A transparent cache lists its answers by question and the record sets
// they carry, filtered; deleting a record set drops every answer that
// asks for it or carries it (a CNAME chain's), and no other.
func TestTransparentRecords(t *testing.T) {
	now := time.Unix(1000, 0)
	c := newCache(&config.DNSCache{Name: "/Common/c"})
	c.now = func() time.Time { return now }
	put := func(name string, qtype uint16, answer ...string) {
		q := new(dns.Msg)
		q.SetQuestion(name, qtype)
		m := new(dns.Msg)
		m.SetReply(q)
		for _, a := range answer {
			rr, err := dns.NewRR(a)
			if err != nil {
				t.Fatal(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		c.Put(q, m)
	}
	put("www.example.com.", dns.TypeA, "www.example.com. 300 IN A 127.179.9.1")
	put("alias.example.com.", dns.TypeA, "alias.example.com. 300 IN CNAME www.example.com.", "www.example.com. 300 IN A 127.179.9.1")
	put("mail.example.com.", dns.TypeA, "mail.example.com. 60 IN A 127.179.9.2")
	put("www.example.com.", dns.TypeAAAA, "www.example.com. 300 IN AAAA 2001:db8::1")
	now = now.Add(10 * time.Second)

	msgs := func(f recursor.Filter) string {
		var out []string
		c.Messages(f, func(r Record) bool {
			out = append(out, r.Name+"/"+r.Type)
			return true
		})
		return strings.Join(out, " ")
	}
	sets := func(f recursor.Filter) string {
		var out []string
		c.RRsets(f, func(s recursor.RRset) bool {
			out = append(out, s.Name+"/"+dns.TypeToString[s.Type]+"/"+strconv.Itoa(int(s.TTL)))
			return true
		})
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		f          recursor.Filter
		msgs, sets string
	}{
		{recursor.Filter{}, "alias.example.com./A mail.example.com./A www.example.com./A www.example.com./AAAA",
			"alias.example.com./CNAME/290 www.example.com./A/290 mail.example.com./A/50 www.example.com./A/290 www.example.com./AAAA/290"},
		{recursor.Filter{Name: "www.example.com."}, "www.example.com./A www.example.com./AAAA", "www.example.com./A/290 www.example.com./A/290 www.example.com./AAAA/290"},
		{recursor.Filter{Type: dns.TypeAAAA}, "www.example.com./AAAA", "www.example.com./AAAA/290"},
	} {
		if got := msgs(tc.f); got != tc.msgs {
			t.Errorf("Messages(%+v) = %q, want %q", tc.f, got, tc.msgs)
		}
		if got := sets(tc.f); got != tc.sets {
			t.Errorf("RRsets(%+v) = %q, want %q", tc.f, got, tc.sets)
		}
	}
	if n := c.DeleteRRsets(recursor.Filter{Name: "www.example.com.", Type: dns.TypeA}); n != 2 {
		t.Errorf("DeleteRRsets(www A) = %d, want 2 (its answer and alias's)", n)
	}
	if got, want := msgs(recursor.Filter{}), "mail.example.com./A www.example.com./AAAA"; got != want {
		t.Errorf("after the delete: %q, want %q", got, want)
	}
	if n := c.DeleteMessages(recursor.Filter{Type: dns.TypeAAAA}); n != 1 {
		t.Errorf("DeleteMessages(AAAA) = %d, want 1", n)
	}
	if st := c.Stats(); st.Entries != 1 {
		t.Errorf("%d answers left, want 1", st.Entries)
	}
}
