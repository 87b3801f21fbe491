package tcl

import "testing"

// speedCommands is a table with the iRules commands the benchmark rules
// use, doing nothing but return fixed values, so that the benchmarks
// measure the interpreter alone.
func speedCommands() *Commands {
	t := NewCommands()
	ret := func(v Value) CmdFunc {
		return func(in *Interp, args []Value) (Value, error) { return v, nil }
	}
	t.Register("HTTP::host", ret(Str("www.example.com")))
	t.Register("HTTP::path", ret(Str("/app/v1/items.json")))
	t.Register("IP::client_addr", ret(Str("127.0.0.9")))
	t.Register("TCP::local_port", ret(Int(10100)))
	for _, n := range []string{"pool", "drop", "HTTP::header", "TCP::release", "TCP::notify", "TCP::collect"} {
		t.Register(n, ret(Empty))
	}
	return t
}

var speedRules = []struct{ name, text string }{
	{"HTTPRouting", `
  switch -glob [string tolower [HTTP::host]] {
    "api.*" { pool api_pool }
    "www.example.com*" {
      if { [HTTP::path] starts_with "/app/" } { pool app_pool } else { pool web_pool }
    }
    default { pool default_pool }
  }
  HTTP::header replace X-Forwarded-For [IP::client_addr]`},
	{"PortRouting", `
  if { [TCP::local_port] >= 10000 && [TCP::local_port] < 10500 } {
    pool WSH_1_pool
  } elseif { [TCP::local_port] >= 10500 && [TCP::local_port] < 11000 } {
    pool WSH_2_pool
  } else {
    drop
  }`},
	{"SeedData", `
  TCP::release
  TCP::notify request
  TCP::collect`},
}

// BenchmarkRuleBodies runs the bodies of the rules in rules' benchmarks
// (the HTTP routing rule, the port routing rule, the message seed's
// CLIENT_DATA) with host commands that do nothing.
func BenchmarkRuleBodies(b *testing.B) {
	cmds := speedCommands()
	for _, r := range speedRules {
		b.Run(r.name, func(b *testing.B) {
			s, err := CompileWith(cmds, nil, r.name, r.text)
			if err != nil {
				b.Fatal(err)
			}
			in := NewInterp(cmds)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := in.Eval(s); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
