package rules

import "testing"

// BenchmarkIfileMaintenancePage is the published maintenance page rule:
// one request answered from an iFile (the content's Tcl value is made
// once per commit, so ifile get itself allocates nothing).
func BenchmarkIfileMaintenancePage(b *testing.B) {
	r := mustCompile(b, "/Common/r", `when HTTP_REQUEST {
  if { [active_members web_pool] < 1 } {
    HTTP::respond 503 content [ifile get maint.html] Content-Type "text/html"
  }
}`)
	benchPublished(b, r)
}

// BenchmarkHSLSend is one HSL::send of a request line per request.
func BenchmarkHSLSend(b *testing.B) {
	r := mustCompile(b, "/Common/r", `when HTTP_REQUEST {
  HSL::send [HSL::open -proto UDP -pool syslog_pool] "<190>[IP::client_addr] [HTTP::method] [HTTP::uri]\n"
}`)
	benchPublished(b, r)
}

func benchPublished(b *testing.B, r *Rule) {
	b.Helper()
	env := publishedEnv(b, &logSink{}, hslDiscard{})
	p := NewProgram(env, r)
	f := newHTTPFake(b, testRequest, "")
	f.members["web_pool"] = nil
	s := p.NewConnState(quietHTTP{f})
	defer s.Release()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if err := s.Run(HTTPRequest); err != nil {
			b.Fatal(err)
		}
		f.calls = f.calls[:0]
		f.actions = f.actions[:0]
		s.respondedTo = 0
	}
}

// quietHTTP keeps the actions without formatting them, so the benchmark
// measures the rule rather than the fake.
type quietHTTP struct{ *httpFake }

func (q quietHTTP) HTTPDo(a HTTPAction) error {
	q.actions = append(q.actions, a)
	return nil
}

// hslDiscard is an HSL sender that keeps nothing.
type hslDiscard struct{}

func (hslDiscard) Open(proto, pool string) (string, error) { return "hsl:" + proto + ":" + pool, nil }
func (hslDiscard) Send(string, []byte) (bool, error)       { return true, nil }
