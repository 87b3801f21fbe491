package reqlog

import (
	"net/netip"
	"testing"
	"time"
)

// FuzzTemplate parses arbitrary templates and expands them over
// arbitrary heads: no panic, and the literal text of a template without
// `$` comes out unchanged.
func FuzzTemplate(f *testing.F) {
	f.Add("$CLIENT_IP \"$HTTP_REQUEST\" ${User-agent} $DATE_NCSA", "GET / HTTP/1.1\r\nUser-Agent: x\r\n\r\n", "HTTP/1.1 200 OK\r\n\r\n")
	f.Add("${", "G", "")
	f.Add("$$HTTP_STATUS$", "\r\n", "HTTP/1.1\r\n")
	f.Fuzz(func(t *testing.T, tmpl, req, resp string) {
		r := &Record{Client: netip.MustParseAddrPort("192.0.2.1:1"), Request: []byte(req), Now: time.Unix(1, 0)}
		if resp != "" {
			r.Response = []byte(resp)
		}
		out := Parse(tmpl).Append(nil, r)
		if !containsDollar(tmpl) && string(out) != tmpl {
			t.Fatalf("literal template %q came out %q", tmpl, out)
		}
	})
}

func containsDollar(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '$' {
			return true
		}
	}
	return false
}
