package rules

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// msgResolver answers from a fixed message, or fails.
type msgResolver struct {
	m     *dns.Msg
	asked string
}

func (r *msgResolver) Message(_ context.Context, name string, qtype uint16) (*dns.Msg, error) {
	r.asked = name + " " + dns.TypeToString[qtype]
	if r.m == nil {
		return nil, errors.New("no nameserver answered")
	}
	q := new(dns.Msg)
	q.SetQuestion(dns.Fqdn(name), qtype)
	m := r.m.Copy()
	m.SetReply(q)
	m.Rcode, m.RecursionAvailable, m.Answer, m.Ns = r.m.Rcode, r.m.RecursionAvailable, r.m.Answer, r.m.Ns
	return m, nil
}

func TestDNSMsgCommands(t *testing.T) {
	ans := new(dns.Msg)
	ans.RecursionAvailable = true
	for _, s := range []string{"www.abc.com. 300 IN CNAME web.abc.com.", "web.abc.com. 60 IN A 192.0.2.10"} {
		rr, _ := dns.NewRR(s)
		ans.Answer = append(ans.Answer, rr)
	}
	cases := []struct {
		name, body string
		fail       bool // the resolver fails
		logs       string
		err        string
		asked      string
	}{
		{name: "F5's example", body: `set result [RESOLVER::name_lookup "/Common/r1" www.abc.com a]
set answer [DNSMSG::section $result answer]
set rr [lindex $answer 1]
log local0. "[DNSMSG::header $result rcode] [DNSMSG::header $result ra] [DNSMSG::header $result qr] [llength $answer] [DNSMSG::record $rr owner] [DNSMSG::record $rr type] [DNSMSG::record $rr ttl] [DNSMSG::record $rr class] [DNSMSG::record $rr rdata]"
log local0. [DNSMSG::section $result question]`,
			logs: "NOERROR 1 1 2 web.abc.com A 60 IN 192.0.2.10\n{www.abc.com. IN A}", asked: "www.abc.com A"},
		{name: "a resolver in /Common by its short name", body: `log local0. [DNSMSG::header [RESOLVER::name_lookup r1 abc.com mx] opcode]`, logs: "QUERY", asked: "abc.com MX"},
		{name: "no answer: empty", fail: true, body: `log local0. "<[RESOLVER::name_lookup r1 abc.com a]>"`, logs: "<>", asked: "abc.com A"},
		{name: "unknown resolver", body: `RESOLVER::name_lookup nosuch abc.com a`, err: "no net dns-resolver nosuch"},
		{name: "bad type", body: `RESOLVER::name_lookup r1 abc.com bogus`, err: `unknown record type "bogus"`},
		{name: "not a message", body: `DNSMSG::header hello rcode`, err: "not a dns_message"},
		{name: "bad field", body: `DNSMSG::header [RESOLVER::name_lookup r1 abc.com a] flags`, err: `unknown field "flags"`, asked: "abc.com A"},
		{name: "bad section", body: `DNSMSG::section [RESOLVER::name_lookup r1 abc.com a] extra`, err: `unknown section "extra"`, asked: "abc.com A"},
		{name: "bad record field", body: `DNSMSG::record "a.b. 1 IN A 192.0.2.1" name`, err: `unknown field "name"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var logs []string
			res := &msgResolver{m: ans}
			if c.fail {
				res.m = nil
			}
			env := &Env{
				Log: func(facility, line string) {
					if facility == "local0.info" || strings.HasPrefix(facility, "local0.") && !strings.HasSuffix(facility, "warning") {
						logs = append(logs, line[strings.Index(line, ": ")+2:])
					}
				},
				NetResolver: func(name string) (MsgResolver, bool) { return res, name == "/Common/r1" },
			}
			r := mustCompile(t, "/Common/r", "when CLIENT_ACCEPTED {\n"+c.body+"\n}")
			s := NewProgram(env, r).NewConnState(newFakeConn())
			defer s.Release()
			err := s.Run(ClientAccepted)
			if (err != nil) != (c.err != "") || err != nil && !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want %q", err, c.err)
			}
			if got := strings.Join(logs, "\n"); c.err == "" && got != c.logs {
				t.Errorf("logs %q, want %q", got, c.logs)
			}
			if res.asked != c.asked {
				t.Errorf("asked %q, want %q", res.asked, c.asked)
			}
		})
	}
}
