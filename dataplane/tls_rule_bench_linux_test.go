//go:build linux

package dataplane

import (
	"io"
	"log/slog"
	"testing"
)

// BenchmarkTLSKeepAliveAcceptedRule sends requests one after the other
// on one keep-alive TLS connection through a standard client-ssl virtual
// whose rule handles CLIENT_ACCEPTED: alone (the flow runs on an event
// loop), and with an empty CLIENT_CLOSED beside it (a goroutine flow, as
// every flow of a virtual with rules was before). allocs/op is per
// request and includes the client's TLS.
func BenchmarkTLSKeepAliveAcceptedRule(b *testing.B) {
	benchHTTPMember(b, "127.0.135.11:80")
	cert, key, roots := testCert(b, "bench.example")
	for i, tc := range []struct{ name, rule string }{
		{"loop", `when CLIENT_ACCEPTED { set x 1 }`},
		{"goroutines", `when CLIENT_ACCEPTED { set x 1 }
when CLIENT_CLOSED { }`},
	} {
		vs := "127.0.135." + string(rune('1'+i)) + ":443"
		b.Run(tc.name, func(b *testing.B) {
			cfg := basic(vs, "127.0.135.11:80")
			cfg.Virtuals["/Common/vs"].TLS = clientSSL(b, cert, key)
			cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(b, tc.rule)
			p := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			b.Cleanup(p.Close)
			if err := p.Apply(nil, cfg); err != nil {
				b.Fatal(err)
			}
			round := tlsKeepAliveClient(b, vs, roots)
			if onLoop := loopsBusy(p); onLoop != (tc.name == "loop") {
				b.Fatalf("on the event loops: %v", onLoop)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				round()
			}
		})
	}
}
