package dataplane

import (
	"testing"
)

// BenchmarkConnectionRules opens a new proxied connection per round trip,
// as BenchmarkConnectionPerRequest does, through a virtual without rules,
// with seed 002's routing rule (CLIENT_ACCEPTED picks a pool by local
// port), and with a collecting rule (delayed binding: CLIENT_DATA looks at
// the first bytes, then releases them). The difference in ns/op is what a
// rule adds per connection; allocations include the client's own.
func BenchmarkConnectionRules(b *testing.B) {
	echoBackend(b, "127.0.76.2:9000")
	for i, bc := range []struct{ name, rule string }{
		{"none", ""},
		{"route", `when CLIENT_ACCEPTED {
    if { [TCP::local_port] >= 8000 and [TCP::local_port] < 8500 } {
        pool WSH_1_pool
    } elseif { [TCP::local_port] >= 8500 and [TCP::local_port] < 9000 } {
        pool WSH_2_pool
    } else {
        drop
    }
}`},
		{"collect", `when CLIENT_ACCEPTED { TCP::collect }
when CLIENT_DATA {
    if { [TCP::payload] starts_with "x" } { pool WSH_2_pool }
    TCP::release
}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			vs := "127.0.76." + string(rune('3'+i)) + ":8000"
			cfg := basic(vs, "127.0.76.2:9000")
			withPool(cfg, "/Common/WSH_1_pool", "127.0.76.2:9000")
			withPool(cfg, "/Common/WSH_2_pool", "127.0.76.2:9000")
			if bc.rule != "" {
				cfg.Virtuals["/Common/vs"].Rules, _ = compileRules(b, bc.rule)
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
